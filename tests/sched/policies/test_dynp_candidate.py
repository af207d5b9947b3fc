"""dynP's FCFS candidate (``fcfs_candidate``): the queue sorted, or as it stands.

Schedules are worked out by hand. The sums below are of width x (planned end -
submit): the three plans of a step hold the same jobs, so the sums compare as
their ARTwW qualities do.
"""

from __future__ import annotations

import pytest

from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.sched.core.order import ORDERS, OrderedQueue
from batchd.sched.policies.decider import FCFS, LJF, SJF
from batchd.sched.policies.dynp import DynP
from batchd.sched.policies.standing import StandingQueue
from batchd.sched.registry import PolicyError, make_policy


def _dynp(decider: str, candidate: str) -> DynP:
    policy = make_policy("dynp", {"decider": decider, "fcfs_candidate": candidate})
    assert isinstance(policy, DynP)
    return policy


def _engine(policy: DynP, jobs: list[Job], nodes: int) -> Engine:
    engine = Engine(Grid([Machine("m", nodes)]), [policy])
    engine.load(jobs)
    return engine


def _used(cases: dict[str, int]) -> dict[str, int]:
    return {case: n for case, n in cases.items() if n}


# Two nodes. A (1 node) runs [0, 1000). B (2 nodes, 5000 s) arrives at 10, C (2 nodes,
# 100 s) at 20, D (1 node, 500 s) at 30.
#  t=20: FCFS = LJF = [B, C]: B 1000, C 6000; SJF [C, B]: C 1000, B 1100. Case 7: SJF.
#  t=30: FCFS [B, C, D] and LJF [B, D, C] plan B 1000, C 6000, D 30 (D backfills the
#        free node): 2*5990 + 2*6080 + 500 = 24,640. SJF [D, C, B]: D 30, C 1000,
#        B 1100: 500 + 2*1080 + 2*6090 = 14,840.
#        sorted: FCFS = LJF > SJF, case 7 again: SJF.
#        as-queued: the list is SJF's of t=20 with D appended, [C, B, D]: C 1000,
#        B 1100, D 30, the SJF plan. FCFS = SJF < LJF with SJF in force: case 6b.
def _b_c_d() -> list[Job]:
    return [
        Job(1, 0, 1, 1000, 1000),
        Job(2, 10, 2, 5000, 5000),
        Job(3, 20, 2, 100, 100),
        Job(4, 30, 1, 500, 500),
    ]


@pytest.mark.parametrize("decider", ["simple", "advanced"])
def test_sorted_candidate_sees_case_7_and_keeps_sjf(decider: str):
    policy = _dynp(decider, "sorted")
    jobs = _b_c_d()
    _engine(policy, jobs, 2).run()
    assert _used(policy.cases) == {"7": 4}  # at 20, 30, D's end (530), A's end (1000)
    assert [(j.start, j.result.started_by) for j in jobs[1:]] == [
        (1100, SJF),
        (1000, SJF),
        (30, SJF),
    ]


def test_as_queued_candidate_equals_the_sjf_plan_and_advanced_keeps_sjf():
    policy = _dynp("advanced", "as-queued")
    jobs = _b_c_d()
    engine = _engine(policy, jobs, 2)
    engine.run(until=30)
    assert _used(policy.cases) == {"7": 1, "6b": 1}
    assert policy.current == SJF
    # At 530 and 1000 the list is SJF's, so FCFS = SJF again: 6b, SJF kept.
    engine.run()
    assert _used(policy.cases) == {"7": 1, "6b": 3}
    assert [(j.start, j.result.started_by) for j in jobs[1:]] == [
        (1100, SJF),
        (1000, SJF),
        (30, SJF),
    ]


def test_as_queued_simple_decider_adopts_a_fcfs_plan_it_did_not_measure():
    policy = _dynp("simple", "as-queued")
    jobs = _b_c_d()
    engine = _engine(policy, jobs, 2)
    engine.run(until=30)
    # 6b: the simple decider takes FCFS (FCFS <= SJF). It measured [C, B, D] (C 1000,
    # B 1100) and adopts the plan sorted by submit time: B 1000, C 6000. D starts now.
    assert _used(policy.cases) == {"7": 1, "6b": 1}
    assert policy.current == FCFS
    assert [j.id for j in policy.queue.jobs] == [2, 3]
    assert policy.queue.starts == [1000, 6000]
    assert (jobs[3].start, jobs[3].result.started_by) == (30, FCFS)
    # 530 (D ends): FCFS in force, the list sorted: FCFS = LJF > SJF, case 7, SJF.
    # 1000 (A ends): the list is SJF's again: 6b, FCFS, and B starts first after all.
    engine.run()
    assert _used(policy.cases) == {"7": 2, "6b": 2}
    assert [(j.start, j.result.started_by) for j in jobs[1:3]] == [(1000, FCFS), (6000, FCFS)]


