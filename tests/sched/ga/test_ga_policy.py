"""The ga policy's passes on a hand-made machine view: in a replay the search runs in the
pass; in the daemon it runs on the offload, the pass that starts it starts nothing, the
pass after it serves the order found (jobs that arrived meanwhile behind), and a search
starts again when the state moved on. Its parameters, budgets and report."""

from __future__ import annotations

import random
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

import numpy as np
import pytest

from batchd.model.job import Job
from batchd.model.utility import Utility
from batchd.sched.core.plans import running_arrays_of
from batchd.sched.core.policy import BuildContext, Placement
from batchd.sched.ga import policy as ga_policy
from batchd.sched.ga.policy import DAEMON_BUDGET, GAParams, GeneticPolicy
from batchd.sched.ga.problem import Problem
from batchd.sched.ga.search import SearchResult

T = TypeVar("T")


class View:
    def __init__(self, now: int, capacity: int, free: int, running: list[tuple[int, int]]):
        self.index = 0
        self.now = now
        self.capacity = capacity
        self.free = free
        self.overrun = False
        self.running = running

    def running_ends(self) -> list[int]:
        return [end for end, _ in self.running]

    def running_widths(self) -> list[int]:
        return [width for _, width in self.running]

    def running_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return running_arrays_of(self)

    def reservations(self) -> list[tuple[int, int, int]]:
        return []


class HeldOffload:
    """Keeps the work until the test runs it."""

    def __init__(self) -> None:
        self.work: list[tuple[Callable[[], Any], Future[Any]]] = []

    def submit(self, work: Callable[[], T]) -> Future[T]:
        future: Future[T] = Future()
        self.work.append((work, future))
        return future

    def finish(self) -> None:
        work, future = self.work.pop(0)
        future.set_result(work())


class Observer:
    def __init__(self) -> None:
        self.searches: list[str] = []

    def switched(self, *args: object) -> None:
        pass

    def tuned(self, case: str, seconds: float) -> None:
        pass

    def searched(self, seconds: float, stopped: str) -> None:
        assert seconds >= 0
        self.searches.append(stopped)


def job(i: int, width: int, utility: str | None, submit: int = 0, estimate: int = 10) -> Job:
    fn = Utility.parse(utility) if utility else None
    return Job(id=i, submit=submit, width=width, estimate=estimate, runtime=estimate, utility=fn)


# Two free nodes: job 1 (1 node, worth 60 falling to 0 at 20 s) and job 2 (2 nodes, worth
# 100 falling to 0 at 20 s). Arrival order earns 30; job 2 first earns 50 (test_ga.py).
def two_jobs() -> list[Job]:
    return [job(1, 1, "0:60,20:0"), job(2, 2, "0:100,20:0")]


def policy(offload: HeldOffload | None = None, **params: Any) -> GeneticPolicy:
    p = GAParams(**{"population": 4, "generations": 2, "seed": 7, **params})
    built = GeneticPolicy(p, BuildContext(offload=offload))
    built.observe(Observer())
    return built


def observed(p: GeneticPolicy) -> list[str]:
    assert isinstance(p.observer, Observer)
    return p.observer.searches


def started(placements: list[Placement]) -> list[int]:
    return [pl.job.id for pl in placements]


def test_the_parameters_and_their_defaults() -> None:
    p = GAParams()
    assert (p.population, p.generations, p.mutation, p.searched) == (20, 100, 0.1, 200)
    assert p.budget is None and p.seed is None


def test_the_budget_is_none_in_a_replay_and_a_second_in_the_daemon() -> None:
    assert policy().budget is None
    assert policy(budget=0.0).budget is None
    assert policy(budget=2.5).budget == 2.5
    assert policy(HeldOffload()).budget == DAEMON_BUDGET == 1.0
    assert policy(HeldOffload(), budget=3.0).budget == 3.0
    assert policy(HeldOffload(), budget=0.0).budget is None


def test_the_seed_parameter_or_the_context_seeds_the_search() -> None:
    a = GeneticPolicy(GAParams(seed=5), BuildContext(seed=1)).rng.random()
    b = GeneticPolicy(GAParams(seed=5), BuildContext(seed=2)).rng.random()
    assert a == b == np.random.default_rng(5).random()
    c = GeneticPolicy(GAParams(), BuildContext(seed=1)).rng.random()
    expected = np.random.default_rng(random.Random(1).getrandbits(64)).random()
    assert c == expected
    assert GeneticPolicy(GAParams(), BuildContext(seed=2)).rng.random() != c


