"""What every request needs: JSON errors, the caller's identity, committed state."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

import structlog
from aiohttp import web

from batchd.server.auth import is_open, is_page, peer_user
from batchd.server.authguard import guarded_token_user
from batchd.server.errors import ApiError
from batchd.server.keys import AUTH_GUARD, CALLER, SERVICE, TOKENS

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

log = structlog.get_logger("batchd")


def _error(status: int, code: str, message: str) -> web.Response:
    body = json.dumps({"error": code, "message": message}, separators=(",", ":"))
    return web.Response(body=body.encode(), status=status, content_type="application/json")


_HTTP_CODES = {
    404: "not_found",
    405: "method_not_allowed",
    413: "too_large",
    400: "bad_request",
}


@web.middleware
async def errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ApiError as exc:
        response = _error(exc.status, exc.code, exc.message)
        response.headers.update(exc.headers)
        return response
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        code = _HTTP_CODES.get(exc.status, "bad_request")
        if exc.status == 413:
            limit = request.app[SERVICE].site.server.max_body
            message = f"the request body is larger than {limit} bytes"
        elif exc.status == 404:
            message = f"no such path: {request.path}"
        elif exc.status == 405:
            message = f"{request.method} is not allowed on {request.path}"
        else:
            message = exc.text or exc.reason
        response = _error(exc.status, code, message)
        if isinstance(exc, web.HTTPMethodNotAllowed):
            response.headers["Allow"] = ", ".join(sorted(exc.allowed_methods))
        return response
    except Exception:
        log.exception("request_failed", method=request.method, path=request.path)
        return _error(500, "internal", "the daemon failed on this request; see its log")


@web.middleware
async def identity(request: web.Request, handler: Handler) -> web.StreamResponse:
    if not is_open(request.path):
        user = peer_user(request)
        if user is None:
            user = await guarded_token_user(request, request.app[TOKENS], request.app[AUTH_GUARD])
        request[CALLER] = request.app[SERVICE].caller(user)
    return await handler(request)


@web.middleware
async def committed(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every request sees the engine at the clock's now, with all of it saved (or waiting
    for the next try while the state file takes no writes: a read answers all the same);
    the now its answer shows is saved before the answer leaves."""
    if request.path == "/openapi.json" or is_page(request.path):
        return await handler(request)  # nothing of the state is read
    svc = request.app[SERVICE]
    svc.catch_up()
    response = await handler(request)
    svc.save_clock()
    return response
