"""/ui: the web page and its files, open to anyone, under a strict Content-Security-Policy."""

from __future__ import annotations

import fnmatch
import tomllib
from html.parser import HTMLParser
from pathlib import Path

from yarl import URL

from api_helpers import serve
from batchd.ui.page import ASSETS, SCRIPTS, SERVED_CSP
from paths import ROOT


class Tags(HTMLParser):
    """Every start tag of a page, with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


async def test_the_page_is_served_without_a_token_and_runs_only_its_own_files(
    tmp_path: Path,
) -> None:
    async with serve(tmp_path) as api:
        resp = await api.client.get("/ui")
        assert resp.status == 200 and resp.content_type == "text/html"
        csp = resp.headers["Content-Security-Policy"]
        assert csp == SERVED_CSP
        policy = dict(part.strip().split(" ", 1) for part in csp.split(";"))
        assert policy["script-src"] == "'self'" and policy["default-src"] == "'none'"
        assert "unsafe" not in csp and policy["frame-ancestors"] == "'none'"
        assert resp.headers["X-Content-Type-Options"] == "nosniff"
        parser = Tags()
        parser.feed(await resp.text())
        scripts = [attrs for tag, attrs in parser.tags if tag == "script"]
        assert [s["src"] for s in scripts] == [f"/ui/{name}" for name in SCRIPTS]
        # no inline event handlers anywhere
        assert not [a for _, attrs in parser.tags for a in attrs if a.startswith("on")]
        for name, kind in ASSETS.items():
            got = await api.client.get(f"/ui/{name}")
            assert got.status == 200, name
            assert got.headers["Content-Type"] == kind
            assert got.headers["Content-Security-Policy"] == SERVED_CSP
        await api.error(None, "GET", "/ui/secret.txt", status=404, code="not_found", says="secret")
        escape = await api.client.get(URL("/ui/..%2Fstate.db", encoded=True))
        assert escape.status == 404 and (await escape.json())["error"] == "not_found"


def test_scripts_never_write_markup() -> None:
    """Text users wrote reaches the page through textContent and attributes only."""
    static = ROOT / "daemon" / "batchd" / "ui" / "static"
    for path in static.glob("*.js"):
        text = path.read_text()
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
            assert sink not in text, f"{path.name} uses {sink}"


def test_the_page_files_are_package_data() -> None:
    """pyproject.toml ships every file of the page, in an installed (not editable) package."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    globs = config["tool"]["setuptools"]["package-data"]["batchd.ui"]
    for name in [*ASSETS, "index.html"]:
        assert any(fnmatch.fnmatch(f"static/{name}", g) for g in globs), name
        assert (ROOT / "daemon" / "batchd" / "ui" / "static" / name).is_file(), name
    static = ROOT / "daemon" / "batchd" / "ui" / "static"
    shipped = {p.name for p in static.iterdir()}
    assert shipped == {*ASSETS, "index.html"}, "a file of static/ that the page does not use"


async def test_the_root_leads_to_the_page_without_a_token(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        resp = await api.client.get("/", allow_redirects=False)
        assert resp.status == 302 and resp.headers["Location"] == "/ui"
        followed = await api.client.get("/")
        assert followed.status == 200 and followed.url.path == "/ui"
