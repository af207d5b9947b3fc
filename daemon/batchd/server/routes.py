"""The API's routes: each handler parses, calls the service, and answers with a view.

Handlers never catch up the engine or commit: the ``committed`` middleware has
done that before any handler runs, and the service commits each change before
it returns.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any, TypeVar

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, ValidationError

from batchd.server import listing, views
from batchd.server.admin_schemas import ReservationCreate, SchedulerChange, ServerChange
from batchd.server.cmd_schemas import MoveRequest, QueueChange, QueueCreate, SignalRequest
from batchd.server.errors import ApiError, bad_request
from batchd.server.keys import CALLER, PLAN_FEED, REGISTRY, SERVICE
from batchd.server.node_schemas import NodeChange
from batchd.server.openapi import (
    SiteNames,
    job_id_pattern,
    openapi_document,
    reservation_id_pattern,
)
from batchd.server.planfeed import answer_steps, etag_matches, in_steps, parse_since
from batchd.server.records import parse_job_id
from batchd.server.schemas import HoldRequest, JobAlter, JobSubmit
from batchd.server.service import Caller, trial
from batchd.server.service import operations as op
from batchd.server.service.access import may_see
from batchd.server.service.kernels import loaded
from batchd.server.service.queue_admin import unknown_queue
from batchd.server.visibility import shown

Model = TypeVar("Model", bound=BaseModel)


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(
        body=json.dumps(data, separators=(",", ":")).encode(),
        status=status,
        content_type="application/json",
    )


def _caller(request: web.Request) -> Caller:
    return request[CALLER]


def _job_ref(request: web.Request) -> str:
    """The job id of the path, as the document's pattern says it may be written."""
    text = request.match_info["id"]
    server = request.app[SERVICE].server
    if not re.fullmatch(job_id_pattern(server), text):
        try:
            parse_job_id(text, server)  # for its message about another server's id
        except ValueError as exc:
            raise bad_request(str(exc)) from None
        raise bad_request(f"{text!r} is not a job id (SEQ or SEQ.{server})")
    return text


def _resv_ref(request: web.Request) -> str:
    text = request.match_info["id"]
    server = request.app[SERVICE].server
    if not re.fullmatch(reservation_id_pattern(server), text):
        raise bad_request(f"{text!r} is not a reservation id (R<seq>.{server})")
    return text


# No body of the API nests deeper than 2; JSON nested deeper than this is refused
# before it reaches a model (the parser itself would fail with a RecursionError).
MAX_DEPTH = 32
TOO_DEEP = f"the request body nests arrays and objects deeper than {MAX_DEPTH} levels"


def nesting_depth(data: Any, limit: int = MAX_DEPTH) -> int:
    """How deep arrays and objects nest in ``data`` (a scalar: 0), counted up to ``limit + 1``."""
    depth = 0
    level = [data]
    while depth <= limit:
        containers = [x for x in level if isinstance(x, dict | list)]
        if not containers:
            break
        depth += 1
        level = [v for c in containers for v in (c.values() if isinstance(c, dict) else c)]
    return depth


def _number(text: str) -> int | float:
    """A JSON number with a fraction or exponent: an int when it is whole, as JSON Schema
    counts 4.0 an integer (the models refuse 4.5 where an integer is due)."""
    value = float(text)
    return int(value) if value.is_integer() else value


def parse_json(raw: bytes) -> Any:
    """The JSON of a request body, or a 400 that says what is wrong with it."""
    try:
        data = json.loads(raw or b"{}", parse_float=_number)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise bad_request("the request body is not valid JSON") from None
    except RecursionError:
        raise bad_request(TOO_DEEP) from None
    if nesting_depth(data) > MAX_DEPTH:
        raise bad_request(TOO_DEEP)
    return data


async def _body(request: web.Request, model: type[Model], required: bool = True) -> Model:
    raw = await request.read()
    if required and not raw:
        raise bad_request("the request needs a JSON object as its body ({} for all defaults)")
    data = parse_json(raw)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise bad_request(validation_message(exc)) from None


