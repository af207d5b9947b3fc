"""GET /plan made in steps: the same states and answers as made at once, by the rule,
with the event loop free between two steps, and one state made for concurrent polls."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Generator
from pathlib import Path
from typing import Any

import pytest

from api_helpers import Api, headers, serve, site_config
from batchd.server import planfeed, planview
from batchd.server.keys import PLAN_FEED
from batchd.server.planfeed import Version, answer_steps, kept_order
from batchd.server.planview import PlanState, plan_state, plan_state_steps, run_through
from batchd.server.service import BatchService, Caller


async def busy_site(api: Api) -> None:
    """Running (1-3), waiting (4-7, 9 in the small queue) and held (8) jobs of alice and
    bob (3, 5, 7, 9) on the 8-node site."""
    await api.submit("alice", nodes=5, walltime=600, runtime=300, name="runs")
    for i in range(6):
        await api.submit("bob" if i % 2 else "alice", nodes=1 + i % 4, walltime=200 + 60 * i)
    await api.submit("alice", nodes=1, walltime=60, hold=True, name="held")
    await api.submit("bob", nodes=2, walltime=300, queue="small", name="small")


def steps_of(svc: BatchService) -> tuple[PlanState, int]:
    """The state made in steps, and how many steps it took."""
    steps = plan_state_steps(svc)
    count = 0
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value, count
        count += 1


def owned_by(state: PlanState, user: str) -> PlanState:
    """The state with ``user``'s jobs only: what a caller who sees only his own is sent."""
    own = {seq for seq, (_, owner, _) in state.info.items() if owner == user}
    return PlanState(
        {seq: row for seq, row in state.rows.items() if seq in own},
        {seq: info for seq, info in state.info.items() if seq in own},
        [[seq for seq in waiting if seq in own] for waiting in state.order],
        state.machines,
        state.reservations,
    )


def expected(state: PlanState, base: PlanState | None, user: str | None) -> dict[str, Any]:
    """The jobs, info, gone and order of an answer, by the rule (planfeed's docstring)."""
    if user is not None:
        state = owned_by(state, user)
        base = owned_by(base, user) if base is not None else None
    if base is None:
        return {
            "jobs": list(state.rows.values()),
            "info": [(seq, *i) for seq, i in state.info.items()],
            "gone": [],
            "order": list(state.order),
        }
    return {
        "jobs": [r for seq, r in state.rows.items() if base.rows.get(seq) != r],
        "info": [(seq, *i) for seq, i in state.info.items() if base.info.get(seq) != i],
        "gone": [seq for seq in base.rows if seq not in state.rows],
        "order": [
            None if new == kept_order(old, state.rows, m) else new
            for m, (old, new) in enumerate(zip(base.order, state.order, strict=True))
        ],
    }


def sent(body: bytes) -> dict[str, Any]:
    """The jobs, info, gone and order of an answer, its reasons as text again."""
    out = json.loads(body)
    reasons = out["reasons"]
    jobs = [tuple(r[:-1]) + (None if r[-1] is None else reasons[r[-1]],) for r in out["jobs"]]
    for row in jobs:  # rows carry their allocations as tuples
        assert len(row) == len(out["fields"])
    return {
        "jobs": jobs,
        "info": [tuple(i) for i in out["info"]],
        "gone": out["gone"],
        "order": out["order"],
    }


def as_sent(answer: dict[str, Any]) -> dict[str, Any]:
    """An expected answer in JSON's types (tuples as lists)."""
    parsed: dict[str, Any] = json.loads(json.dumps(answer))
    parsed["jobs"] = [tuple(r) for r in parsed["jobs"]]
    parsed["info"] = [tuple(i) for i in parsed["info"]]
    return parsed


async def test_a_state_made_in_steps_is_the_state_made_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with serve(tmp_path) as api:
        await busy_site(api)
        whole = plan_state(api.svc)
        monkeypatch.setattr(planview, "STEP_ROWS", 2)
        stepped, count = steps_of(api.svc)
        assert stepped == whole and stepped.same_as(whole)
        # 5 waiting jobs in the plan and 9 records: a step every second row.
        assert whole.order == [[4, 5, 6, 7, 9]] and len(whole.info) == 9 and count == 7