def test_a_replay_pass_serves_the_order_found() -> None:
    p = policy()
    view = View(0, 2, 2, [])
    for j in two_jobs():
        p.job_submitted(view, j)
    assert p.order() == "GA"
    assert p.explain(two_jobs()[0], 0) is None
    assert started(p.schedule(view)) == [2]  # the 2-node job first: it earns more
    assert p.report() == {
        "ga": {
            "searches": 1,
            "generations": 2,
            "budget_stops": 0,
            "improved_share": 0.0,  # the best seed order is already the best
            "avg_jobs": 2.0,
            "search_seconds_mean": p.seconds_total,
            "search_seconds_max": p.seconds_max,
        }
    }
    assert p.seconds_max == p.seconds_total >= 0
    assert observed(p) == ["generations"]


def test_a_replay_pass_that_cannot_matter_searches_nothing() -> None:
    p = policy()
    view = View(0, 3, 3, [])
    for j in two_jobs():
        p.job_submitted(view, j)
    assert started(p.schedule(view)) == [1, 2]  # both fit at once
    assert p.searches == 0
    assert p.report()["ga"] == {
        "searches": 0,
        "generations": 0,
        "budget_stops": 0,
        "improved_share": 0.0,
        "avg_jobs": 0.0,
        "search_seconds_mean": 0.0,
        "search_seconds_max": 0.0,
    }


def test_a_report_averages_over_the_searches() -> None:
    p = policy()
    p._note(SearchResult(np.arange(2), 5.0, 3.0, 4, 0.5, "budget"), 6)
    p._note(SearchResult(np.arange(2), 3.0, 3.0, 2, 1.5, "generations"), 2)
    assert p.report() == {
        "ga": {
            "searches": 2,
            "generations": 6,
            "budget_stops": 1,
            "improved_share": 0.5,
            "avg_jobs": 4.0,
            "search_seconds_mean": 1.0,
            "search_seconds_max": 1.5,
        }
    }
    assert observed(p) == ["budget", "generations"]


def test_in_the_daemon_the_search_runs_on_the_offload() -> None:
    offload = HeldOffload()
    p = policy(offload)
    view = View(0, 2, 2, [])
    jobs = two_jobs()
    for j in jobs:
        p.job_submitted(view, j)
    assert p.schedule(view) == []  # the jobs wait for the search
    assert len(offload.work) == 1
    reason = "the ga scheduler is searching for the best queue order"
    assert p.explain(jobs[0], 0) == reason
    assert p.schedule(view) == []  # still running: no second search
    assert len(offload.work) == 1
    offload.finish()
    assert started(p.schedule(view)) == [2]
    assert p.explain(jobs[0], 0) is None
    assert offload.work == []  # nothing moved on: no new search
    assert p.searches == 1 and observed(p) == ["generations"]


def test_a_pass_that_cannot_matter_does_not_wait_for_a_search() -> None:
    offload = HeldOffload()
    p = policy(offload)
    view = View(0, 3, 3, [])
    for j in two_jobs():
        p.job_submitted(view, j)
    assert started(p.schedule(view)) == [1, 2]
    assert offload.work == []


@pytest.mark.parametrize("event", ["submitted", "ended", "resumed", "withdrawn", "invalidated"])
def test_a_search_starts_again_when_the_state_moved_on(event: str) -> None:
    offload = HeldOffload()
    p = policy(offload)
    # 2 of 4 nodes free until 5. Whatever the order, one node is left free after the
    # pass and two jobs wait, one of which fits it: the order matters again.
    view = View(0, 4, 2, [(5, 2)])
    head = job(1, 3, "0:100,200:0")
    long = job(2, 1, "0:50,300:0", estimate=100)
    short = job(3, 1, "0:40,100:0", submit=1)
    other = job(4, 2, "0:30,100:0", submit=2)
    for j in (head, long, short, other):
        p.job_submitted(view, j)
    assert p.schedule(view) == []
    before = len(p.queue.jobs)
    if event == "submitted":
        p.job_submitted(view, job(5, 3, "0:10,20:0", submit=3))
    elif event == "ended":
        p.job_ended(view, job(9, 1, None))
    elif event == "resumed":
        p.job_resumed(view, job(9, 1, None))
    elif event == "withdrawn":
        p.withdraw(view, other)
    else:
        p.invalidate()
    offload.finish()
    placements = p.schedule(view)
    assert len(placements) == 1
    assert len(offload.work) == 1  # the rest is searched again
    assert p._pending is not None
    assert len(p._pending.jobs) == len(p.queue.jobs) <= before
    # The new search sees the job started in that pass as running: 1 node free.
    work, _ = offload.work[0]
    result = work()
    assert sorted(result.order.tolist()) == list(range(len(p.queue.jobs)))


