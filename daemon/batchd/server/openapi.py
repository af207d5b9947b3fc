"""The OpenAPI document, generated from the route table and the pydantic models."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from batchd import __version__
from batchd.server import admin_schemas as a
from batchd.server import cmd_schemas as c
from batchd.server import node_schemas as n
from batchd.server import schema_types as b
from batchd.server import schemas as s
from batchd.server.plan_schemas import PlanOut
from batchd.server.planfeed import VERSION_PATTERN
from batchd.server.records import SEQ_DIGITS
from batchd.ui.page import ASSETS


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    summary: str
    body: type[BaseModel] | None = None
    answer: type[BaseModel] | None = None
    status: int = 200
    query: tuple[tuple[str, str, dict[str, Any]], ...] = ()  # name, description, schema
    errors: tuple[int, ...] = (400, 401, 403, 404, 405, 413)
    alt: type[BaseModel] | None = None  # another answer, as a query parameter asks
    body_required: bool = True
    media: tuple[str, ...] = ("text/plain",)  # what a route without a model answers
    description: str = ""
    not_modified: bool = False  # answers 304 to an If-None-Match naming its version


# A change of state the job or reservation is not in the state for (holding a running
# job, releasing one not held, deleting a finished one) is a 409 conflict.
WITH_CONFLICT = (400, 401, 403, 404, 405, 409, 413)

# Flags in a query take exactly these words.
FLAG_WORDS = ("true", "false", "1", "0", "yes", "no")
_FLAG = {"type": "string", "enum": list(FLAG_WORDS)}


ROUTES: tuple[Route, ...] = (
    Route("GET", "/healthz", "liveness", answer=a.Health, errors=()),
    Route("GET", "/metrics", "Prometheus metrics (text exposition format)", errors=()),
    Route("GET", "/openapi.json", "this document", errors=()),
    Route("GET", "/", "leads to the web page (302 to /ui)", status=302, errors=()),
    Route(
        "GET",
        "/ui",
        "the web page (docs/ui.md); it asks for a token",
        errors=(),
        media=("text/html",),
    ),
    Route(
        "GET",
        "/ui/{name}",
        "a file of the web page",
        errors=(404, 405),
        media=("text/javascript", "text/css"),
    ),
    Route("GET", "/server", "server attributes (qmgr list server)", answer=a.ServerOut),
    Route(
        "PATCH", "/server", "set server attributes (qmgr set server)", a.ServerChange, a.ServerOut
    ),
    Route(
        "POST",
        "/jobs",
        "submit a job (qsub, sbatch)",
        s.JobSubmit,
        s.JobOut,
        201,
    ),
    Route(
        "POST",
        "/plan",
        "plan a job as if submitted, submitting nothing (sbatch --test-only)",
        s.JobSubmit,
        s.TrialOut,
    ),
    Route(
        "GET",
        "/jobs",
        "list jobs in id order (qstat); with limit, one page",
        answer=s.JobList,
        alt=s.JobBriefList,
        query=(
            ("user", "only these owners' jobs (comma-separated)", {"type": "string"}),
            (
                "state",
                "state letters to include, e.g. QR (B: arrays begun, X: expired subjobs)",
                {"type": "string", "pattern": "^[QHWREFBX]*$"},
            ),
            ("queue", "only this queue (404 if the site has no such queue)", {"type": "string"}),
            ("history", "true: finished jobs too (qstat -x)", _FLAG),
            ("brief", "true: each job as a JobBrief (JobBriefList)", _FLAG),
            (
                "subjobs",
                "true: each job array followed by its subjobs (qstat -t); limit counts jobs "
                "and arrays",
                _FLAG,
            ),
            (
                "limit",
                "at most this many jobs; next says where the next page starts",
                {"type": "integer", "minimum": 1, "maximum": 10_000},
            ),
            (
                "after",
                "only jobs with a greater seq: the next of the previous page",
                {"type": "integer", "minimum": 0, "maximum": 1 << 62},
            ),
        ),
    ),
    Route("GET", "/jobs/{id}", "one job (qstat -f)", answer=s.JobOut),
    Route("DELETE", "/jobs/{id}", "delete a job (qdel)", answer=s.JobOut, errors=WITH_CONFLICT),
    Route(
        "POST",
        "/jobs/{id}/hold",
        "hold a job (qhold); without a body, a user hold",
        s.HoldRequest,
        s.JobOut,
        errors=WITH_CONFLICT,
        body_required=False,
    ),
    Route(
        "POST",
        "/jobs/{id}/release",
        "release a hold (qrls); without a body, the user hold",
        s.HoldRequest,
        s.JobOut,
        errors=WITH_CONFLICT,
        body_required=False,
    ),
    Route(
        "PATCH",
        "/jobs/{id}",
        "alter a waiting job (qalter)",
        s.JobAlter,
        s.JobOut,
        errors=WITH_CONFLICT,
    ),
    Route(
        "POST",
        "/jobs/{id}/rerun",
        "requeue a running job to run again from the start (qrerun); refused for qsub -r n",
        answer=s.JobOut,
        errors=WITH_CONFLICT,
        body_required=False,
    ),
    Route(
        "POST",
        "/jobs/{id}/move",
        "move a queued, held or waiting job to another queue (qmove)",
        c.MoveRequest,
        s.JobOut,
        errors=WITH_CONFLICT,
    ),
    Route(
        "POST",
        "/jobs/{id}/signal",
        "signal a running job (qsig): recorded; KILL and TERM end it; without a body, TERM",
        c.SignalRequest,
        s.JobOut,
        errors=WITH_CONFLICT,
        body_required=False,
    ),
    Route("GET", "/jobs/{id}/events", "a job's history (tracejob)", answer=c.JobEvents),
    Route(
        "GET",
        "/plan",
        "the plan the web page draws (docs/ui.md), whole or what changed since a version",
        answer=PlanOut,
        query=(
            (
                "since",
                "the version the caller has: the answer is what changed since then, when "
                "that is the current version or the one before it (else it is whole)",
                {"type": "string", "pattern": VERSION_PATTERN},
            ),
        ),
        errors=(400, 401, 405),
        description="Send If-None-Match with the version (the ETag) to get 304 and no body "
        "while nothing changed. Every role reads every job, as GET /jobs shows them.",
        not_modified=True,
    ),
    Route("GET", "/nodes", "list nodes (qnodes)", answer=n.NodeList),
    Route("GET", "/nodes/{name}", "one node", answer=n.NodeOut),
    Route("PATCH", "/nodes/{name}", "offline, online or down", n.NodeChange, n.NodeOut),
    Route("GET", "/queues", "list queues (qstat -Q)", answer=a.QueueList),
    Route("GET", "/queues/{name}", "one queue", answer=a.QueueOut),
    Route(
        "POST",
        "/queues",
        "create a queue (qmgr create queue; managers); saved across restarts",
        c.QueueCreate,
        a.QueueOut,
        201,
        errors=(400, 401, 403, 405, 409, 413),
    ),
    Route(
        "PATCH",
        "/queues/{name}",
        "set queue attributes (qmgr set queue; managers)",
        c.QueueChange,
        a.QueueOut,
        errors=WITH_CONFLICT,
    ),
    Route(
        "DELETE",
        "/queues/{name}",
        "delete a queue without unfinished jobs (qmgr delete queue; managers)",
        answer=a.QueueOut,
        errors=WITH_CONFLICT,
    ),
    Route("GET", "/reservations", "list reservations", answer=a.ReservationList),
    Route(
        "POST",
        "/reservations",
        "create a reservation",
        a.ReservationCreate,
        a.ReservationOut,
        201,
        errors=(400, 401, 403, 405, 409, 413),
    ),
    Route("GET", "/reservations/{id}", "one reservation", answer=a.ReservationOut),
    Route(
        "DELETE",
        "/reservations/{id}",
        "delete a reservation",
        answer=a.ReservationOut,
        errors=WITH_CONFLICT,
    ),
    Route("GET", "/scheduler", "policy, parameters, statistics", answer=a.SchedulerOut),
    Route("PATCH", "/scheduler", "set policy and parameters", a.SchedulerChange, a.SchedulerOut),
)


def job_id_pattern(server: str) -> str:
    """``12``, an array's ``12[]``, a subjob's ``12[3]``, each alone or with ``.SERVER``."""
    return rf"^[0-9]{{1,{SEQ_DIGITS}}}(\[[0-9]{{0,7}}\])?(\.{re.escape(server)})?$"


def reservation_id_pattern(server: str) -> str:
    """``R3``, ``R3.SERVER`` (the R in either case, or left out)."""
    return rf"^[Rr]?[0-9]{{1,{SEQ_DIGITS}}}(\.{re.escape(server)})?$"


def _path_schema(route: Route, param: str, server: str) -> dict[str, Any]:
    if param == "id" and route.path.startswith("/jobs/"):
        return {"type": "string", "pattern": job_id_pattern(server)}
    if param == "id" and route.path.startswith("/reservations/"):
        return {"type": "string", "pattern": reservation_id_pattern(server)}
    if param == "name" and route.path.startswith("/ui/"):
        return {"type": "string", "enum": sorted(ASSETS)}
    return {"type": "string"}


@dataclass(frozen=True)
class SiteNames:
    """What this daemon's document names: its server, machines, queues and policies."""

    server: str
    machines: tuple[str, ...]
    queues: tuple[str, ...]
    policies: tuple[str, ...]
    widest: int  # nodes of the largest machine: no job or reservation is wider


