"""The API's edge: no control characters.

Every refusal is a 400 that names the field and the problem, and changes nothing: the
visible state is the same afterwards and the next accepted job gets the next id.
"""

from __future__ import annotations

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
