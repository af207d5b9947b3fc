"""The OpenAPI document, generated from the route table and the pydantic models."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from batchd import __version__
from batchd.server import schemas as s


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    summary: str
    body: type[BaseModel] | None = None
    answer: type[BaseModel] | None = None
    status: int = 200
    query: tuple[tuple[str, str], ...] = ()
    errors: tuple[int, ...] = (400, 401, 403, 404, 405, 413)
    alt: type[BaseModel] | None = None  # another answer, as a query parameter asks


ROUTES: tuple[Route, ...] = (
    Route("GET", "/healthz", "liveness", answer=s.Health, errors=()),
    Route("GET", "/metrics", "Prometheus metrics (text exposition format)", errors=()),
    Route("GET", "/openapi.json", "this document", errors=()),
    Route("GET", "/server", "server attributes (qmgr list server)", answer=s.ServerOut),
    Route(
        "PATCH", "/server", "set server attributes (qmgr set server)", s.ServerChange, s.ServerOut
    ),
    Route("POST", "/jobs", "submit a job (qsub)", s.JobSubmit, s.JobOut, 201),
    Route(
        "GET",
        "/jobs",
        "list jobs in id order (qstat); with limit, one page",
        answer=s.JobList,
        alt=s.JobBriefList,
        query=(
            ("user", "only these owners' jobs (comma-separated)"),
            ("state", "state letters to include, e.g. QR"),
            ("queue", "only this queue"),
            ("history", "true: finished jobs too (qstat -x)"),
            ("brief", "true: each job as a JobBrief (JobBriefList)"),
            ("limit", "at most this many jobs (1-10000); next says where the next page starts"),
            ("after", "only jobs with a greater seq: the next of the previous page"),
        ),
    ),
    Route("GET", "/jobs/{id}", "one job (qstat -f)", answer=s.JobOut),
    Route("DELETE", "/jobs/{id}", "delete a job (qdel)", answer=s.JobOut),
    Route("POST", "/jobs/{id}/hold", "hold a job (qhold)", s.HoldRequest, s.JobOut),
    Route("POST", "/jobs/{id}/release", "release a hold (qrls)", s.HoldRequest, s.JobOut),
    Route("PATCH", "/jobs/{id}", "alter a waiting job (qalter)", s.JobAlter, s.JobOut),
    Route("GET", "/nodes", "list nodes (qnodes)", answer=s.NodeList),
    Route("GET", "/nodes/{name}", "one node", answer=s.NodeOut),
    Route("PATCH", "/nodes/{name}", "offline, online or down", s.NodeChange, s.NodeOut),
    Route("GET", "/queues", "list queues (qstat -Q)", answer=s.QueueList),
    Route("GET", "/queues/{name}", "one queue", answer=s.QueueOut),
    Route("GET", "/reservations", "list reservations", answer=s.ReservationList),
    Route(
        "POST",
        "/reservations",
        "create a reservation",
        s.ReservationCreate,
        s.ReservationOut,
        201,
        errors=(400, 401, 403, 405, 409, 413),
    ),
    Route("GET", "/reservations/{id}", "one reservation", answer=s.ReservationOut),
    Route("DELETE", "/reservations/{id}", "delete a reservation", answer=s.ReservationOut),
    Route("GET", "/scheduler", "policy, parameters, statistics", answer=s.SchedulerOut),
    Route("PATCH", "/scheduler", "set policy and parameters", s.SchedulerChange, s.SchedulerOut),
)


def openapi_document() -> dict[str, Any]:
    models: set[type[BaseModel]] = {s.ErrorOut}
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

    def ref(model: type[BaseModel]) -> dict[str, Any]:
        return {"$ref": f"#/components/schemas/{model.__name__}"}

    error = {
        "description": "refused; nothing changed",
        "content": {"application/json": {"schema": ref(s.ErrorOut)}},
    }
    paths: dict[str, Any] = {}
    for r in ROUTES:
        op: dict[str, Any] = {"summary": r.summary, "responses": {}}
        params = [
            {"name": p, "in": "path", "required": True, "schema": {"type": "string"}}
            for p in ("id", "name")
            if "{" + p + "}" in r.path
        ]
        params += [
            {
                "name": q,
                "in": "query",
                "required": False,
                "description": d,
                "schema": {"type": "string"},
            }
            for q, d in r.query
        ]
        if params:
            op["parameters"] = params
        if r.body is not None:
            op["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": ref(r.body)}},
            }
        if r.answer is not None:
            schema = ref(r.answer)
            if r.alt is not None:
                schema = {"oneOf": [schema, ref(r.alt)]}
            op["responses"][str(r.status)] = {
                "description": "ok",
                "content": {"application/json": {"schema": schema}},
            }
        else:
            op["responses"][str(r.status)] = {
                "description": "ok",
                "content": {"text/plain": {"schema": {"type": "string"}}},
            }
        # A change is refused with 503 while the daemon cannot save its state.
        for code in (*r.errors, 503) if r.method != "GET" else r.errors:
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
