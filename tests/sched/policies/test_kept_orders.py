"""dynP's kept plans: a step plans an order again from the last step's plan only while
that plan still holds, and then gets the plan it would have made afresh."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pytest

from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.states import JobState
from batchd.model.times import NEVER
from batchd.sched.core.order import ORDERS, OrderedQueue
from batchd.sched.core.profile import Profile
from batchd.sched.policies import dynp, kept_orders
from batchd.sched.policies.dynp import DynP
from batchd.sched.policies.kept_orders import KeptOrders, OrderPlan
from batchd.sched.registry import make_policy

CAPACITY = 2


def running_base(now: int = 0, ends: tuple[int, ...] = (100,)) -> Profile:
    """Two nodes; one busy until 100."""
    return Profile.of_running(CAPACITY, now, list(ends), [1] * len(ends))


def planned(base: Profile, queue: OrderedQueue, now: int) -> OrderPlan:
    profile = base.copy()
    widths, durations = queue.arrays()
    return OrderPlan(profile, widths, durations, profile.plan(widths, durations, now))


def fcfs_queue(*jobs: Job) -> OrderedQueue:
    return queue_of("fcfs", *jobs)


def queue_of(order: str, *jobs: Job) -> OrderedQueue:
    queue = OrderedQueue(ORDERS[order])
    for job in jobs:
        queue.insert(job)
    return queue


def kept_with(base: Profile, plans: dict[str, OrderPlan]) -> KeptOrders:
    kept = KeptOrders()
    kept.keep(base, plans)
    return kept


def kept_plan_of(order: str, *jobs: Job) -> tuple[OrderedQueue, KeptOrders]:
    """``jobs`` queued in ``order`` (FCFS, SJF, LJF), its plan on ``running_base()`` kept."""
    base = running_base()
    queue = queue_of(order.lower(), *jobs)
    return queue, kept_with(base, {order: planned(base, queue, 0)})


A = Job(1, 0, 1, 50, 50)  # one node for 50 s
B = Job(2, 1, 2, 10, 10)  # both nodes for 10 s
C = Job(3, 2, 1, 30, 30)


def test_a_newcomer_is_planned_behind_the_kept_starts() -> None:
    queue, kept = kept_plan_of("FCFS", A, B)
    assert kept.base_holds(running_base(), 0)
    queue.insert(C)
    again = kept.plan("FCFS", queue, (C,), running_base(), 0, holding=True)
    assert again.starts.tolist() == [0, 100, 50]  # A now, B when both are free, C in between
    fresh = planned(running_base(), queue, 0)
    assert again.starts.tolist() == fresh.starts.tolist()
    assert again.profile.same_steps(fresh.profile)
    assert kept.hits == 1


def test_the_jobs_behind_a_newcomer_are_placed_again() -> None:
    # In SJF order C (30 s) goes before A (50 s): A must move, as a fresh plan moves it.
    queue, kept = kept_plan_of("SJF", A, B)
    assert kept.plans["SJF"].starts.tolist() == [100, 0]  # B (10 s) first, on both nodes
    queue.insert(C)
    again = kept.plan("SJF", queue, (C,), running_base(), 0, holding=True)
    fresh = planned(running_base(), queue, 0)
    assert kept.hits == 1
    assert again.starts.tolist() == fresh.starts.tolist() == [100, 0, 30]  # A moved
    assert again.profile.same_steps(fresh.profile)


def test_a_start_that_passed_unused_makes_the_order_plan_afresh() -> None:
    queue, kept = kept_plan_of("FCFS", A, B)
    queue.insert(C)
    later = running_base(10)
    again = kept.plan("FCFS", queue, (C,), later, 10, holding=True)  # A was planned at 0
    assert kept.hits == 0
    assert again.starts.tolist() == planned(later, queue, 10).starts.tolist() == [10, 100, 60]


def test_a_job_started_where_an_order_planned_it_keeps_that_orders_plan() -> None:
    base = running_base()
    fcfs = fcfs_queue(A, B)
    ljf = queue_of("ljf", A, B)
    plans = {"FCFS": planned(base, fcfs, 0), "LJF": planned(base, ljf, 0)}
    assert plans["LJF"].starts.tolist() == [0, 100]  # LJF lists A first too
    kept = kept_with(base, plans)
    fcfs.remove(A)  # the plan in force (FCFS) starts A now; the other queues still hold it
    kept.leaving("FCFS", {"FCFS": fcfs, "LJF": ljf}, [A], 0)
    ljf.remove(A)
    assert set(kept.plans) == {"FCFS", "LJF"}
    now_base = running_base(0, (50, 100))  # A runs until 50
    assert kept.base_holds(now_base, 0)
    for queue in (fcfs, ljf):
        queue.insert(C)
    for order, queue in (("FCFS", fcfs), ("LJF", ljf)):
        again = kept.plan(order, queue, (C,), now_base, 0, holding=True)
        assert again.starts.tolist() == planned(now_base, queue, 0).starts.tolist()
    assert kept.hits == 2


def test_a_job_started_that_an_order_planned_elsewhere_drops_that_orders_plan() -> None:
    base = running_base()
    fcfs = fcfs_queue(A, B)
    sjf = queue_of("sjf", A, B)
    plans = {"FCFS": planned(base, fcfs, 0), "SJF": planned(base, sjf, 0)}
    kept = kept_with(base, plans)
    started = [j for j, s in zip(sjf.jobs, plans["SJF"].starts.tolist(), strict=True) if s == 0]
    assert started == [A] and plans["FCFS"].starts.tolist()[0] == 0
    # Say SJF planned B now instead: FCFS (in force) starts A, and SJF's plan cannot stand.
    plans["SJF"].starts[sjf.index(A)] = 100
    fcfs.remove(A)
    kept.leaving("FCFS", {"FCFS": fcfs, "SJF": sjf}, [A], 0)
    assert kept.plans["FCFS"].holds and not kept.plans["SJF"].holds
    sjf.remove(A)
    assert kept.plans["SJF"].widths.tolist() == [2]  # its arrays still follow the queue
    now_base = running_base(0, (50, 100))
    again = kept.plan("SJF", sjf, (), now_base, 0, holding=True)
    assert kept.hits == 0 and again.starts.tolist() == [100]


def test_an_early_end_changes_the_base() -> None:
    base = running_base()
    kept = kept_with(base, {"FCFS": planned(base, fcfs_queue(A, B), 0)})
    assert kept.base_holds(running_base(5), 5)  # time passed: the same running jobs
    assert not kept.base_holds(Profile.of_running(CAPACITY, 5, [], []), 5)  # it ended at 5
    kept.drop()
    assert not kept.base_holds(running_base(), 0)


def test_without_a_holding_base_every_order_is_planned_afresh() -> None:
    queue, kept = kept_plan_of("FCFS", A, B)
    queue.insert(C)
    ended = Profile.of_running(CAPACITY, 0, [], [])  # the running job is gone
    again = kept.plan("FCFS", queue, (C,), ended, 0, holding=False)
    assert kept.hits == 0
    assert again.starts.tolist() == planned(ended, queue, 0).starts.tolist() == [0, 50, 0]


def _workload(seed: int) -> list[Job]:
    rng = random.Random(seed)
    jobs = []
    now = 0
    for i in range(1, 161):
        now += rng.choice([0, 0, 0, 1, 5, 20, 60])  # bursts at one second, and gaps
        estimate = rng.choice([10, 60, 300, 900])
        runtime = estimate if rng.random() < 0.3 else rng.randint(1, estimate)
        jobs.append(Job(i, now, rng.randint(1, 6), estimate, runtime))
    return jobs


Outcome = tuple[list[tuple[int, int | None, int | None]], object, object, int]


def _schedule(seed: int, params: dict[str, str], afresh: bool) -> Outcome:
    jobs = _workload(seed)
    monkeypatch = pytest.MonkeyPatch()
    if afresh:
        monkeypatch.setattr(kept_orders, "placed_again", lambda *args, **kw: None)
    policy = make_policy("dynp", params)
    assert isinstance(policy, DynP)
    engine = Engine(Grid([Machine("m", 8)]), [policy])
    engine.load(jobs)
    withdrawn = jobs[5::17]

    def withdraw(job: Job) -> None:
        if job.state is JobState.QUEUED:
            engine.withdraw(job)

    def withdrawal(job: Job) -> Callable[[], None]:
        return lambda: withdraw(job)

    for job in withdrawn:
        engine.call_at(job.submit + 3, withdrawal(job))
    engine.run()
    monkeypatch.undo()
    report = policy.report()["dynp"]
    return (
        [(j.id, j.start, j.end) for j in jobs],
        report["cases"],
        report["switches"],
        policy.kept_plans.hits,
    )


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("params", [{}, {"decider": "simple", "quality": "art"}])
def test_dynp_plans_from_kept_plans_as_it_would_afresh(
    seed: int, params: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dynp, "KEEP_FROM", 2)  # these queues are short: keep them all
    kept = _schedule(seed, params, afresh=False)
    afresh = _schedule(seed, params, afresh=True)
    assert kept[:3] == afresh[:3]
    assert kept[3] > 20 and afresh[3] == 0  # plans were taken from kept ones


def test_plans_are_kept_only_from_a_deep_enough_queue(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dynp, "KEEP_FROM", 1_000)
    assert _schedule(0, {}, afresh=False)[3] == 0
    monkeypatch.setattr(dynp, "KEEP_FROM", 20)
    assert _schedule(0, {}, afresh=False)[3] > 0


def test_a_newcomer_too_wide_for_the_machine_is_planned_at_never() -> None:
    queue, kept = kept_plan_of("FCFS", A, B)
    wide = Job(9, 3, CAPACITY + 1, 10, 10)
    queue.insert(wide)
    again = kept.plan("FCFS", queue, (wide,), running_base(), 0, holding=True)
    assert kept.hits == 1 and again.starts.tolist() == [0, 100, NEVER]
    assert np.array_equal(again.widths, [1, 2, CAPACITY + 1])
    assert again.widths.dtype == again.durations.dtype == again.starts.dtype == np.int64


def test_a_burst_of_submissions_is_planned_from_the_kept_plans(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One node busy until 1000; eight jobs queue at one second, in no order of length, so
    # the three orders list them differently from the third on. Every step from the
    # queue of KEEP_FROM jobs on keeps its plans, nothing starts, and each newcomer is
    # placed into the three kept plans: three orders planned from kept plans per step.
    monkeypatch.setattr(dynp, "KEEP_FROM", 3)
    estimates = [300, 100, 200, 500, 400, 50, 350, 250]
    jobs = [Job(1, 0, 1, 1000, 1000)]
    jobs += [Job(i, 10, 1, e, e) for i, e in enumerate(estimates, start=2)]
    policy = make_policy("dynp")
    assert isinstance(policy, DynP)
    engine = Engine(Grid([Machine("m", 1)]), [policy])
    engine.load(jobs)
    hits: list[int] = []
    tune = policy.tune

    def counted(view: object, newcomer: Job | None = None) -> None:
        tune(view, newcomer)  # type: ignore[arg-type]
        hits.append(policy.kept_plans.hits)

    policy.tune = counted  # type: ignore[method-assign]
    engine.run(until=10)
    # Steps at queues of 2 to 8 jobs; kept from the queue of 3 on: 5 steps from kept plans.
    assert hits == [0, 0, 3, 6, 9, 12, 15]
    engine.run()
    assert all(j.start is not None for j in jobs)


def test_a_fresh_keeper_has_nothing_to_plan_from() -> None:
    kept = KeptOrders()
    assert not kept.base_holds(running_base(), 0)
    queue = fcfs_queue(A, B)
    kept.leaving("FCFS", {"FCFS": queue}, [A], 0)  # nothing kept: nothing to follow
    assert kept.plans == {} and kept.started == []
    plan = kept.plan("FCFS", queue, (), running_base(), 0, holding=True)
    assert kept.hits == 0 and plan.starts.tolist() == [0, 100]
    assert plan.widths.dtype == plan.durations.dtype == plan.starts.dtype == np.int64


def test_starts_at_two_passes_both_count_in_the_base() -> None:
    # Jobs the plan in force starts at two passes before the next step: the base then
    # holds both, and so must the base expected from the kept one.
    wide = Job(4, 0, 1, 20, 20)
    base = Profile.of_running(3, 0, [100], [1])
    queue = fcfs_queue(A, wide, B)
    kept = kept_with(base, {"FCFS": planned(base, queue, 0)})
    assert kept.plans["FCFS"].starts.tolist() == [0, 0, 50]
    for job in (A, wide):
        queue.remove(job)
        kept.leaving("FCFS", {"FCFS": queue}, [job], 0)
    assert kept.started == [(0, 50, 1), (0, 20, 1)]
    assert kept.base_holds(Profile.of_running(3, 0, [20, 50, 100], [1, 1, 1]), 0)


def test_an_order_whose_count_of_starts_differs_goes_and_the_others_still_follow() -> None:
    # The plan in force starts A now, but B is said to start too: its plan cannot
    # follow and goes; the LJF plan, planned B later, stops holding but keeps its arrays
    # in step with its queue.
    base = running_base()
    fcfs = fcfs_queue(A, B)
    ljf = queue_of("ljf", A, B)
    kept = kept_with(base, {"FCFS": planned(base, fcfs, 0), "LJF": planned(base, ljf, 0)})
    for job in (A, B):
        fcfs.remove(job)
    kept.leaving("FCFS", {"FCFS": fcfs, "LJF": ljf}, [A, B], 0)
    assert set(kept.plans) == {"LJF"}
    assert not kept.plans["LJF"].holds
    assert kept.plans["LJF"].widths.size == 0


def test_newcomers_of_one_step_are_placed_where_the_order_puts_them() -> None:
    # SJF: the kept plan is B (10 s) then A (50 s); two newcomers of 5 s and 30 s come in
    # first and third. The jobs before the first newcomer keep their starts; the rest
    # are placed again, as a fresh plan places them.
    queue, kept = kept_plan_of("SJF", A, B)
    short, middle = Job(7, 3, 1, 5, 5), Job(8, 3, 2, 30, 30)
    queue.insert(short)
    queue.insert(middle)
    assert [j.id for j in queue.jobs] == [7, 2, 8, 1]
    again = kept.plan("SJF", queue, (middle, short), running_base(), 0, holding=True)
    fresh = planned(running_base(), queue, 0)
    assert kept.hits == 1
    assert again.starts.tolist() == fresh.starts.tolist() == [0, 100, 110, 5]
    assert again.widths.tolist() == [1, 2, 2, 1] and again.durations.tolist() == [5, 10, 30, 50]
    assert again.profile.same_steps(fresh.profile)


def test_newcomers_that_do_not_match_the_queue_plan_it_afresh() -> None:
    queue, kept = kept_plan_of("FCFS", A, B)
    queue.insert(C)
    again = kept.plan("FCFS", queue, (), running_base(), 0, holding=True)  # C not named
    assert kept.hits == 0 and again.starts.tolist() == [0, 100, 50]


@pytest.mark.parametrize("seed", range(6))
def test_removed_entries_are_those_np_delete_drops_and_the_array_is_new(seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 1_000, int(rng.integers(1, 80)))
    for gone in (0, 1, 2, 15, 16, 40, len(values)):  # by slices below 16, by a mask from it
        if gone > len(values):
            continue
        places = sorted(rng.choice(len(values), gone, replace=False).tolist())
        left = kept_orders._removed(values, places)
        assert left.tolist() == np.delete(values, places).tolist()
        assert not np.shares_memory(left, values)
