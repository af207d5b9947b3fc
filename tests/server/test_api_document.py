"""The OpenAPI document and the server agree: what the document requires the server
requires, what it allows the server takes, and every answer is one it declares.

tests/server/test_openapi_fuzz.py checks the same with a real fuzzer; these are the
cases it found, pinned down.
"""

from __future__ import annotations

import re
from typing import Any

from api_helpers import Api, headers


async def document(api: Api) -> dict[str, Any]:
    doc: dict[str, Any] = await api.call(None, "GET", "/openapi.json")
    return doc


async def test_a_method_not_allowed_names_the_allowed_ones(api: Api) -> None:
    resp = await api.client.request("TRACE", "/jobs", headers=headers("alice"))
    assert resp.status == 405
    assert set(resp.headers["Allow"].split(", ")) >= {"GET", "POST"}
    resp = await api.client.request("PUT", "/jobs/1", headers=headers("alice"))
    assert resp.status == 405
    assert set(resp.headers["Allow"].split(", ")) >= {"GET", "DELETE", "PATCH"}


async def test_a_required_body_must_be_sent(api: Api) -> None:
    await api.submit("alice", walltime=100)
    before = await api.state()
    for who, method, path in [
        ("alice", "POST", "/jobs"),
        ("alice", "PATCH", "/jobs/1"),
        ("boss", "PATCH", "/scheduler"),
        ("boss", "PATCH", "/server"),
        ("boss", "POST", "/reservations"),
        ("boss", "PATCH", "/nodes/node001"),
    ]:
        await api.error(
            who, method, path, status=400, code="bad_request", says="needs a JSON object"
        )
    assert await api.state() == before
    doc = await document(api)
    assert doc["paths"]["/jobs"]["post"]["requestBody"]["required"] is True
    # hold and release declare theirs optional: without one, a user hold
    assert doc["paths"]["/jobs/{id}/hold"]["post"]["requestBody"]["required"] is False
    await api.submit("alice", nodes=8, walltime=100)  # 2 waits behind 1
    body = await api.call("alice", "POST", "/jobs/2/hold")
    assert (body["state"], body["hold_types"]) == ("H", "u")
    body = await api.call("alice", "POST", "/jobs/2/release")
    assert body["state"] == "Q"


async def test_job_numbers_beyond_18_digits_are_refused_not_a_server_error(api: Api) -> None:
    await api.submit("alice", walltime=100)
    before = await api.state()
    big = "1" * 19
    for method, path in [("GET", f"/jobs/{big}"), ("DELETE", f"/jobs/{big}")]:
        await api.error("alice", method, path, status=400, code="bad_request", says="18 digits")
    await api.error(
        "alice", "PATCH", f"/jobs/{big}", {"priority": 1}, status=400, code="bad_request",
        says="18 digits",
    )  # fmt: skip
    await api.error(
        "alice", "POST", "/jobs", {"depend": f"afterok:{big}"}, status=400, code="bad_request",
        says="18 digits",
    )  # fmt: skip
    await api.error("alice", "GET", f"/jobs/{'9' * 18}", status=404, code="not_found")
    await api.error("boss", "GET", f"/reservations/R{big}", status=400, code="bad_request")
    assert await api.state() == before


async def test_whole_numbers_written_with_a_fraction_are_integers(api: Api) -> None:
    # JSON Schema counts 2.0 an integer; so does the API. 2.5 is refused.
    job = await api.call("alice", "POST", "/jobs", {"nodes": 2.0, "walltime": 6e1}, status=201)
    assert (job["nodes"], job["walltime"]) == (2, 60)
    await api.error(
        "alice", "POST", "/jobs", {"nodes": 2.5}, status=400, code="bad_request", says="nodes"
    )


async def test_an_empty_policy_name_is_refused(api: Api) -> None:
    await api.error(
        "boss", "PATCH", "/scheduler", {"policy": ""}, status=400, code="bad_request",
        says="unknown policy ''",
    )  # fmt: skip


async def test_the_document_names_the_sites_queues_machines_policies_and_widths(
    api: Api,
) -> None:
    schemas = (await document(api))["components"]["schemas"]

    def alternatives(model: str, field: str) -> list[dict[str, Any]]:
        prop = schemas[model]["properties"][field]
        return list(prop.get("anyOf", [prop]))

    def enum(model: str, field: str) -> list[str]:
        return next(a["enum"] for a in alternatives(model, field) if "enum" in a)

    assert enum("JobSubmit", "queue") == ["workq", "small"]
    assert enum("JobAlter", "queue") == ["workq", "small"]
    assert enum("ReservationCreate", "machine") == ["mini"]
    assert enum("SchedulerChange", "machine") == ["mini"]
    assert {"fcfs", "fcfs-easy", "sjf-cons", "dynp"} <= set(enum("SchedulerChange", "policy"))
    for model in ("JobSubmit", "JobAlter", "ReservationCreate"):
        widths = [a for a in alternatives(model, "nodes") if a.get("type") == "integer"]
        assert [(w["minimum"], w["maximum"]) for w in widths] == [(1, 8)], model


async def test_the_document_types_paths_and_queries_as_the_server_parses_them(
    api: Api,
) -> None:
    doc = await document(api)
    op = doc["paths"]["/jobs/{id}"]["get"]
    job_id = re.compile(op["parameters"][0]["schema"]["pattern"])
    ids = ("12", "12.mini", "12.other", "x", "1" * 19, "12[]", "12[3].mini", "12[", "12[x]")
    assert [bool(job_id.fullmatch(t)) for t in ids] == [
        True, True, False, False, False, True, True, False, False,
    ]  # fmt: skip
    op = doc["paths"]["/reservations/{id}"]["delete"]
    resv_id = re.compile(op["parameters"][0]["schema"]["pattern"])
    assert [bool(resv_id.fullmatch(t)) for t in ("R3", "R3.mini", "3", "R3.other")] == [
        True, True, True, False,
    ]  # fmt: skip
    query = {p["name"]: p["schema"] for p in doc["paths"]["/jobs"]["get"]["parameters"]}
    assert query["limit"] == {"type": "integer", "minimum": 1, "maximum": 10_000}
    assert query["history"]["enum"] == ["true", "false", "1", "0", "yes", "no"]
    assert query["state"]["pattern"] == "^[QHWREFBX]*$"
    # and the server keeps to them: a flag in capitals is not one of the words
    await api.error(
        "alice", "GET", "/jobs?history=TRUE", status=400, code="bad_request", says="history"
    )
    await api.error("alice", "GET", "/jobs?limit=%D9%A3", status=400, code="bad_request")
    # a duration as text: the pattern's forms only, each in range
    walltime = schemas_walltime(doc)
    text = re.compile(walltime["pattern"])
    for good in ("60", "1:00", "24:00:00", "9999:59:59"):
        assert text.fullmatch(good)
        await api.call("alice", "POST", "/jobs", {"walltime": good}, status=201)
    for bad in (" 60", "10000:00:00", "1:60:00"):
        assert not text.fullmatch(bad)
        await api.error(
            "alice", "POST", "/jobs", {"walltime": bad}, status=400, code="bad_request",
            says="walltime",
        )  # fmt: skip


def schemas_walltime(doc: dict[str, Any]) -> dict[str, Any]:
    prop = doc["components"]["schemas"]["JobSubmit"]["properties"]["walltime"]
    texts = [a for a in prop["anyOf"] if a.get("type") == "string"]
    assert len(texts) == 1, prop
    return texts[0]