def validation_message(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = [str(p) for p in err["loc"]]
    if len(loc) >= 2 and loc[-1] == "[key]":  # a key of a mapping (variables, params)
        loc = [*loc[:-2], f"key {loc[-2]!r}"]
    where = ".".join(loc) or "body"
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        msg = "unknown field"
    elif err["type"] == "missing":
        msg = "required"
    return f"{where}: {msg}"


routes = web.RouteTableDef()


@routes.get("/healthz")
async def healthz(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    return _json({"status": "ok", "now": svc.now})


@routes.get("/metrics")
async def metrics(request: web.Request) -> web.Response:
    body = generate_latest(request.app[REGISTRY])
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})


@routes.get("/openapi.json")
async def openapi(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    names = SiteNames(
        server=svc.server,
        machines=tuple(m.name for m in svc.site.machine),
        queues=tuple(svc.queue_names()),
        policies=tuple(p["name"] for p in svc.scheduler.catalog()),
        widest=svc.widest_job(),
    )
    return _json(openapi_document(names))


@routes.get("/server")
async def server(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    return _json(views.server_out(svc))


@routes.post("/jobs")
async def submit(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    body = await _body(request, JobSubmit)
    rec = op.jobs.submit(svc, _caller(request), body)
    return _json(views.job_out(svc, rec, svc.plan_of(rec)), 201)


@routes.post("/plan")
async def try_submit(request: web.Request) -> web.Response:
    """sbatch --test-only: the job validated and planned as if submitted; nothing changes."""
    svc = request.app[SERVICE]
    body = await _body(request, JobSubmit)
    return _json(trial.try_submit(svc, _caller(request), body))


@routes.patch("/server")
async def set_server(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    body = await _body(request, ServerChange)
    op.server_attrs.set_server(svc, _caller(request), body)
    return _json(views.server_out(svc))


@routes.get("/jobs")
async def list_jobs(request: web.Request) -> web.StreamResponse:
    """One page with ``limit``; without it every job, sent in chunks as they are read."""
    svc = request.app[SERVICE]
    caller = _caller(request)
    query, after, limit = listing.parse(svc, request.query, caller)
    pages = listing.Pages(svc, query, caller)
    head = f'{{"server":{json.dumps(svc.server)},"now":{svc.now},"jobs":['
    if limit is not None:
        texts: list[str] = []
        cursor: int | None = None
        for part, cursor_after in pages.parts(after, limit):
            texts += part
            cursor = cursor_after
            await asyncio.sleep(0)  # other requests go on between two parts
        tail = f'],"next":{"null" if cursor is None else cursor}}}'
        return web.Response(
            body=(head + ",".join(texts) + tail).encode(), content_type="application/json"
        )
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    await response.prepare(request)
    sep = ""
    try:
        await response.write(head.encode())
        for texts in pages.chunks(after):
            if texts:
                await response.write((sep + ",".join(texts)).encode())
                sep = ","
            await asyncio.sleep(0)  # a write to a fast reader does not wait
        await response.write(b'],"next":null}')
        await response.write_eof()
    except ConnectionResetError:
        pass  # the client went away: nothing is left to answer
    return response


@routes.get("/jobs/{id}")
async def show_job(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    caller = _caller(request)
    rec = svc.find(_job_ref(request))
    may_see(caller, rec.owner, svc.jid(rec))
    return _json(shown(caller, views.job_out(svc, rec, svc.plan_of(rec))))


@routes.delete("/jobs/{id}")
async def delete_job(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    rec = op.jobs.delete(svc, _caller(request), _job_ref(request))
    return _json(views.job_out(svc, rec, {}))


@routes.post("/jobs/{id}/hold")
async def hold_job(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    body = await _body(request, HoldRequest, required=False)
    rec = op.jobs.hold(svc, _caller(request), _job_ref(request), body.types)
    return _json(views.job_out(svc, rec, {}))


@routes.post("/jobs/{id}/release")
async def release_job(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    body = await _body(request, HoldRequest, required=False)
    rec = op.jobs.release(svc, _caller(request), _job_ref(request), body.types)
    return _json(views.job_out(svc, rec, svc.plan_of(rec)))


@routes.patch("/jobs/{id}")
async def alter_job(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    body = await _body(request, JobAlter)
    rec = op.jobs.alter(svc, _caller(request), _job_ref(request), body)
    return _json(views.job_out(svc, rec, svc.plan_of(rec)))


@routes.post("/jobs/{id}/rerun")
async def rerun_job(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    rec = op.jobs.rerun(svc, _caller(request), _job_ref(request))
    return _json(views.job_out(svc, rec, svc.plan_of(rec)))


@routes.post("/jobs/{id}/move")
async def move_job(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    body = await _body(request, MoveRequest)
    rec = op.jobs.move(svc, _caller(request), _job_ref(request), body.queue)
    return _json(views.job_out(svc, rec, svc.plan_of(rec)))


@routes.post("/jobs/{id}/signal")
async def signal_job(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    body = await _body(request, SignalRequest, required=False)
    rec = op.jobs.signal(svc, _caller(request), _job_ref(request), body.signal, body.target)
    return _json(views.job_out(svc, rec, svc.plan_of(rec)))


@routes.get("/jobs/{id}/events")
async def job_events(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    rec, events = svc.job_events(_job_ref(request))
    may_see(_caller(request), rec.owner, svc.jid(rec))
    return _json(
        {
            "id": svc.jid(rec),
            "server": svc.server,
            "now": svc.now,
            "events": [{"time": t, "source": src, "message": msg} for t, src, msg in events],
        }
    )


@routes.get("/plan")
async def plan(request: web.Request) -> web.Response:
    """The web page's plan: 304 when the caller has the current version, else the whole
    plan or what changed since the version before (planfeed.py)."""
    svc = request.app[SERVICE]
    since = parse_since(request.query)
    feed = request.app[PLAN_FEED]
    await feed.refresh(svc)
    version = feed.current()
    headers = {"ETag": version.etag, "Cache-Control": "no-cache"}
    if etag_matches(request.headers.get("If-None-Match"), version.etag):
        return web.Response(status=304, headers=headers)
    body = await in_steps(answer_steps(svc, version, _caller(request), since))
    return web.Response(body=body, content_type="application/json", headers=headers)


@routes.get("/nodes")
async def list_nodes(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    return _json(views.node_list(svc))


@routes.get("/nodes/{name}")
async def show_node(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    where = svc.nodes.find(request.match_info["name"])
    return _json(views.node_at(svc, where))


@routes.patch("/nodes/{name}")
async def change_node(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    body = await _body(request, NodeChange)
    where = op.nodes.set_node(svc, _caller(request), request.match_info["name"], body)
    return _json(views.node_at(svc, where))


@routes.get("/queues")
async def list_queues(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    return _json(views.queue_list(svc))


@routes.get("/queues/{name}")
async def show_queue(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    return _json(views.queue_named(svc, request.match_info["name"]))


@routes.post("/queues")
async def create_queue(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    body = await _body(request, QueueCreate)
    op.queues.create_queue(svc, _caller(request), body)
    return _json(views.queue_named(svc, body.name), 201)


@routes.patch("/queues/{name}")
async def change_queue(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    body = await _body(request, QueueChange)
    name = request.match_info["name"]
    op.queues.change_queue(svc, _caller(request), name, body)
    return _json(views.queue_named(svc, name))


@routes.delete("/queues/{name}")
async def delete_queue(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    name = request.match_info["name"]
    try:
        gone = views.queue_named(svc, name)
    except ApiError:
        raise unknown_queue(name) from None
    op.queues.delete_queue(svc, _caller(request), name)
    return _json(gone)


@routes.get("/reservations")
async def list_reservations(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    return _json(views.reservation_list(svc))


@routes.post("/reservations")
async def create_reservation(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    body = await _body(request, ReservationCreate)
    resv = op.reservations.create(svc, _caller(request), body)
    return _json(views.reservation_out(svc, resv), 201)


@routes.get("/reservations/{id}")
async def show_reservation(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    return _json(views.reservation_out(svc, svc.reservations.find(_resv_ref(request))))


@routes.delete("/reservations/{id}")
async def delete_reservation(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    resv = op.reservations.delete(svc, _caller(request), _resv_ref(request))
    return _json(views.reservation_out(svc, resv))


@routes.get("/scheduler")
async def scheduler(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    return _json(views.scheduler_out(svc))


@routes.patch("/scheduler")
async def set_scheduler(request: web.Request) -> web.Response:
    svc = request.app[SERVICE]
    body = await _body(request, SchedulerChange)
    await loaded(
        op.scheduler.kernels_for(svc, _caller(request), body)
    )  # compiled and loaded off the loop
    op.scheduler.set_scheduler(svc, _caller(request), body)
    return _json(views.scheduler_out(svc))
