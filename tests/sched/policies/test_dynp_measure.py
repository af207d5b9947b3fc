"""dynP's pieces on their own: the basic AERT bounds, the reduced future a plan is measured
on, and the report's averages. Values are worked out by hand."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from spies import QuarterClock

from batchd.engine.core import Engine
from batchd.engine.machine import MachineState
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.times import NEVER
from batchd.sched.core.order import ORDERS, OrderedQueue
from batchd.sched.policies import dynp
from batchd.sched.policies.decider import FCFS, LJF, SJF
from batchd.sched.policies.dynp import DynP, DynPBasic
from batchd.sched.registry import make_policy

# -- basic dynP: the AERT against the bounds -------------------------------------------


def _basic(lower: int, upper: int) -> DynPBasic:
    policy = make_policy("dynp-basic", {"lower": str(lower), "upper": str(upper), "threshold": "1"})
    assert isinstance(policy, DynPBasic)
    return policy


@pytest.mark.parametrize(
    ("estimates", "chosen"),
    [
        ([0], [FCFS]),  # an AERT of 0 says nothing: the order stays
        ([1], [SJF]),
        ([100], [SJF]),  # up to the lower bound: SJF
        ([101], [FCFS]),
        ([300, 100], [LJF, FCFS]),  # (300 + 100) / 2 = 200, the upper bound: FCFS
        ([201], [LJF]),
    ],
)
def test_basic_aert_against_lower_100_and_upper_200(estimates: list[int], chosen: list[str]):
    # One idle node, nothing started: each newcomer counts with those before it.
    policy = _basic(100, 200)
    assert policy.name == "dynp-basic"
    view = MachineState(0, Machine("m", 1), policy, kill=True)
    got = []
    for i, estimate in enumerate(estimates, start=1):
        policy.job_submitted(view, Job(i, 0, 1, estimate, 1))
        got.append(policy.current)
    assert got == chosen


def test_basic_switch_promises_the_start_of_the_new_plan():
    # One node idle: the job that makes dynP switch to SJF is planned, and promised, now.
    policy = _basic(100, 200)
    view = MachineState(0, Machine("m", 1), policy, kill=True)
    job = Job(1, 0, 1, 50, 50)
    policy.job_submitted(view, job)
    assert policy.current == SJF
    assert job.result.submit_plan == 0


def test_basic_zero_aert_with_zero_bounds_keeps_the_order():
    # lower = upper = 0: any positive AERT is above both (LJF). Job 1 (10 s) starts at
    # once; job 2 comes with no estimate, alone in the queue: AERT 0, LJF is kept. An
    # idle machine's first job with AERT 0 keeps FCFS the same way.
    policy = _basic(0, 0)
    jobs = [Job(1, 0, 1, 10, 10), Job(2, 1, 1, 0, 1)]
    engine = Engine(Grid([Machine("m", 1)]), [policy])
    engine.load(jobs)
    engine.run()
    assert [j.result.started_by for j in jobs] == [LJF, LJF]
    fresh = _basic(0, 0)
    fresh.job_submitted(MachineState(0, Machine("m", 1), fresh, kill=True), Job(1, 0, 1, 0, 1))
    assert fresh.current == FCFS


# -- the reduced future ---------------------------------------------------------------------


def _measured(future: str, starts: list[int], now: int = 0, submits: list[int] | None = None):
    policy = make_policy("dynp", {"quality": "awt", "reduced_future": future})
    assert isinstance(policy, DynP)
    count = len(starts)
    arrays = (np.array(starts, dtype=np.int64), np.ones(count, dtype=np.int64))
    durations = np.full(count, 10, dtype=np.int64)
    subs = np.zeros(count, dtype=np.int64) if submits is None else np.array(submits)
    return policy.measure_arrays(*arrays, durations, subs, now)


def test_first_k_measures_the_k_earliest_starts():
    # AWT with every submit at 0 is the mean start: the two earliest of 50, 10, 30, 20.
    assert _measured("2", [50, 10, 30, 20]) == 15
    # A job without a start is never scored; the two earliest placed are 10 and 20.
    assert _measured("2", [50, 10, 30, NEVER, 20]) == 15
    # K as large as the placed jobs: all of them.
    assert _measured("4", [50, 10, 30, NEVER, 20]) == Fraction(110, 4)


def test_first_k_keeps_the_earlier_submitted_of_equal_starts():
    # 80 jobs, job i submitted at i; 40 start at 5, then 40 at 1. K = 1: the first job
    # to start at 1 in queue order, job 40, waited 1 - 40 = -39 s (a stable sort).
    starts = [5] * 40 + [1] * 40
    assert _measured("1", starts, submits=list(range(80))) == -39


def test_horizon_measures_the_jobs_that_start_before_it():
    # Horizon 100 s from now = 1000: starts 1000 and 1099 count, 1100 does not.
    assert _measured("100s", [1000, 1099, 1100], now=1000) == Fraction(2099, 2)
    assert _measured("100s", [1000, 1099, NEVER, 1100], now=1000) == Fraction(2099, 2)
    assert _measured("100s", [1000, 1099, NEVER, 1100], now=0) == 0  # none within 100 s


def test_the_whole_future_scores_every_placed_job():
    policy = make_policy("dynp", {"quality": "awt"})
    assert isinstance(policy, DynP)
    starts = np.array([30, NEVER, 10], dtype=np.int64)
    ones = np.ones(3, dtype=np.int64)
    zeros = np.zeros(3, dtype=np.int64)
    assert policy.measure_arrays(starts, ones, ones, zeros, 0) == 20


# -- the report -------------------------------------------------------------------------------


def test_report_averages_over_the_decider_calls():
    # Two nodes. A (1 node) runs [0, 1000). B (2 nodes, 5000 s) at 10, C (2 nodes, 100 s)
    # at 20, D (1 node, 500 s) at 30. dynP decides at 20 (B, C wait: SJF is better, a
    # switch), at 30 (B, C, D), at 530 (D ended; B, C) and at 1000 (B, C): SJF kept three
    # times of four, 2 + 3 + 2 + 2 = 9 waiting jobs over the four calls.
    policy = make_policy("dynp")
    assert isinstance(policy, DynP)
    empty = policy.report()["dynp"]
    assert (empty["kept_share"], empty["avg_backlog"]) == (0, 0)
    assert (empty["tuning_seconds_mean"], empty["tuning_seconds_max"]) == (0, 0)
    jobs = [Job(1, 0, 1, 1000, 1000), Job(2, 10, 2, 5000, 5000)]
    jobs += [Job(3, 20, 2, 100, 100), Job(4, 30, 1, 500, 500)]
    engine = Engine(Grid([Machine("m", 2)]), [policy])
    engine.load(jobs)
    engine.run()
    report = policy.report()["dynp"]
    assert report["decider_calls"] == 4
    assert report["kept_share"] == 0.75
    assert report["avg_backlog"] == 2.25
    assert policy.tuning_total > 0
    assert report["tuning_seconds_mean"] == pytest.approx(policy.tuning_total / 4)
    assert 0 < report["tuning_seconds_max"] <= policy.tuning_total
    # Promises: job 2 alone at 10 (placed at 1000); jobs 3 and 4 in the plans adopted at
    # their arrivals, SJF's: 3 at 1000, 4 at once beside A.
    assert [j.result.submit_plan for j in jobs[1:]] == [1000, 1000, 30]


# -- measure: the sums' short-cut only where it gives the same value --------------------------


def _queue(count: int) -> OrderedQueue:
    queue = OrderedQueue(ORDERS["fcfs"])
    for i in range(count):
        queue.insert(Job(i + 1, 0, 1, 60, 60))
    return queue


@pytest.mark.parametrize(
    ("params", "starts", "now", "quality"),
    [
        ({"reduced_future": "1"}, [10, 20, 30], 0, 10),  # the first job to start only
        ({"reduced_future": "15s"}, [10, 20, 30], 0, 10),  # those before 15 s from now
        ({"reduced_future": "15s"}, [10, 20, 30], 10, 15),
        ({}, [10, NEVER, 30], 0, 20),  # a job without a start is not scored
        ({}, [NEVER, NEVER, NEVER], 0, 0),
        ({}, [10, 20, 30], 0, 20),
    ],
)
def test_measure_scores_the_jobs_the_reduced_future_keeps(
    params: dict[str, str], starts: list[int], now: int, quality: int
):
    policy = make_policy("dynp", {"quality": "awt", **params})
    assert isinstance(policy, DynP)
    ones = np.ones(3, dtype=np.int64)
    # The jobs of _queue are submitted at 0: the policy's submit sums (none seen) hold.
    got = policy.measure(_queue(3), np.array(starts, dtype=np.int64), ones, ones * 60, now)
    assert got == quality


def test_measure_of_slowdown_needs_each_submit():
    # SLDwW: responses 60 and 120 s of 60 s jobs: slowdowns 1 and 2, mean 1.5.
    policy = make_policy("dynp", {"quality": "sldww"})
    assert isinstance(policy, DynP)
    ones = np.ones(2, dtype=np.int64)
    starts = np.array([0, 60], dtype=np.int64)
    assert policy.measure(_queue(2), starts, ones, ones * 60, 0) == 1.5


def test_measure_standing_plans_the_list_as_it_stands():
    # One idle node; a (300 s), b (100 s), c (200 s) wait, the list sorted as SJF: b, c,
    # a. Then d (50 s) is appended: the list stands b, c, a, d (SJF would put d first).
    # Planned from 0: b 0, c 100, a 300, d 600: AWT (0 + 100 + 300 + 600) / 4 = 250.
    policy = make_policy(
        "dynp",
        {"fcfs_candidate": "as-queued", "min_backlog": "10", "quality": "awt",
         "reduced_future": "1000s"},
    )  # fmt: skip
    assert isinstance(policy, DynP) and policy.standing is not None
    view = MachineState(0, Machine("m", 1), policy, kill=True)
    for i, estimate in enumerate((300, 100, 200), start=1):
        policy.job_submitted(view, Job(i, 0, 1, estimate, estimate))
    policy.standing.sort_as(SJF)
    policy.job_submitted(view, Job(4, 0, 1, 50, 50))
    assert policy.measure_standing(view, {SJF: -1}) == 250


# -- slackness ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("slackness", "starts"), [("40", (1100, 1000)), ("40.5", (1100, 1000)), ("41", (1000, 6000))]
)
def test_slackness_is_the_share_the_plan_in_force_is_favoured_by(
    slackness: str, starts: tuple[int, int]
):
    # One node busy until 1000; job 2 (5000 s) at 10, job 3 (100 s) at 20. ARTwW of the
    # FCFS plan (2 then 3): (5990 + 6080) / 2 = 6035; of SJF's: (1080 + 6090) / 2 = 3585,
    # 59.4 % of it. FCFS counts 60 % of 6035 = 3621 with slackness 40 (SJF wins), 59 % =
    # 3560.65 with 41 (FCFS is kept); 59.5 % = 3590.8 with 40.5 (SJF wins, by 0.16 %).
    jobs = [Job(1, 0, 1, 1000, 1000), Job(2, 10, 1, 5000, 5000), Job(3, 20, 1, 100, 100)]
    engine = Engine(Grid([Machine("m", 1)]), [make_policy("dynp", {"slackness": slackness})])
    engine.load(jobs)
    engine.run()
    assert (jobs[1].start, jobs[2].start) == starts


def _tuned_on(
    monkeypatch: pytest.MonkeyPatch, qualities: dict[str, object], params: dict[str, str]
) -> DynP:
    """dynP after one tuning step whose three plans measure ``qualities`` (by order), on
    three waiting jobs the three orders list differently; FCFS in force."""
    policy = make_policy("dynp", {"min_backlog": "100", **params})
    assert isinstance(policy, DynP)
    view = MachineState(0, Machine("m", 1), policy, kill=True)
    for i, estimate in enumerate((300, 100, 200), start=1):
        policy.job_submitted(view, Job(i, 0, 1, estimate, estimate))
    by_queue = {id(policy.queues[p]): q for p, q in qualities.items()}
    monkeypatch.setattr(policy, "measure", lambda queue, *_: by_queue[id(queue)])
    policy.tune(view)
    return policy


def test_slackness_keeps_exact_qualities_exact(monkeypatch: pytest.MonkeyPatch):
    # FCFS in force at 50/3 with slackness 10 counts 9/10 of it: exactly 15, SJF's
    # quality. Table 1's "=" is exact: FCFS = SJF < LJF under FCFS is case 6a, which
    # keeps FCFS. (In floating point 50/3 x 0.9 is 15.000000000000002: SJF alone best,
    # case 2, a switch.)
    qualities = {FCFS: Fraction(50, 3), SJF: Fraction(15), LJF: Fraction(20)}
    policy = _tuned_on(monkeypatch, qualities, {"slackness": "10"})
    assert (policy.current, policy.cases["6a"], policy.cases["2"]) == (FCFS, 1, 0)


def test_slackness_scales_a_quality_measured_in_floating_point(monkeypatch: pytest.MonkeyPatch):
    # Slowdowns are floats. FCFS in force at 10.0 counts 9.0 with slackness 10: better
    # than SJF's 9.5 and LJF's 12.0, case 3, FCFS kept; without the slackness SJF wins.
    qualities = {FCFS: 10.0, SJF: 9.5, LJF: 12.0}
    policy = _tuned_on(monkeypatch, qualities, {"slackness": "10", "quality": "sldww"})
    assert (policy.current, policy.cases["3"]) == (FCFS, 1)
    policy = _tuned_on(monkeypatch, qualities, {"quality": "sldww"})
    assert (policy.current, policy.cases["2"]) == (SJF, 1)


class _Recorder:
    def __init__(self) -> None:
        self.switches: list[tuple[str, str]] = []
        self.tunings: list[tuple[str, float]] = []

    def switched(self, old: str, new: str) -> None:
        self.switches.append((old, new))

    def tuned(self, case: str, seconds: float) -> None:
        self.tunings.append((case, seconds))

    def searched(self, seconds: float, stopped: str) -> None:
        raise AssertionError("dynP does not search")


def test_switches_and_tuning_times_are_told_and_counted(monkeypatch: pytest.MonkeyPatch):
    # The four jobs above with the simple decider and the FCFS list as it stands: SJF at
    # 20 (case 7), FCFS at 30 (6b), SJF at 530 (7), FCFS at 1000 (6b). Each tuning step
    # reads the clock twice: a quarter second apart.
    monkeypatch.setattr(dynp, "time", QuarterClock())
    policy = make_policy("dynp", {"decider": "simple", "fcfs_candidate": "as-queued"})
    assert isinstance(policy, DynP) and policy.name == "dynp"
    heard = _Recorder()
    policy.observe(heard)
    jobs = [Job(1, 0, 1, 1000, 1000), Job(2, 10, 2, 5000, 5000)]
    jobs += [Job(3, 20, 2, 100, 100), Job(4, 30, 1, 500, 500)]
    engine = Engine(Grid([Machine("m", 2)]), [policy])
    engine.load(jobs)
    engine.run()
    assert heard.switches == [(FCFS, SJF), (SJF, FCFS), (FCFS, SJF), (SJF, FCFS)]
    assert heard.tunings == [("7", 0.25), ("6b", 0.25), ("7", 0.25), ("6b", 0.25)]
    report = policy.report()["dynp"]
    assert report["switches"] == {FCFS: 2, SJF: 2, LJF: 0}
    assert (report["tuning_seconds_mean"], report["tuning_seconds_max"]) == (0.25, 0.25)
    assert report["kept_share"] == 0.0


def test_a_horizon_of_one_hour_counts_only_the_jobs_planned_within_it():
    # The jobs above at 20: the FCFS plan has only job 2 starting within the hour (1000):
    # ARTwW 5990. SJF's has both (3 at 1000, 2 at 1100): 3585. SJF wins.
    jobs = [Job(1, 0, 1, 1000, 1000), Job(2, 10, 1, 5000, 5000), Job(3, 20, 1, 100, 100)]
    engine = Engine(Grid([Machine("m", 1)]), [make_policy("dynp", {"reduced_future": "1h"})])
    engine.load(jobs)
    engine.run()
    assert (jobs[1].start, jobs[2].start) == (1100, 1000)
