"""Refusals: a 4xx with {"error", "message"}, a message that names the problem, no change.

After each batch of refusals the whole visible state is compared with what it was, and the
next accepted submission must get the next job id (a refused one must not use up a number).
"""

from __future__ import annotations

from typing import Any

import pytest

from api_helpers import TOKENS, Api, serve, site_config

# (body, words the message must contain)
BAD_SUBMISSIONS: list[tuple[dict[str, Any], tuple[str, ...]]] = [
    ({"nodes": 0}, ("nodes", "greater than or equal to 1")),
    ({"nodes": -1}, ("nodes", "greater than or equal to 1")),
    ({"nodes": "x"}, ("nodes", "integer")),
    ({"nodes": 1.5}, ("nodes",)),
    ({"nodes": 9}, ("nodes: 9 nodes requested", "machine mini has 8")),
    ({"nodes": 3, "queue": "small"}, ("queue small", "resources_max.nodect = 2")),
    ({"walltime": "02:00:00", "queue": "small"}, ("walltime", "resources_max.walltime = 01:00:00")),
    ({"walltime": "1:99:00"}, ("walltime", "'1:99:00'", "below 60")),
    ({"walltime": "abc"}, ("walltime", "'abc'", "not a duration")),
    ({"walltime": 0}, ("walltime", "positive")),
    ({"walltime": -5}, ("walltime", "positive")),
    ({"walltime": True}, ("walltime",)),
    ({"queue": "nosuch"}, ("unknown queue 'nosuch'", "workq, small")),
    ({"depend": "afterfoo:1"}, ("depend", "unknown type 'afterfoo'")),
    ({"depend": "afterok:"}, ("depend", "afterok needs at least one job id")),
    ({"depend": "afterok:abc"}, ("depend", "'abc' is not a job id")),
    ({"depend": "afterok:99"}, ("depend", "unknown job id 99.mini")),
    ({"depend": "afterok:1.other"}, ("depend", "'other'")),
    ({"priority": 1024}, ("priority",)),
    ({"priority": -1025}, ("priority",)),
    ({"name": "two words"}, ("name",)),
    ({"name": ""}, ("name",)),
    ({"exec_time": "tomorrow"}, ("exec_time",)),
    ({"variables": {"BATCHD_RUNTIME": "soon"}}, ("BATCHD_RUNTIME", "'soon'")),
    ({"variables": {"X": 1}}, ("variables.X",)),
    ({"hold": "perhaps"}, ("hold",)),
    ({"colour": "red"}, ("colour: unknown field",)),
    ({"nodes": 1, "Nodes": 2}, ("Nodes: unknown field",)),
]


async def test_refused_submissions_change_nothing(api: Api) -> None:
    await api.submit("alice", nodes=8, walltime=100, runtime=50)  # 1: ok at 50
    await api.submit("alice", nodes=2, walltime=100)  # 2: waits
    before = await api.state()
    for body, words in BAD_SUBMISSIONS:
        await api.error("alice", "POST", "/jobs", body, status=400, code="bad_request", says=words)
    # A non-manager may not submit for someone else.
    await api.error(
        "alice", "POST", "/jobs", {"user": "bob"}, status=403, code="forbidden",
        says="alice may not submit jobs as bob",
    )  # fmt: skip
    await api.error(
        "oper", "POST", "/jobs", {"user": "bob"}, status=403, code="forbidden", says="bob"
    )
    assert await api.state() == before
    assert len(await api.jobs()) == 2
    body = await api.submit("alice", user="alice")  # naming oneself is fine
    assert body["id"] == "3.mini"


async def test_bad_bodies(api: Api) -> None:
    before = await api.state()
    cases: list[tuple[str, str, str, tuple[str, ...]]] = [
        ("POST", "/jobs", "{nodes: 2}", ("not valid JSON",)),
        ("POST", "/jobs", '{"nodes": 2', ("not valid JSON",)),
        ("POST", "/jobs", "\xff\xfe", ("not valid JSON",)),
        ("POST", "/jobs", "[1, 2]", ("body",)),
        ("POST", "/jobs", '"job"', ("body",)),
        ("POST", "/reservations", "null", ("body",)),
        ("PATCH", "/scheduler", "{", ("not valid JSON",)),
        ("PATCH", "/nodes/node001", '{"state": "offline", "why": 1}', ("why: unknown field",)),
        ("PATCH", "/nodes/node001", "{}", ("state: required",)),
    ]
    for method, path, data, words in cases:
        await api.error("boss", method, path, data=data, status=400, code="bad_request", says=words)
    assert await api.state() == before
    assert (await api.submit("alice"))["id"] == "1.mini"


async def test_body_over_the_limit_is_refused(tmp_path) -> None:
    async with serve(tmp_path, site_config(max_body=2048)) as api:
        await api.submit("alice", script="#!/bin/sh\n" + "true\n" * 300)  # 1.8 kB: fine
        before = await api.state()
        big = {"script": "#!/bin/sh\n" + "echo hello world\n" * 600}  # about 10 kB
        await api.error(
            "alice", "POST", "/jobs", big, status=413, code="too_large", says="2048 bytes"
        )
        await api.error(
            "alice", "PATCH", "/jobs/1", {"name": "x" * 3000}, status=413, code="too_large"
        )
        assert await api.state() == before
        assert (await api.submit("alice"))["id"] == "2.mini"