# Two nodes. A (2 nodes) runs [0, 1500). B (1 node, 1000 s) arrives at 3, alone: placed
# at 1500. C (2 nodes, 1500 s) arrives at 6:
#  FCFS = SJF = [B, C]: B 1500, C 2500: 2497 + 2*3994 = 10,485; LJF [C, B]: C 1500,
#  B 3000: 2*2994 + 3997 = 9,985. Case 5: LJF.
# At 1500 (A ends) the list is LJF's (as-queued), so FCFS = LJF < SJF: case 8c; or SJF's
# (as-queued-sjf), so FCFS = SJF > LJF: case 5.
def _b_c() -> list[Job]:
    return [Job(1, 0, 2, 1500, 1500), Job(2, 3, 1, 1000, 1000), Job(3, 6, 2, 1500, 1500)]


@pytest.mark.parametrize(
    ("candidate", "decider", "cases", "first"),
    [
        ("as-queued", "advanced", {"5": 1, "8c": 1}, (3, LJF)),
        ("as-queued", "simple", {"5": 1, "8c": 1}, (2, FCFS)),  # 8c: the simple decider's FCFS
        ("as-queued-sjf", "advanced", {"5": 2}, (3, LJF)),
        ("as-queued-sjf", "simple", {"5": 2}, (3, LJF)),
    ],
)
def test_after_ljf_the_list_stands_in_ljf_or_sjf_order(
    candidate: str, decider: str, cases: dict[str, int], first: tuple[int, str]
):
    policy = _dynp(decider, candidate)
    jobs = _b_c()
    _engine(policy, jobs, 2).run()
    assert _used(policy.cases) == cases
    starter = next(j for j in jobs if j.start == 1500)
    assert (starter.id, starter.result.started_by) == first


def _queues(jobs: list[Job]) -> dict[str, OrderedQueue]:
    queues = {p: OrderedQueue(ORDERS[p.lower()]) for p in (FCFS, SJF, LJF)}
    for job in jobs:
        for q in queues.values():
            q.insert(job)
    return queues


def test_standing_queue_is_the_last_sort_with_newcomers_at_the_end():
    a, b, c, d = (Job(i, i, 1, est, est) for i, est in ((1, 300), (2, 100), (3, 200), (4, 50)))
    standing = StandingQueue(SJF)
    queues = _queues([a, b, c])
    assert standing.permutation(queues[SJF]) is None  # sorted, nothing appended
    queues = _queues([a, b, c, d])
    standing.append(d)
    order = standing.permutation(queues[SJF])  # SJF [d, b, c, a]; d moves to the end
    assert order is not None and [queues[SJF].jobs[i] for i in order] == [b, c, a, d]
    standing.discard([d])
    assert standing.appended == []
    standing.append(a)  # a is last in FCFS order anyway
    standing.sort_as(FCFS)
    assert (standing.base, standing.appended) == (FCFS, [])
    standing.append(d)
    assert standing.permutation(queues[FCFS]) is None  # d: the latest submit


def test_standing_queue_after_ljf_keeps_ljf_or_sjf_order():
    plain, sjf = StandingQueue(FCFS), StandingQueue(FCFS, ljf_as_sjf=True)
    plain.sort_as(LJF)
    sjf.sort_as(LJF)
    assert (plain.base, sjf.base) == (LJF, SJF)
    sjf.sort_as(FCFS)
    assert sjf.base == FCFS


def test_fcfs_candidate_default_is_sorted_and_bad_values_are_named():
    assert _dynp("advanced", "sorted").standing is None
    policy = make_policy("dynp")
    assert isinstance(policy, DynP) and policy.params.fcfs_candidate == "sorted"
    with pytest.raises(PolicyError, match="fcfs_candidate='unsorted'"):
        make_policy("dynp", {"fcfs_candidate": "unsorted"})
