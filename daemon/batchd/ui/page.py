"""The page's files and its two forms: served by the daemon, or one self-contained file.

``index.html`` has four markers that each form fills: ``<!--CSP-->`` (a meta policy
for the file; the daemon sends its policy as a header), ``<!--STYLES-->``,
``<!--SCRIPTS-->`` and ``<!--DATA-->`` (a finished replay's jobs as JSON in a script
element that never runs).
"""

from __future__ import annotations

import base64
import hashlib
import json
from functools import cache
from importlib.resources import files
from typing import Any

# The scripts, in the order they load: each adds to window.BatchdUI.
SCRIPTS = (
    "dom.js",
    "store.js",
    "layout.js",
    "tooltip.js",
    "legend.js",
    "chart.js",
    "plan.js",
    "machine.js",
    "queue.js",
    "api.js",
    "main.js",
)
STYLES = ("style.css",)
ASSETS: dict[str, str] = {
    **{name: "text/javascript; charset=utf-8" for name in SCRIPTS},
    **{name: "text/css; charset=utf-8" for name in STYLES},
}

# What the served page may load and do: its own scripts and styles, requests to its
# own origin; no inline script, no frames, no forms sent anywhere.
SERVED_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
PREFIX = "/ui/"


@cache
def asset(name: str) -> bytes:
    """A file of the page (KeyError if it is none)."""
    if name not in ASSETS and name != "index.html":
        raise KeyError(name)
    return files("batchd.ui").joinpath("static", name).read_bytes()


def _fill(**parts: str) -> str:
    html = asset("index.html").decode()
    for marker, text in parts.items():
        html = html.replace(f"<!--{marker.upper()}-->", text)
    return html


@cache
def served_page() -> bytes:
    """The page ``batchd serve`` sends at /ui: its files by URL, its policy a header."""
    styles = "".join(f'<link rel="stylesheet" href="{PREFIX}{n}">' for n in STYLES)
    scripts = "\n".join(f'<script src="{PREFIX}{n}"></script>' for n in SCRIPTS)
    return _fill(csp="", styles=styles, scripts=scripts, data="").encode()


def json_for_script(data: Any) -> str:
    """JSON that can sit in a script element: ``<``, ``>`` and ``&`` as \\u escapes, so
    no text in it (``</script>`` in a job name) can end the element."""
    text = json.dumps(data, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def standalone_page(data: Any) -> str:
    """One file with the page's scripts and styles inline and ``data`` embedded. Its
    policy lets only these exact scripts and styles run (by their hashes)."""
    style = "\n".join(asset(n).decode() for n in STYLES)
    script = "\n".join(asset(n).decode() for n in SCRIPTS)
    csp = (
        f"default-src 'none'; script-src {_sha256(script)}; style-src {_sha256(style)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    return _fill(
        csp=f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
        styles=f"<style>{style}</style>",
        scripts=f"<script>{script}</script>",
        data=f'<script type="application/json" id="batchd-data">{json_for_script(data)}</script>',
    )