async def test_unknown_jobs_are_404(api: Api) -> None:
    await api.submit("alice")
    before = await api.state()
    for method, path, body in [
        ("GET", "/jobs/99", None),
        ("GET", "/jobs/99.mini", None),
        ("DELETE", "/jobs/99", None),
        ("POST", "/jobs/99/hold", {}),
        ("POST", "/jobs/99/release", {}),
        ("PATCH", "/jobs/99", {"priority": 1}),
    ]:
        await api.error(
            "boss", method, path, body, status=404, code="not_found", says="Unknown Job Id 99.mini"
        )
    for path, says in [
        ("/jobs/abc", "'abc' is not a job id"),
        ("/jobs/1.other", "belongs to server 'other'"),
        ("/jobs/-1", "is not a job id"),
    ]:
        await api.error("boss", "GET", path, status=400, code="bad_request", says=says)
    assert await api.state() == before


async def test_unknown_paths_and_methods(api: Api) -> None:
    for who, path in [("alice", "/nope"), ("alice", "/jobs/1/frobnicate"), ("alice", "/u")]:
        await api.error(who, "GET", path, status=404, code="not_found", says=path)
    for method, path in [
        ("PUT", "/jobs"),
        ("DELETE", "/jobs"),
        ("POST", "/nodes/node001"),
        ("PUT", "/scheduler"),
        ("POST", "/server"),
        ("PATCH", "/reservations/R1"),
    ]:
        await api.error(
            "boss", method, path, {}, status=405, code="method_not_allowed",
            says=(method, path),
        )  # fmt: skip
    assert await api.jobs() == []


async def test_tcp_needs_a_valid_token(api: Api) -> None:
    cases: list[tuple[dict[str, str], str]] = [
        ({}, "Bearer"),
        ({"Authorization": "Bearer"}, "Bearer"),
        ({"Authorization": "Bearer "}, "Bearer"),
        ({"Authorization": f"Basic {TOKENS['alice']}"}, "Bearer"),
        ({"Authorization": "Bearer not-a-token-at-all"}, "not valid"),
        ({"Authorization": f"Bearer {TOKENS['alice']}x"}, "not valid"),
        ({"Authorization": f"Bearer {TOKENS['alice'][:-1]}"}, "not valid"),
    ]
    for method, path, body in [
        ("GET", "/jobs", None),
        ("GET", "/server", None),
        ("POST", "/jobs", {"nodes": 1}),
        ("PATCH", "/scheduler", {"policy": "fcfs"}),
    ]:
        for hdrs, says in cases:
            resp = await api.client.request(method, path, json=body, headers=hdrs)
            assert resp.status == 401, (method, path, hdrs)
            err = await resp.json()
            assert err["error"] == "unauthorized" and says in err["message"], err
    # The open paths need none.
    for path in ("/healthz", "/metrics", "/openapi.json"):
        resp = await api.client.get(path)
        assert resp.status == 200, path
    assert api.svc.records == {} and api.svc.scheduler.choices[0].name == "fcfs-easy"
    # "bearer" is case-insensitive, as HTTP auth schemes are.
    resp = await api.client.get("/jobs", headers={"Authorization": f"bearer {TOKENS['bob']}"})
    assert resp.status == 200


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("state=Z", "unknown letters Z"),
        ("state=QZY", "unknown letters YZ"),
        ("history=maybe", "history: expected true or false, got 'maybe'"),
        ("colour=red", "unknown query parameter 'colour'"),
    ],
)
async def test_bad_job_queries(api: Api, query: str, says: str) -> None:
    await api.error("alice", "GET", f"/jobs?{query}", status=400, code="bad_request", says=says)


async def test_listing_an_unknown_queue_is_404(api: Api) -> None:
    await api.error(
        "alice", "GET", "/jobs?queue=nosuch", status=404, code="not_found",
        says="Unknown queue 'nosuch'; queues: workq, small",
    )  # fmt: skip


async def test_refused_actions_on_jobs_change_nothing(api: Api) -> None:
    await api.submit("alice", nodes=8, walltime=100)  # 1 runs
    await api.submit("alice", nodes=8, walltime=100)  # 2 waits
    before = await api.state()
    refusals = [
        ("bob", "DELETE", "/jobs/2", None, 403),
        ("bob", "PATCH", "/jobs/2", {"priority": 1}, 403),
        ("bob", "POST", "/jobs/2/hold", {}, 403),
        ("alice", "POST", "/jobs/2/hold", {"types": "o"}, 403),
        ("alice", "POST", "/jobs/2/hold", {"types": ""}, 400),
        ("alice", "POST", "/jobs/2/hold", {"types": "uz"}, 400),
        ("alice", "POST", "/jobs/2/hold", {"kind": "u"}, 400),
        ("alice", "POST", "/jobs/2/release", {}, 409),
        ("alice", "POST", "/jobs/1/hold", {}, 409),
        ("alice", "PATCH", "/jobs/1", {"walltime": 50}, 409),
        ("alice", "PATCH", "/jobs/2", {"nodes": 9}, 400),
        ("alice", "PATCH", "/jobs/2", {"walltime": "abc"}, 400),
        ("alice", "PATCH", "/jobs/2", {"state": "R"}, 400),
        ("alice", "PATCH", "/nodes/node001", {"state": "down"}, 403),
        ("alice", "POST", "/reservations", {"start": "now", "duration": 1, "nodes": 99}, 400),
        ("alice", "PATCH", "/scheduler", {"policy": "fcfs"}, 403),
    ]
    codes = {400: "bad_request", 403: "forbidden", 409: "conflict"}
    for who, method, path, body, status in refusals:
        await api.error(who, method, path, body, status=status, code=codes[status])
    assert await api.state() == before
    assert (await api.submit("bob"))["id"] == "3.mini"
