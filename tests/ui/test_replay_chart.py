"""``batchd replay --gantt``: a finished replay's chart as one self-contained page."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest

from batchd.cli import main
from batchd.model.job import Job
from batchd.model.states import JobState
from batchd.ui.page import json_for_script, standalone_page
from batchd.ui.replay_chart import replay_chart
from browser import browser_or_skip, chromium

HOSTILE = "</script><script>window.pwned=1</script><img src=x onerror=alert(1)>"


def finished(
    seq: int, start: int, end: int, nodes: list[int], name: str = "", user: str = "1"
) -> Job:
    job = Job(id=seq, submit=0, width=len(nodes), estimate=end - start, runtime=end - start)
    job.name, job.user, job.start, job.end, job.units = name, user, start, end, nodes
    job.state = JobState.FINISHED
    return job


def chart_page(tmp_path: Path) -> Path:
    jobs = [
        finished(1, 0, 7200, [0, 1, 2, 3], name=HOSTILE, user=HOSTILE),
        finished(2, 600, 4000, [4, 5, 6], name="plain"),
        finished(3, 7200, 9000, [0, 1, 6, 7], name="split"),
    ]
    data = replay_chart(jobs, [("cluster", 8)], {"policy": "fcfs-easy", "jobs": 3}, title="t")
    path = tmp_path / "chart.html"
    path.write_text(standalone_page(data))
    return path


def test_embedded_json_cannot_end_its_script_element() -> None:
    text = json_for_script({"name": HOSTILE, "amp": "a&b"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"name": HOSTILE, "amp": "a&b"}


def test_the_page_holds_its_files_and_allows_only_its_own_script(tmp_path: Path) -> None:
    html = chart_page(tmp_path).read_text()
    assert "<script src" not in html and "<link" not in html.replace(
        '<link rel="icon" href="data:,">', ""
    )
    # nothing fetched from elsewhere (the SVG namespace is a name, not a fetch)
    fetched = html.replace("http://www.w3.org/2000/svg", "")
    assert "http://" not in fetched and "https://" not in fetched and "//" + "cdn" not in fetched
    [script] = re.findall(r"<script>(.*?)</script>", html, re.S)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert csp is not None
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}';" in csp[1]
    assert "unsafe" not in csp[1]
    # The hostile name is in the data only, escaped: no element of the page holds it.
    assert HOSTILE not in html
    data = re.search(r'<script type="application/json" id="batchd-data">(.*?)</script>', html, re.S)
    assert data is not None and json.loads(data[1])["info"][0][1] == HOSTILE


def test_the_chart_draws_every_job_and_runs_no_name(tmp_path: Path) -> None:
    browser_or_skip()
    path = chart_page(tmp_path)
    with chromium(1200, 800) as driver:
        driver.get(path.as_uri())
        drawn = driver.execute_script(
            "return [...document.querySelectorAll('#gantt g.job')].map(g => "
            "[g.getAttribute('data-job-id'), g.getAttribute('data-start'), "
            "g.getAttribute('data-end'), g.getAttribute('data-rows'), g.textContent])"
        )
        assert [d[:4] for d in drawn] == [
            ["1.t", "0", "7200", "0-3"],
            ["2.t", "600", "4000", "4-6"],
            ["3.t", "7200", "9000", "0-1,6-7"],
        ]
        assert HOSTILE[:20] in drawn[0][4]  # its label, cut to fit, as text
        assert driver.execute_script("return window.pwned === undefined")
        assert driver.execute_script("return document.querySelectorAll('img').length") == 0
        header = driver.execute_script("return document.getElementById('summary-text').textContent")
        assert "3 jobs" in header and "fcfs-easy" in header
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []


def test_batchd_replay_writes_the_chart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "gantt.html"
    argv = ["replay", "synthetic:40", "--nodes", "16", "--policy", "fcfs-easy", "--gantt", str(out)]
    assert main(argv) == 0
    html = out.read_text()
    data = re.search(r'id="batchd-data">(.*?)</script>', html, re.S)
    assert data is not None
    chart = json.loads(data[1])
    assert chart["mode"] == "replay" and len(chart["jobs"]) == 40
    assert all(row[1] == "F" and row[6] > row[5] for row in chart["jobs"])
    assert chart["machines"][0]["nodes"] == 16
    assert "utilization" in capsys.readouterr().out


def test_an_unwritable_gantt_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "missing" / "gantt.html"
    code = main(
        ["replay", "synthetic:5", "--nodes", "4", "--policy", "fcfs", "--gantt", str(target)]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "--gantt" in err and "cannot write" in err and err.count("\n") == 1
