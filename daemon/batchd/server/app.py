"""The aiohttp application: routes, identity, JSON errors. Tests build it through ``create_app``."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import structlog
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, ValidationError

from batchd.metrics.exporter import make_registry
from batchd.server import views
from batchd.server.auth import OPEN_PATHS, peer_user, token_user
from batchd.server.errors import ApiError, bad_request
from batchd.server.openapi import openapi_document
from batchd.server.schemas import (
    HoldRequest,
    JobAlter,
    JobSubmit,
    NodeChange,
    ReservationCreate,
    SchedulerChange,
)
from batchd.server.service import BatchService, Caller

SERVICE = web.AppKey("service", BatchService)
TOKENS = web.AppKey("tokens", dict)
CALLER = web.RequestKey("caller", Caller)
Model = TypeVar("Model", bound=BaseModel)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

log = structlog.get_logger("batchd")


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(
        body=json.dumps(data, separators=(",", ":")).encode(),
        status=status,
        content_type="application/json",
    )


def _error(status: int, code: str, message: str) -> web.Response:
    return _json({"error": code, "message": message}, status)


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
        return _error(exc.status, exc.code, exc.message)
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
        return _error(exc.status, code, message)
    except Exception:
        log.exception("request_failed", method=request.method, path=request.path)
        return _error(500, "internal", "the daemon failed on this request; see its log")


@web.middleware
async def identity(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.path not in OPEN_PATHS:
        user = peer_user(request)
        if user is None:
            user = token_user(request, request.app[TOKENS])
        request[CALLER] = request.app[SERVICE].caller(user)
    return await handler(request)


def _caller(request: web.Request) -> Caller:
    return request[CALLER]


async def _body(request: web.Request, model: type[Model]) -> Model:
    raw = await request.read()
    try:
        data = json.loads(raw or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise bad_request("the request body is not valid JSON") from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise bad_request(validation_message(exc)) from None


def validation_message(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "body"
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        msg = "unknown field"
    elif err["type"] == "missing":
        msg = "required"
    return f"{where}: {msg}"


def _flag(value: str | None, name: str) -> bool:
    if value is None:
        return False
    if value.lower() in ("1", "true", "yes"):
        return True
    if value.lower() in ("0", "false", "no"):
        return False
    raise bad_request(f"{name}: expected true or false, got {value!r}")


routes = web.RouteTableDef()


@routes.get("/healthz")
async def healthz(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    svc.sync()
    return _json({"status": "ok", "now": svc.now})


@routes.get("/metrics")
async def metrics(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    svc.sync()
    body = generate_latest(request.app[REGISTRY])
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})


@routes.get("/openapi.json")
async def openapi(request: web.Request) -> web.Response:
    return _json(openapi_document())


@routes.get("/server")
async def server(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    svc.sync()
    return _json(views.server_out(svc))


@routes.post("/jobs")
async def submit(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    body = await _body(request, JobSubmit)
    rec = svc.submit(_caller(request), body)
    return _json(views.job_out(svc, rec, svc.planned_starts()), 201)


@routes.get("/jobs")
async def list_jobs(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    q = request.query
    known = {"user", "state", "queue", "history"}
    extra = set(q) - known
    if extra:
        raise bad_request(
            f"unknown query parameter {sorted(extra)[0]!r}; use {', '.join(sorted(known))}"
        )
    recs = svc.jobs(
        user=q.get("user"),
        states=q.get("state"),
        queue=q.get("queue"),
        history=_flag(q.get("history"), "history"),
    )
    return _json(views.job_list(svc, recs))


@routes.get("/jobs/{id}")
async def show_job(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    svc.sync()
    rec = svc.find(request.match_info["id"])
    return _json(views.job_out(svc, rec, svc.planned_starts()))


@routes.delete("/jobs/{id}")
async def delete_job(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    rec = svc.delete(_caller(request), request.match_info["id"])
    return _json(views.job_out(svc, rec, {}))


@routes.post("/jobs/{id}/hold")
async def hold_job(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    body = await _body(request, HoldRequest)
    rec = svc.hold(_caller(request), request.match_info["id"], body.types)
    return _json(views.job_out(svc, rec, {}))


@routes.post("/jobs/{id}/release")
async def release_job(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    body = await _body(request, HoldRequest)
    rec = svc.release(_caller(request), request.match_info["id"], body.types)
    return _json(views.job_out(svc, rec, svc.planned_starts()))


@routes.patch("/jobs/{id}")
async def alter_job(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    body = await _body(request, JobAlter)
    rec = svc.alter(_caller(request), request.match_info["id"], body)
    return _json(views.job_out(svc, rec, svc.planned_starts()))


@routes.get("/nodes")
async def list_nodes(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    svc.sync()
    return _json(views.node_list(svc))


@routes.get("/nodes/{name}")
async def show_node(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    svc.sync()
    index = svc.node(request.match_info["name"])
    return _json(views.node_out(svc, index, svc.holders()))


@routes.patch("/nodes/{name}")
async def change_node(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    body = await _body(request, NodeChange)
    index = svc.set_node(_caller(request), request.match_info["name"], body)
    return _json(views.node_out(svc, index, svc.holders()))


@routes.get("/queues")
async def list_queues(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    svc.sync()
    return _json(views.queue_list(svc))


@routes.get("/queues/{name}")
async def show_queue(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    svc.sync()
    name = request.match_info["name"]
    for q in views.queue_list(svc)["queues"]:
        if q["name"] == name:
            return _json(q)
    raise ApiError(404, "not_found", f"Unknown queue {name!r}")


@routes.get("/reservations")
async def list_reservations(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    svc.sync()
    return _json(views.reservation_list(svc))


@routes.post("/reservations")
async def create_reservation(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    body = await _body(request, ReservationCreate)
    resv = svc.create_reservation(_caller(request), body)
    return _json(views.reservation_out(svc, resv), 201)


@routes.get("/reservations/{id}")
async def show_reservation(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    svc.sync()
    return _json(views.reservation_out(svc, svc.find_reservation(request.match_info["id"])))


@routes.delete("/reservations/{id}")
async def delete_reservation(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    resv = svc.delete_reservation(_caller(request), request.match_info["id"])
    return _json(views.reservation_out(svc, resv))


@routes.get("/scheduler")
async def scheduler(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    svc.sync()
    return _json(views.scheduler_out(svc))


@routes.patch("/scheduler")
async def set_scheduler(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    body = await _body(request, SchedulerChange)
    svc.set_scheduler(_caller(request), body)
    return _json(views.scheduler_out(svc))


REGISTRY = web.AppKey("registry", object)


def create_app(svc: BatchService, tokens: dict[str, str] | None = None) -> web.Application:
    """The API over ``svc``; TCP callers need one of ``tokens`` (token -> user)."""
    app = web.Application(middlewares=[errors, identity], client_max_size=svc.site.server.max_body)
    app[SERVICE] = svc
    app[TOKENS] = dict(tokens or {})
    app[REGISTRY] = make_registry(svc)
    app.add_routes(routes)
    return app