async def test_answers_made_in_steps_follow_the_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(planfeed, "STEP_ROWS", 2)
    async with serve(tmp_path, site_config(query_other_jobs=False)) as api:
        await busy_site(api)
        svc = api.svc
        v1 = plan_state(svc)
        await api.call("bob", "DELETE", "/jobs/5")  # gone
        await api.submit("bob", nodes=3, walltime=100, name="new")  # new, at the end
        await api.call("alice", "POST", "/jobs/8/release", {})  # held -> queued
        await api.call("alice", "PATCH", "/jobs/4", {"name": "renamed"})  # new info
        v2 = plan_state(svc)
        assert v2.order != v1.order
        version = Version("cafe0001", 2, v2, v1)
        callers = {
            None: Caller("boss", "manager"),
            "alice": Caller("alice", "user"),
            "bob": Caller("bob", "user"),
        }
        for user, caller in callers.items():
            for since, base in ((None, None), ("cafe0001-1", v1), ("cafe0001-2", v2)):
                body = run_through(answer_steps(svc, version, caller, since))
                answer = sent(body)
                assert answer == as_sent(expected(v2, base, user)), (user, since)
                assert json.loads(body)["base"] == (since if base is not None else None)
        # The delta for bob names his deleted job and his new one, and nothing of alice's.
        body = run_through(answer_steps(svc, version, callers["bob"], "cafe0001-1"))
        delta = sent(body)
        assert delta["gone"] == [5] and [i[0] for i in delta["info"]] == [10]


@pytest.fixture
async def row_by_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Api]:
    """The busy site, its plan states made a row a step."""
    monkeypatch.setattr(planview, "STEP_ROWS", 1)
    async with serve(tmp_path) as api:
        await busy_site(api)
        yield api


async def test_a_job_that_changes_while_the_state_is_made(row_by_row: Api) -> None:
    api = row_by_row
    steps = plan_state_steps(api.svc)
    next(steps)  # the plan and the records are taken; one row made
    await api.call("alice", "DELETE", "/jobs/6")  # further on in the plan
    await api.call("alice", "DELETE", "/jobs/8")  # a record not read yet
    state = run_through(steps)
    # Every row has its info; the deleted jobs are in no order, in their state now.
    assert set(state.rows) == set(state.info) == set(range(1, 10))
    assert state.order == [[4, 5, 7, 9]]
    assert state.rows[6][1] == state.rows[8][1] == "F"
    # The next state has neither.
    now = plan_state(api.svc)
    assert set(now.rows) == {1, 2, 3, 4, 5, 7, 9}


def spinning(svc: BatchService, until: Any, made: list[int]) -> Generator[None, None, PlanState]:
    """plan_state_steps that, once it has taken the plan and the records, yields until
    ``until()`` holds (at most 10,000 times) before it goes on (STEP_ROWS of 1)."""
    made.append(svc.seq)
    steps = plan_state_steps(svc)
    next(steps)
    for _ in range(10_000):
        if until():
            break
        yield
    else:
        raise AssertionError("the event loop never ran what was waiting")
    return (yield from steps)


async def test_other_requests_are_answered_while_the_plan_is_made(
    row_by_row: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    api, svc = row_by_row, row_by_row.svc
    made: list[int] = []
    before = svc.seq
    monkeypatch.setattr(
        planfeed, "plan_state_steps", lambda s: spinning(s, lambda: svc.seq > before, made)
    )
    # The plan is made only once the submission sent after it has been answered.
    got = await asyncio.gather(
        api.client.get("/plan", headers=headers("alice")),
        api.submit("bob", nodes=1, walltime=60, name="meanwhile"),
    )
    first = await got[0].json()
    assert got[0].status == 200 and made == [before]
    assert got[1]["name"] == "meanwhile"
    # The state began before the submission: the next poll makes it again and has it.
    monkeypatch.setattr(planfeed, "plan_state_steps", plan_state_steps)
    resp = await api.client.get(f"/plan?since={first['version']}", headers=headers("alice"))
    delta = await resp.json()
    assert delta["base"] == first["version"]
    assert [i[0] for i in delta["info"]] == [svc.seq]


async def test_polls_while_the_plan_is_made_share_it(
    row_by_row: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = row_by_row
    made: list[int] = []
    feed = api.client.app[PLAN_FEED]
    spins = iter(range(200))  # enough loop turns for the other polls to arrive
    monkeypatch.setattr(
        planfeed,
        "plan_state_steps",
        lambda s: spinning(s, lambda: next(spins, None) is None, made),
    )
    answers = await asyncio.gather(
        *(api.client.get("/plan", headers=headers(who)) for who in ("alice", "bob", "boss"))
    )
    bodies = [await a.json() for a in answers]
    assert len(made) == 1 and feed.number == 1
    assert {b["version"] for b in bodies} == {feed.current().name}
    assert all(b["base"] is None and len(b["jobs"]) == 9 for b in bodies)
