"""``/ui``: the web page and its files (batchd.ui), open to anyone like /healthz.

The page holds no data: its scripts read ``GET /plan`` with the caller's token. Every
file goes out with a Content-Security-Policy that lets the page run its own scripts
only (no inline script), so that even a mistake could not run text a user wrote.
"""

from __future__ import annotations

from aiohttp import web

from batchd.server.auth import PAGE_PATH
from batchd.server.errors import ApiError
from batchd.ui.page import ASSETS, SERVED_CSP, asset, served_page

PAGE_HEADERS = {
    "Content-Security-Policy": SERVED_CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-cache",
}

routes = web.RouteTableDef()


@routes.get("/")
async def root(request: web.Request) -> web.Response:
    """The listener's root leads to the page, as a browser pointed at it expects."""
    raise web.HTTPFound(PAGE_PATH)


@routes.get(PAGE_PATH)
async def page(request: web.Request) -> web.Response:
    return web.Response(
        body=served_page(), content_type="text/html", charset="utf-8", headers=PAGE_HEADERS
    )


@routes.get(PAGE_PATH + "/{name}")
async def page_file(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    kind = ASSETS.get(name)
    if kind is None:
        raise ApiError(404, "not_found", f"no such file of the page: {name!r}")
    return web.Response(body=asset(name), headers={**PAGE_HEADERS, "Content-Type": kind})
