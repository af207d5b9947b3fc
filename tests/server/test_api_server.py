"""Server-wide routes: /healthz, /server, /queues, /metrics and the OpenAPI document."""

from __future__ import annotations

import re
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from api_helpers import T0, Api
from batchd import __version__
from batchd.server.admin_schemas import Health, QueueList, QueueOut, ServerOut
from batchd.server.app import create_app
from paths import ROOT

DOCS = ROOT / "docs" / "api.md"


async def test_healthz_needs_no_token(api: Api) -> None:
    api.at(42)
    body = await api.call(None, "GET", "/healthz")
    Health.model_validate(body)
    assert body == {"status": "ok", "now": T0 + 42}  # the emulated clock's now


async def test_server_attributes(api: Api) -> None:
    await api.submit("alice", nodes=8, walltime=100)
    await api.submit("alice", nodes=8, walltime=100)
    await api.submit("bob", hold=True)
    await api.submit("bob", nodes=1, walltime=50, exec_time=T0 + 10_000)
    api.at(100)
    body = await api.call("bob", "GET", "/server")
    server = ServerOut.model_validate(body)
    assert (server.name, server.version, server.now, server.started) == (
        "mini", __version__, T0 + 100, T0,
    )  # fmt: skip
    assert (server.machine, server.nodes, server.default_queue) == ("mini", 8, "workq")
    assert (server.policy, server.node_fail, server.replay) == ("fcfs-easy", "requeue", None)
    assert server.clock == "realtime" and server.speed == 1.0
    # Job 1 ended at 100, job 2 then started; 3 held, 4 waits for its time.
    assert server.jobs == {"Q": 0, "H": 1, "W": 1, "R": 1, "E": 0, "F": 1}


async def test_queues(api: Api) -> None:
    await api.submit("bob", walltime=10, runtime=0)  # ends at once: not counted
    await api.submit("alice", nodes=8, walltime=100)
    await api.submit("alice", queue="small", nodes=2, walltime=60)
    await api.submit("bob", queue="small", hold=True)
    body = await api.call("bob", "GET", "/queues")
    listing = QueueList.model_validate(body)
    assert (listing.server, listing.now) == ("mini", T0)
    by_name = {q.name: q for q in listing.queues}
    assert list(by_name) == ["workq", "small"]
    workq, small = by_name["workq"], by_name["small"]
    assert (workq.default, workq.enabled, workq.started, workq.queue_type) == (
        True, True, True, "Execution",
    )  # fmt: skip
    assert (workq.max_nodes, workq.max_walltime, workq.default_walltime) == (None, None, 3600)
    assert (small.default, small.max_nodes, small.max_walltime, small.default_walltime) == (
        False, 2, 3600, 3600,
    )  # fmt: skip
    assert workq.counts == {"Q": 0, "R": 1, "H": 0, "W": 0, "E": 0} and workq.total == 1
    assert small.counts == {"Q": 1, "R": 0, "H": 1, "W": 0, "E": 0} and small.total == 2
    one = await api.call("alice", "GET", "/queues/small")
    assert QueueOut.model_validate(one) == small
    await api.error("alice", "GET", "/queues/nosuch", status=404, code="not_found", says="'nosuch'")


