"""The web page in a real browser (headless Chromium) against a running daemon.

One daemon (TCP listener with a token, real-time clock, conf/hpcline96.toml) and one
browser serve every test of this module. A 96-node job fills the machine, so every
other job waits with a planned start that does not move while the tests run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from browser import browser_or_skip, chromium
from daemon_proc import Daemon, write_tokens
from prom_server import free_port

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class Site:
    def __init__(self, daemon: Daemon, url: str, token: str, driver: Any) -> None:
        self.daemon = daemon
        self.url = url
        self.token = token
        self.driver = driver

    def submit(self, **body: Any) -> str:
        status, job = self.daemon.call("POST", "/jobs", body)
        assert status == 201, job
        return str(job["id"])

    def open(self, token: str | None = None) -> None:
        self.driver.get("about:blank")
        self.driver.get(f"{self.url}/ui#token={token or self.token}")

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def wait(self, what: Callable[[], Any], message: str, timeout: float = 10.0) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = what()
            if got:
                return got
            time.sleep(0.1)
        raise AssertionError(f"{message} (after {timeout} s)")

    def drawn(self) -> dict[str, dict[str, str]]:
        """The jobs the chart draws, by id, with their data attributes."""
        return self.js(
            """const out = {};
            for (const g of document.querySelectorAll('#gantt g.job')) {
              const a = {};
              for (const attr of g.attributes) if (attr.name.startsWith('data-')) a[attr.name] = attr.value;
              out[g.getAttribute('data-job-id')] = a;
            }
            return out;"""
        )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    browser_or_skip()
    tmp = tmp_path_factory.mktemp("live-page")
    token = write_tokens(tmp / "tokens")
    port = free_port()
    daemon = Daemon(tmp, "--listen", f"127.0.0.1:{port}", "--token-file", str(tmp / "tokens"))
    with daemon, chromium() as driver:
        s = Site(daemon, f"http://127.0.0.1:{port}", token, driver)
        s.submit(name="blocker", nodes=96, walltime="10:00:00")
        yield s


def test_the_chart_shows_the_jobs_where_the_api_plans_them(site: Site) -> None:
    for nodes, walltime in ((8, 3600), (40, 7200), (96, 600), (12, 1800)):
        site.submit(name=f"w{nodes}", nodes=nodes, walltime=walltime)
    status, listing = site.daemon.call("GET", "/jobs")
    assert status == 200
    jobs = listing["jobs"]
    site.open()
    site.wait(lambda: len(site.drawn()) >= len(jobs), "the chart did not draw every job")
    # The token left the address bar for this tab's storage.
    assert "#" not in site.driver.current_url
    assert site.js("return sessionStorage.getItem('batchd-token')") == site.token
    site.driver.find_element("id", "zoom-fit").click()
    drawn = site.drawn()
    for job in jobs:
        g = drawn[job["id"]]
        start = job["stime"] if job["state"] == "R" else job["est_start"]
        assert (g["data-state"], int(g["data-start"]), int(g["data-nodes"])) == (
            job["state"],
            start,
            job["nodes"],
        ), job["id"]
        assert int(g["data-end"]) == start + job["walltime"]
        rows = [r.split("-") for r in g["data-rows"].split(",")]
        drawn_nodes = sum(int(r[-1]) - int(r[0]) + 1 for r in rows)
        assert drawn_nodes == job["nodes"], job["id"]
    blocker = next(j for j in jobs if j["name"] == "blocker")
    assert drawn[blocker["id"]]["data-rows"] == "0-95"
    assert blocker["exec_host"][0] == "node001" and len(blocker["exec_host"]) == 96


def test_the_page_follows_a_qsub_and_a_qdel_without_reloading(site: Site) -> None:
    site.open()
    site.wait(lambda: site.drawn(), "the chart drew nothing")
    site.js("window.notReloaded = true;")
    new = site.submit(name="arrives", nodes=4, walltime=900)
    site.wait(lambda: new in site.drawn(), f"{new} did not appear")
    status, job = site.daemon.call("GET", f"/jobs/{new}")
    assert int(site.drawn()[new]["data-start"]) == job["est_start"]
    status, _ = site.daemon.call("DELETE", f"/jobs/{new}")
    assert status == 200
    site.wait(lambda: new not in site.drawn(), f"{new} was not taken away")
    assert site.js("return window.notReloaded === true")


def test_what_users_write_is_shown_as_text_and_never_runs(site: Site) -> None:
    owner = "<img src=x onerror=alert(1)>"
    name = '"><svg/onload=window.pwned=1><img/src=x/onerror=alert(2)>'
    new = site.submit(name=name, user=owner, nodes=24, walltime="04:00:00")
    site.open()
    site.wait(lambda: new in site.drawn(), f"{new} did not appear")
    # Hovering it shows its name and owner, as text.
    from selenium.webdriver.common.action_chains import ActionChains

    site.driver.find_element("id", "find-input").send_keys(new.split(".")[0] + "\n")
    rect = site.driver.find_element("css selector", f'#gantt g.job[data-job-id="{new}"] rect')
    ActionChains(site.driver).move_to_element(rect).perform()
    tooltip = site.wait(
        lambda: site.js(
            "const t = document.getElementById('tooltip'); return t.hidden ? '' : t.textContent"
        ),
        "no tooltip",
    )
    assert name in tooltip and owner in tooltip
    site.driver.find_element("css selector", '.tab[data-view="queue"]').click()
    cells = site.js(
        "return [...document.querySelectorAll(`tr[data-job-id='${arguments[0]}'] td`)].map(td => td.textContent)",
        new,
    )
    assert name in cells and owner in cells
    assert site.js("return document.querySelectorAll('img').length") == 0
    handlers = site.js(
        "return [...document.querySelectorAll('*')].filter("
        "e => [...e.attributes].some(a => a.name.startsWith('on'))).length"
    )
    assert handlers == 0
    assert site.js("return window.pwned === undefined")
    from selenium.common.exceptions import NoAlertPresentException

    with pytest.raises(NoAlertPresentException):
        _ = site.driver.switch_to.alert.text
    site.daemon.call("DELETE", f"/jobs/{new}")


def test_a_wrong_token_is_refused(site: Site) -> None:
    site.open(token="not-the-right-token-0000")
    error = site.wait(
        lambda: site.js("return document.getElementById('login-error').textContent"),
        "no refusal shown",
    )
    assert "refused" in error and "not valid" in error
    assert site.js("return document.getElementById('app').hidden") is True
    assert site.js("return document.getElementById('login').hidden") is False
    assert site.js("return sessionStorage.getItem('batchd-token')") is None
    assert site.js("return document.querySelectorAll('#gantt g.job').length") == 0
    # A "token" no header can carry is refused before it is sent.
    site.open(token="two%0Alines")
    error = site.wait(
        lambda: site.js("return document.getElementById('login-error').textContent"),
        "no refusal shown",
    )
    assert error.startswith("That is not a token")


def test_the_token_form_opens_the_page(site: Site) -> None:
    site.driver.get(f"{site.url}/ui")
    site.js("sessionStorage.clear()")  # forget a token an earlier test gave this tab
    site.driver.get("about:blank")
    site.driver.get(f"{site.url}/ui")
    site.wait(lambda: site.js("return !document.getElementById('login').hidden"), "no form")
    site.driver.find_element("id", "token-input").send_keys(site.token + "\n")
    site.wait(lambda: site.drawn(), "the chart drew nothing after the token was given")
    assert site.js("return document.getElementById('caller-text').textContent").endswith(
        "(manager)"
    )