# Text fields that take one of the site's names, shown as an enum in the document.
_NAMED_FIELDS = (
    ("JobSubmit", "queue", "queues"),
    ("JobAlter", "queue", "queues"),
    ("ReservationCreate", "machine", "machines"),
    ("SchedulerChange", "machine", "machines"),
    ("SchedulerChange", "policy", "policies"),
)


_WIDTH_FIELDS = (
    ("JobSubmit", "nodes"),
    ("JobSubmit", "nodes_max"),
    ("JobAlter", "nodes"),
    ("JobAlter", "nodes_max"),
    ("ReservationCreate", "nodes"),
)


def _name_fields(schemas: dict[str, Any], site: SiteNames) -> None:
    for model, field, names in _NAMED_FIELDS:
        prop = schemas[model]["properties"][field]
        enum = {"type": "string", "enum": list(getattr(site, names))}
        prop["anyOf"] = [enum if a.get("type") == "string" else a for a in prop["anyOf"]]
    for model, field in _WIDTH_FIELDS:
        prop = schemas[model]["properties"][field]
        for alt in prop.get("anyOf", [prop]):
            if alt.get("type") == "integer":
                alt["maximum"] = site.widest


def openapi_document(site: SiteNames) -> dict[str, Any]:
    models: set[type[BaseModel]] = {b.ErrorOut}
    for r in ROUTES:
        models.update(m for m in (r.body, r.answer, r.alt) if m is not None)
    ordered = sorted(models, key=lambda m: m.__name__)
    keys, defs = models_json_schema(
        [
            (m, "validation" if any(m is r.body for r in ROUTES) else "serialization")
            for m in ordered
        ],
        ref_template="#/components/schemas/{model}",
    )
    schemas = defs.get("$defs", {})
    _name_fields(schemas, site)
    server = site.server

    def ref(model: type[BaseModel]) -> dict[str, Any]:
        return {"$ref": f"#/components/schemas/{model.__name__}"}

    error = {
        "description": "refused; nothing changed",
        "content": {"application/json": {"schema": ref(b.ErrorOut)}},
    }
    paths: dict[str, Any] = {}
    for r in ROUTES:
        op: dict[str, Any] = {"summary": r.summary, "responses": {}}
        if r.description:
            op["description"] = r.description
        params = [
            {"name": p, "in": "path", "required": True, "schema": _path_schema(r, p, server)}
            for p in ("id", "name")
            if "{" + p + "}" in r.path
        ]
        params += [
            {"name": q, "in": "query", "required": False, "description": d, "schema": schema}
            for q, d, schema in r.query
        ]
        if params:
            op["parameters"] = params
        if r.body is not None:
            op["requestBody"] = {
                "required": r.body_required,
                "content": {"application/json": {"schema": ref(r.body)}},
            }
        if r.answer is not None:
            schema = ref(r.answer)
            if r.alt is not None:
                schema = {"anyOf": [schema, ref(r.alt)]}
            op["responses"][str(r.status)] = {
                "description": "ok",
                "content": {"application/json": {"schema": schema}},
            }
        else:
            op["responses"][str(r.status)] = {
                "description": "ok",
                "content": {m: {"schema": {"type": "string"}} for m in r.media},
            }
        if r.not_modified:
            op["responses"]["304"] = {"description": "not modified: the version named is current"}
        # A change is refused with 503 while the daemon cannot save its state.
        codes = (*r.errors, 429) if 401 in r.errors else r.errors  # 429: failed tokens
        for code in (*codes, 503) if r.method != "GET" else codes:
            op["responses"][str(code)] = error
        paths.setdefault(r.path, {})[r.method.lower()] = op
    del keys
    return {
        "openapi": "3.1.0",
        "info": {"title": "batchd", "version": __version__},
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