def test_without_a_change_no_search_follows_the_pass() -> None:
    offload = HeldOffload()
    p = policy(offload)
    view = View(0, 4, 2, [(5, 2)])
    for j in (job(1, 3, "0:100,200:0"), job(2, 1, "0:50,300:0", estimate=100)):
        p.job_submitted(view, j)
    p.job_submitted(view, job(3, 1, "0:40,100:0", submit=1))
    assert p.schedule(view) == []
    offload.finish()
    assert len(p.schedule(view)) == 1
    assert offload.work == []


def test_jobs_that_arrived_during_a_search_follow_its_order_by_arrival() -> None:
    offload = HeldOffload()
    p = policy(offload)
    view = View(0, 2, 2, [])
    a, b = two_jobs()
    for j in (a, b):
        p.job_submitted(view, j)
    assert p.schedule(view) == []
    late_a = job(7, 1, None, submit=5)
    late_b = job(6, 1, None, submit=4)
    p.job_submitted(view, late_a)
    p.job_submitted(view, late_b)
    p.withdraw(view, a)
    offload.finish()
    busy = View(0, 2, 0, [(10, 2)])
    assert p.schedule(busy) == []  # nothing free: the new order shows in the queue
    # The search put b first; a was withdrawn; the late jobs follow by submit time.
    assert [j.id for j in p.queue.jobs] == [2, 6, 7]
    assert offload.work == []  # nothing free: no new search either


def test_the_policy_is_named_ga() -> None:
    assert policy().name == "ga"


def test_only_the_daemon_warms_the_search_up(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(ga_policy, "warm_up", lambda: calls.append(1))
    policy()
    assert calls == []
    policy(HeldOffload())
    assert calls == [1]


def test_the_budget_stops_a_search() -> None:
    p = policy(budget=1e-9, generations=1000)
    view = View(0, 2, 2, [])
    for j in two_jobs():
        p.job_submitted(view, j)
    p.schedule(view)
    assert p.budget_stops == 1 and p.generations < 1000
    assert observed(p) == ["budget"]


# 4 nodes, 3 free until 5. The 4-node job first earns most: it waits for the shadow at
# 5 and the 2-node job of 5 s backfills; the 1-node job of 100 s does not (no extra
# node). After that pass 1 node is free and two jobs wait: worth a search.
def blocked_queue() -> tuple[View, list[Job]]:
    view = View(0, 4, 3, [(5, 1)])
    head = job(1, 4, "0:1000,50:0")
    mid = job(2, 2, "0:10,200:0", estimate=5)
    short = job(3, 1, "0:10,200:0", estimate=100)
    return view, [head, mid, short]


def test_the_search_after_a_pass_sees_the_jobs_it_started(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[tuple[int, int, list[int], list[int], list[int]]] = []
    build = Problem.build

    def recorded(now: int, capacity: int, ends: list[int], widths: list[int],
                 jobs: list[Job], searched: int) -> Problem:  # fmt: skip
        built.append((now, capacity, list(ends), list(widths), [j.id for j in jobs]))
        return build(now, capacity, ends, widths, jobs, searched)

    monkeypatch.setattr(ga_policy.Problem, "build", staticmethod(recorded))
    offload = HeldOffload()
    p = policy(offload)
    view, jobs = blocked_queue()
    for j in jobs:
        p.job_submitted(view, j)
    assert p.schedule(view) == []
    p.invalidate()
    offload.finish()
    assert started(p.schedule(view)) == [2]
    assert len(offload.work) == 1
    # (The first problem built is the warm-up's.)
    assert built[1:] == [(0, 4, [5], [1], [1, 2, 3]), (0, 4, [5, 5], [1, 2], [1, 3])]


@pytest.mark.parametrize("event", ["submitted", "ended", "resumed", "withdrawn", "invalidated"])
def test_every_change_counts_even_two_of_them(event: str) -> None:
    # The search starts after exactly two events (the two submissions); then two changes
    # come while it runs. However they are counted, the state moved on.
    offload = HeldOffload()
    p = policy(offload)
    view, (head, mid, short) = blocked_queue()
    p.job_submitted(view, head)
    p.job_submitted(view, short)
    assert p.schedule(view) == []
    changes = {
        "submitted": lambda: p.job_submitted(view, mid),
        "ended": lambda: p.job_ended(view, job(9, 1, None)),
        "resumed": lambda: p.job_resumed(view, job(9, 1, None)),
        "withdrawn": lambda: p.withdraw(view, short),
        "invalidated": p.invalidate,
    }
    changes[event]()
    if event == "withdrawn":
        p.job_submitted(view, short)
    elif event == "invalidated":
        p.job_ended(view, job(9, 1, None))
    else:
        p.invalidate()
    offload.finish()
    p.schedule(view)
    assert len(offload.work) == 1, event
