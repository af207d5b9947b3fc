"""The API's edge: no control characters, strict types, plausible times, bounded nesting.

Every refusal is a 400 that names the field and the problem, and changes nothing: the
visible state is the same afterwards and the next accepted job gets the next id.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from api_helpers import Api
from batchd.site.config import ConfigError, load_site

CONTROL = ["\x1b[31m", "\x07", "\x00", "\n", "\t", "\r", "\x7f", "\x9b", "\u2028", "\u202e"]


def with_control() -> list[str]:
    return [f"a{c}b" for c in CONTROL]


async def refused(api: Api, who: str, method: str, path: str, body: Any, *words: str) -> str:
    return await api.error(who, method, path, body, status=400, code="bad_request", says=words)


async def test_control_characters_are_refused_in_every_stored_text(api: Api) -> None:
    await api.submit("alice", nodes=8, walltime=100)  # 1 runs
    await api.submit("alice", walltime=100)  # 2 waits
    before = await api.state()
    for bad in with_control():
        for body, field in [
            ({"name": bad}, "name"),
            ({"queue": bad}, "queue"),
            ({"variables": {"X": bad}}, "variables.X"),
            ({"variables": {bad: "1"}}, "variables.key"),
            ({"depend": f"afterok:1{bad}"}, "depend"),
        ]:
            await refused(api, "alice", "POST", "/jobs", body, field, "is not allowed")
        # The owner a manager submits for.
        await refused(api, "boss", "POST", "/jobs", {"user": bad}, "user", "is not allowed")
        for body, field in [({"name": bad}, "name"), ({"queue": bad}, "queue")]:
            await refused(api, "alice", "PATCH", "/jobs/2", body, field, "is not allowed")
        comment = {"state": "offline", "comment": bad}
        await refused(api, "oper", "PATCH", "/nodes/node001", comment, "comment", "not allowed")
        resv = {"start": "asap", "duration": 60, "nodes": 1, "name": bad}
        await refused(api, "boss", "POST", "/reservations", resv, "name", "is not allowed")
        for body, field in [
            ({"policy": bad}, "policy"),
            ({"params": {"depth": bad}}, "params.depth"),
            ({"params": {bad: "1"}}, "params.key"),
            ({"machine": bad}, "machine"),
        ]:
            await refused(api, "boss", "PATCH", "/scheduler", body, field, "is not allowed")
    assert await api.state() == before
    assert (await api.submit("alice"))["id"] == "3.mini"


async def test_the_refusal_names_the_character(api: Api) -> None:
    msg = await refused(api, "alice", "POST", "/jobs", {"name": "a\x1b[2Jb"}, "name")
    assert "U+001B (escape)" in msg
    msg = await refused(api, "alice", "POST", "/jobs", {"variables": {"X": "1\n2"}}, "X")
    assert "U+000A (newline)" in msg
    msg = await refused(
        api, "alice", "POST", "/jobs", {"variables": {"A\x07": "1"}}, "key 'A\\x07'"
    )
    assert "U+0007 (bell)" in msg
    msg = await refused(api, "alice", "POST", "/jobs", {"name": "x\u202ey"}, "name")
    assert "U+202E (right-to-left override)" in msg


async def test_printable_unicode_is_accepted(api: Api) -> None:
    body = await api.submit(
        "alice", name="計算-ジョブ", variables={"NOTE": "naïve café, tab-free", "E": "🙂"}
    )
    assert body["name"] == "計算-ジョブ"
    assert body["variables"]["NOTE"] == "naïve café, tab-free"
    job = await api.job(1)
    assert job["variables"]["E"] == "🙂"


STRICT_SUBMISSIONS: list[tuple[dict[str, Any], tuple[str, ...]]] = [
    ({"nodes": True}, ("nodes", "valid integer")),
    ({"nodes": "2"}, ("nodes", "valid integer")),
    ({"nodes": 2.5}, ("nodes", "valid integer")),
    ({"priority": True}, ("priority", "valid integer")),
    ({"priority": "5"}, ("priority", "valid integer")),
    ({"hold": "yes"}, ("hold", "valid boolean")),
    ({"hold": "true"}, ("hold", "valid boolean")),
    ({"hold": 1}, ("hold", "valid boolean")),
    ({"exec_time": "1000"}, ("exec_time", "valid integer")),
    ({"exec_time": 1.5e9 + 0.5}, ("exec_time", "valid integer")),
    ({"name": 7}, ("name", "valid string")),
    ({"variables": {"X": 1}}, ("variables.X", "valid string")),
    ({"walltime": 1.5}, ("walltime", "seconds or HH:MM:SS")),
    ({"walltime": False}, ("walltime",)),
]

# Years 1970 to 9999: -1 is 1969-12-31T23:59:59Z, the other is in year 3170843.
IMPLAUSIBLE_TIMES = [-1, -86_400 * 365, 253_402_300_800, 100_000_000_000_000, 2**62]


async def test_strict_types_and_plausible_times(api: Api) -> None:
    await api.submit("alice", walltime=100)
    before = await api.state()
    for body, words in STRICT_SUBMISSIONS:
        await refused(api, "alice", "POST", "/jobs", body, *words)
    for t in IMPLAUSIBLE_TIMES:
        await refused(
            api, "alice", "POST", "/jobs", {"exec_time": t},
            "exec_time", f"{t} is not a plausible time", "years 1970 to 9999",
        )  # fmt: skip
        resv = {"start": t, "duration": 60, "nodes": 1}
        await refused(api, "boss", "POST", "/reservations", resv, "start", "plausible time")
    too_long = ["87600:00:01", 3650 * 86_400 + 1, 10**30]
    for walltime in too_long:
        await refused(
            api, "alice", "POST", "/jobs", {"walltime": walltime}, "walltime", "3650 days"
        )
        await refused(api, "alice", "PATCH", "/jobs/1", {"walltime": walltime}, "walltime")
        resv = {"start": "asap", "duration": walltime, "nodes": 1}
        await refused(api, "boss", "POST", "/reservations", resv, "duration", "3650 days")
    runtime = {"variables": {"BATCHD_RUNTIME": str(3650 * 86_400 + 1)}}
    await refused(api, "alice", "POST", "/jobs", runtime, "BATCHD_RUNTIME", "3650 days")
    for body in ({"nodes": True}, {"priority": 1.5}, {"nodes": "1"}, {"nodes": 1e400}):
        await refused(api, "alice", "PATCH", "/jobs/1", body, next(iter(body)), "valid integer")
    await refused(api, "alice", "POST", "/jobs/1/hold", {"types": ["u"]}, "types")
    for body in (
        {"start": "now", "duration": 60, "nodes": True},
        {"start": "now", "duration": 60, "nodes": "1"},
        {"start": "later", "duration": 60, "nodes": 1},
    ):
        await refused(api, "boss", "POST", "/reservations", body)
    assert await api.state() == before
    assert (await api.submit("alice"))["id"] == "2.mini"


async def test_what_the_client_sends_is_accepted(api: Api) -> None:
    """The types qsub, qalter, qhold and qnodes send, and the documented HH:MM:SS strings."""
    body = await api.submit(
        "alice", name="run", queue="small", nodes=2, walltime="00:30:00", priority=-3,
        hold=True, variables={"BATCHD_RUNTIME": "60"}, script="#!/bin/sh\n\ttrue\n",
        exec_time=0,
    )  # fmt: skip
    assert body["walltime"] == 1800 and body["hold_types"] == "u"
    await api.call("alice", "PATCH", "/jobs/1", {"walltime": 600, "priority": 5})
    await api.call("alice", "POST", "/jobs/1/release", {"types": "u"})
    limit = await api.submit("alice", walltime=3650 * 86_400, exec_time=253_402_300_799)
    assert limit["state"] == "W"
    resv = {"start": 253_402_300_799, "duration": "01:00:00", "nodes": 1}
    await api.call("boss", "POST", "/reservations", resv, status=201)
    await api.call("oper", "PATCH", "/nodes/node001", {"state": "offline", "comment": "fan é"})


@pytest.mark.parametrize("depth", [33, 100, 990, 10_000, 100_000])
async def test_deeply_nested_json_is_a_400(api: Api, depth: int) -> None:
    before = await api.state()
    for path in ("/jobs", "/jobs/1/hold"):
        for data in ("[" * depth + "]" * depth, '{"variables": ' + "[" * depth + "]" * depth + "}"):
            await api.error(
                "alice", "POST", path, data=data, status=400, code="bad_request",
                says="nests arrays and objects deeper than 32 levels",
            )  # fmt: skip
    deep_object = '{"a":' * depth + "1" + "}" * depth
    await api.error(
        "boss", "PATCH", "/scheduler", data=deep_object, status=400, code="bad_request",
        says="deeper than 32 levels",
    )  # fmt: skip
    assert await api.state() == before


async def test_nesting_up_to_the_limit_reaches_the_model(api: Api) -> None:
    data = json.dumps({"variables": [[[]]]})
    await api.error(
        "alice", "POST", "/jobs", data=data, status=400, code="bad_request", says="variables"
    )


@pytest.mark.parametrize(
    ("toml", "says"),
    [
        ('[[queue]]\nname = "work\\u001bq"\n', "queue[0].name"),
        ('[[queue]]\nname = "workq\\n"\n', "queue[0].name"),
        ('[[queue]]\nname = "workq\\u0000"\n', "queue[0].name"),
        ('[server]\ndefault_queue = "workq\\u0007"\n', "server.default_queue"),
        ('[server]\nname = "srv\\r"\n', "server.name"),
        ('description = "cluster\\u001b]0;pwned\\u0007"\n', "description: U+001B (escape)"),
        ('[server]\npolicy_params = {depth = "1\\n2"}\n', "server.policy_params: depth: U+000A"),
        ('[server]\npolicy_params = {"d\\u001b" = 1}\n', "server.policy_params['d\\x1b']"),
        ('[auth]\nmanagers = ["boss\\u001b"]\n', "auth.managers[0]: U+001B"),
    ],
)
def test_config_refuses_control_characters(tmp_path: Path, toml: str, says: str) -> None:
    """Queue names come from the site config (qmgr cannot create queues): it refuses them."""
    path = tmp_path / "site.toml"
    path.write_text('[[machine]]\nname = "m"\nnodes = 4\ndescription = "ok"\n' + toml)
    if toml.startswith("description"):
        path.write_text(toml + '[[machine]]\nname = "m"\nnodes = 4\n')
    with pytest.raises(ConfigError) as err:
        load_site(path)
    assert says in str(err.value)
    assert str(err.value).isprintable(), str(err.value)