def _metrics(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


async def test_metrics(api: Api) -> None:
    # J1 5 nodes runs on node001-005; J2 8 nodes waits; J3 (small) 2 nodes runs on
    # node006-007 for 60 s; J4 is held; node008 goes offline.
    await api.submit("alice", nodes=5, walltime=1000)
    await api.submit("alice", nodes=8, walltime=100)
    await api.submit("bob", queue="small", nodes=2, walltime=60)
    await api.submit("bob", hold=True)
    await api.call("oper", "PATCH", "/nodes/node008", {"state": "offline"})
    status, text = await api.raw(None, "GET", "/metrics")
    assert status == 200 and isinstance(text, str)
    m = _metrics(text)

    def jobs(queue: str, state: str) -> float:
        return m[("batchd_jobs", (("queue", queue), ("state", state)))]

    def nodes(state: str) -> float:
        return m[("batchd_nodes", (("pool", "mini"), ("state", state)))]

    assert [jobs("workq", s) for s in ("queued", "held", "waiting", "running")] == [1, 1, 0, 1]
    assert [jobs("small", s) for s in ("queued", "held", "waiting", "running")] == [0, 0, 0, 1]
    assert [nodes(s) for s in ("idle", "allocated", "reserved", "offline", "down")] == [
        0, 7, 0, 1, 0,
    ]  # fmt: skip
    assert m[("batchd_emulated_timestamp_seconds", ())] == T0
    assert m[("batchd_scheduler_policy", (("policy", "fcfs-easy"), ("pool", "mini")))] == 1

    # t=60: J3 ended; a reservation opens on node006-007.
    api.at(60)
    req = {"start": "now", "duration": 100, "nodes": 2}
    await api.call("boss", "POST", "/reservations", req, status=201)
    m = _metrics((await api.raw(None, "GET", "/metrics"))[1])
    assert [nodes(s) for s in ("idle", "allocated", "reserved", "offline", "down")] == [
        0, 5, 2, 1, 0,
    ]  # fmt: skip
    assert jobs("small", "running") == 0
    assert m[("batchd_emulated_timestamp_seconds", ())] == T0 + 60


# --------------------------------------------------------------------------------------------
# OpenAPI


def documented_routes() -> dict[tuple[str, str], tuple[str | None, str]]:
    """(method, path) -> (answer model, status) from docs/api.md's route table."""
    routes: dict[tuple[str, str], tuple[str | None, str]] = {}
    table = DOCS.read_text().split("## Routes", 1)[1]
    for line in table.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        paths = re.findall(r"`(GET|POST|PATCH|PUT|DELETE) (/[^`?]*)", cells[0])
        answers = re.findall(r"`([A-Z][A-Za-z]+)`", cells[2])
        for i, (method, path) in enumerate(paths):
            answer = answers[min(i, len(answers) - 1)] if answers else None
            status = cells[2][:3] if cells[2][:3] in ("201", "302") else "200"
            routes[(method, path)] = (answer, status)
    return routes


def refs(value: Any) -> list[str]:
    if isinstance(value, dict):
        found = [value["$ref"]] if isinstance(value.get("$ref"), str) else []
        return found + [r for v in value.values() for r in refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in refs(v)]
    return []


async def test_openapi_shape_and_refs(api: Api) -> None:
    doc = await api.call(None, "GET", "/openapi.json")
    assert doc["openapi"] == "3.1.0"
    assert doc["info"] == {"title": "batchd", "version": __version__}
    schemas = doc["components"]["schemas"]
    assert doc["components"]["securitySchemes"]["bearer"] == {"type": "http", "scheme": "bearer"}
    for name in ("JobSubmit", "JobOut", "JobList", "ErrorOut", "ReservationCreate"):
        assert schemas[name]["type"] == "object", name
    assert set(schemas["JobOut"]["properties"]) >= {"id", "state", "est_start", "exec_host"}
    # Every $ref resolves to a component schema.
    found = refs(doc)
    assert len(found) > 40
    for ref in found:
        assert ref.startswith("#/components/schemas/"), ref
        assert ref.removeprefix("#/components/schemas/") in schemas, ref
    # The query parameters of GET /jobs.
    params = {p["name"] for p in doc["paths"]["/jobs"]["get"]["parameters"]}
    assert params == {"user", "state", "queue", "history", "brief", "limit", "after", "subjobs"}
    for code in ("400", "401", "403", "404", "413"):
        error = doc["paths"]["/jobs"]["post"]["responses"][code]
        assert error["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/ErrorOut"
        }


async def test_openapi_describes_every_documented_route(api: Api) -> None:
    doc = await api.call(None, "GET", "/openapi.json")
    schemas = doc["components"]["schemas"]
    documented = documented_routes()
    assert len(documented) == 35, sorted(documented)
    missing = []
    for (method, path), (answer, ok) in documented.items():
        op = doc["paths"].get(path, {}).get(method.lower())
        if op is None:
            missing.append(f"{method} {path}")
            continue
        assert op["summary"]
        assert ok in op["responses"], (method, path)
        if answer is not None and answer in schemas:
            schema = op["responses"][ok]["content"]["application/json"]["schema"]
            first = schema["anyOf"][0] if "anyOf" in schema else schema  # GET /jobs: or brief
            assert first == {"$ref": f"#/components/schemas/{answer}"}, path
        for name in re.findall(r"{(\w+)}", path):
            params = {p["name"]: p for p in op.get("parameters", [])}
            assert params[name]["in"] == "path" and params[name]["required"] is True
        if method in ("POST", "PATCH") and not path.endswith("/rerun"):  # qrerun: no body
            # hold and release take none for a user hold, signal none for SIGTERM
            optional = path.endswith(("/hold", "/release", "/signal"))
            assert op["requestBody"]["required"] is not optional
    described = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    assert described <= set(documented)
    assert missing == [], f"missing from /openapi.json: {missing}"


async def test_openapi_declares_the_conflict_answer(api: Api) -> None:
    # docs/api.md: 409 conflict when a reservation does not fit, or a job or reservation
    # is not in the state an action needs; the document must say so.
    doc = await api.call(None, "GET", "/openapi.json")
    assert "409" in doc["paths"]["/reservations"]["post"]["responses"]
    for path, method in [
        ("/jobs/{id}", "delete"),
        ("/jobs/{id}", "patch"),
        ("/jobs/{id}/hold", "post"),
        ("/jobs/{id}/release", "post"),
        ("/reservations/{id}", "delete"),
    ]:
        assert "409" in doc["paths"][path][method]["responses"], (method, path)


async def test_openapi_matches_the_served_routes(api: Api) -> None:
    doc = await api.call(None, "GET", "/openapi.json")
    app = create_app(api.svc)
    served = {
        (r.method, r.resource.canonical)
        for r in app.router.routes()
        if r.method != "HEAD" and r.resource is not None
    }
    described = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    assert served == set(documented_routes())
    assert described | {("GET", "/openapi.json")} == served
