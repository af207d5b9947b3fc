"""The planned-schedule gauges of a deep queue: the values of the whole plan, told by
the policy without planning or walking the queue again after a submission, and not
asked for again while the plan stands."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from api_helpers import T0, new_service
from batchd.engine.clock import VirtualClock
from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.sched.core.outline import PlanOutline
from batchd.server.schemas import JobSubmit
from batchd.server.service import BatchService
from batchd.server.service.operations import jobs as job_ops

QUEUED = 3000  # more than the collector's first threshold (700) many times over


@pytest.fixture
def deep(tmp_path: Path) -> Iterator[BatchService]:
    """The 8-node test site: one job holds every node for 1000 s, QUEUED jobs wait."""
    svc = new_service(tmp_path / "state.db")
    boss = svc.caller("boss")
    job_ops.submit(svc, boss, JobSubmit(nodes=8, walltime=1000))
    for i in range(QUEUED):
        job_ops.submit(svc, boss, JobSubmit(nodes=1 + i % 8, walltime=60 + i % 500))
    yield svc
    svc.store.close()  # type: ignore[union-attr]


def expected(svc: BatchService) -> tuple[float, float, float]:
    """The gauges as the whole plan gives them: head start, head wait, makespan."""
    plan = svc.scheduler.plan(0)
    end = max(svc.engine.machines[0].running_ends(), default=svc.now)
    for job, start in plan:
        if start != NEVER:
            end = max(end, start + job.duration)
    head, start = plan[0]
    return float(start), float(svc.now - head.submit), float(end - svc.now)


def gauges(svc: BatchService) -> tuple[float, float, float]:
    g = svc.metrics.plan_of(0)
    return g.head_start, g.head_wait, g.makespan


def test_the_gauges_are_those_of_the_whole_plan(deep: BatchService) -> None:
    deep.refresh_plan_gauges()
    assert gauges(deep) == expected(deep)
    assert gauges(deep)[0] == T0 + 1000  # the first waiting job starts when the big one ends


def test_a_refresh_leaves_the_collector_nothing_to_walk(deep: BatchService) -> None:
    job_ops.submit(deep, deep.caller("boss"), JobSubmit(nodes=1, walltime=60))  # a new plan
    gc.collect()
    before = gc.get_stats()[0]["collections"], gc.get_count()[0]
    deep.refresh_plan_gauges()
    after = gc.get_stats()[0]["collections"], gc.get_count()[0]
    # The plan (one tuple per waiting job) was made and dropped with the collector paused:
    # kept, it would start several collections of the youngest generation on its own.
    assert after[0] - before[0] <= 1
    assert after[1] < 700
    assert gc.isenabled()


def test_a_standing_plan_is_not_made_again(
    deep: BatchService, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep.refresh_plan_gauges()
    made: list[int] = []
    outline = deep.scheduler.plan_outline

    def counted(machine: int) -> PlanOutline:
        made.append(machine)
        return outline(machine)

    monkeypatch.setattr(deep.scheduler, "plan_outline", counted)
    clock = deep.clock
    assert isinstance(clock, VirtualClock)
    clock.set(T0 + 500)  # no event, no planned start reached: the plan stands
    deep.sync()
    deep.refresh_plan_gauges()
    assert made == []
    assert gauges(deep) == (T0 + 1000, 500.0, expected(deep)[2])
    made.clear()
    clock.set(T0 + 1000)  # the big job's walltime: it ends, the queue moves on
    deep.sync()
    deep.refresh_plan_gauges()
    assert made == [0]
    monkeypatch.undo()
    assert gauges(deep) == expected(deep)


def test_a_submission_is_not_planned_or_walked_for_the_gauges(
    deep: BatchService, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep.refresh_plan_gauges()
    made: list[int] = []
    read: list[int] = []

    def plan(machine: int, keep: bool = True) -> list[tuple[Job, int]]:
        made.append(machine)
        return []

    walk = PlanOutline.of

    def walked(plan: list[tuple[Job, int]]) -> PlanOutline:
        read.append(len(plan))
        return walk(plan)

    for policy in ("fcfs-easy", "fcfs-cons"):
        deep.scheduler.use(0, deep.scheduler.choose(0, policy, None))
        deep.refresh_plan_gauges()  # a whole new plan: the first outline walks it
        assert gauges(deep) == expected(deep)
        monkeypatch.setattr(deep.scheduler, "plan", plan)
        monkeypatch.setattr(PlanOutline, "of", walked)
        job_ops.submit(deep, deep.caller("boss"), JobSubmit(nodes=3, walltime=90_000))
        deep.refresh_plan_gauges()
        assert made == [] and read == []
        monkeypatch.undo()
        assert gauges(deep) == expected(deep)
        assert gauges(deep)[2] > 90_000  # the new job's end is the plan's
