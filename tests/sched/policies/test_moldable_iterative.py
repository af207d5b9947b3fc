"""moldable-iterative (Sabin et al.'s moldable paper, Fig. 6): by hand, the compiled search against a
pure-Python Fig. 6, and invariants on random moldable traces."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from moldutil import check_invariants, mold_job, random_trace, run

from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.moldable import FIXED, Moldable, Speedup
from batchd.model.states import JobState
from batchd.model.times import NEVER
from batchd.sched.core.profile import ListProfile, Profile
from batchd.sched.policies import moldable_iterative
from batchd.sched.policies.moldable_iterative import (
    MoldableIterative,
    StepInput,
    iterative_step,
    job_shape,
)
from batchd.sched.registry import make_policy

LINEAR4 = Speedup("downey", 4, 0)  # S(n) = n up to 4 nodes


def _step(capacity: int, jobs: list[Job], now: int = 0) -> tuple[list[int], list[int], int, int]:
    shapes, models = zip(*(job_shape(j) for j in jobs), strict=True)
    profile = Profile.of_running(capacity, now, [], [], room=len(jobs))
    r = iterative_step(StepInput.of(profile, now, list(shapes), list(models)))
    return r.widths.tolist(), r.starts.tolist(), r.trials, r.accepted


def test_fig6_on_three_jobs_by_hand() -> None:
    # 4 empty nodes; linear speedup; estimates 120, 60 and 30 s on one node.
    # All at 1 node: ends 120 + 60 + 30 = 210.
    # A gains most (120 -> 60): A on 2, ends 60 + 60 + 30 = 150, kept.
    # B gains most (60 -> 30; A 60 -> 40): B on 2 leaves C no node until B ends at 30:
    #   60 + 30 + 60 = 150, no better: undone, B marked.
    # A (60 -> 40) before C (30 -> 15): A on 3 until 40 pushes C to 40..70:
    #   40 + 60 + 70 = 170: undone, A marked.
    # C on 2 waits for A and B: 60..75, 60 + 60 + 75 = 195: undone, C marked. Done.
    jobs = [
        mold_job(i, 0, Moldable(1, 4, LINEAR4, 1, e, e)) for i, e in ((1, 120), (2, 60), (3, 30))
    ]
    widths, starts, trials, accepted = _step(4, jobs)
    assert widths == [2, 1, 1]
    assert starts == [0, 0, 0]
    assert (trials, accepted) == (4, 1)


def test_a_job_that_never_fits_stays_at_its_minimum_and_blocks_nothing() -> None:
    # 3 nodes: a job needing 4 to 6 never fits (NEVER); the other grows over all three.
    jobs = [
        mold_job(1, 0, Moldable(4, 6, LINEAR4, 4, 100, 100)),
        mold_job(2, 0, Moldable(1, 4, LINEAR4, 1, 90, 90)),
    ]
    widths, starts, _, _ = _step(3, jobs)
    assert widths == [4, 3]
    assert starts == [NEVER, 0]


def test_rigid_and_fixed_jobs_keep_their_widths() -> None:
    # A fixed-runtime job gains nothing from a node: it stays at its minimum, 2.
    jobs = [
        Job(1, 0, 3, 50, 50),
        mold_job(2, 0, Moldable(2, 8, FIXED, 4, 80, 80)),
        mold_job(3, 0, Moldable(1, 8, Speedup("downey", 8, 0), 1, 80, 80)),
    ]
    widths, starts, _, _ = _step(8, jobs)
    # Job 3 on 3 nodes ends at 27 beside the others; a 4th node would wait for job 1.
    assert widths == [3, 2, 3]
    assert starts == [0, 0, 0]


def test_tiny_schedule_by_hand_on_the_engine() -> None:
    # 4 nodes. At 0: rigid R on 2 for 100 s; M (1-4, linear, 200 s on 1 node). M on 2
    # ends at 100 beside R (sum 200); on 3 it waits for R (100..167): M runs on 2.
    # At 10: N (1-4, linear, 40 s on 1) finds nothing free until 100 and grows to 4
    # (100..110), each node ending it sooner and delaying nobody.
    r = Job(1, 0, 2, 100, 100)
    m = mold_job(2, 0, Moldable(1, 4, LINEAR4, 1, 200, 200))
    n = mold_job(3, 10, Moldable(1, 4, LINEAR4, 1, 40, 40))
    engine = Engine(Grid([Machine("m", 4)]), [make_policy("moldable-iterative")])
    engine.load([r, m, n])
    engine.run()
    assert (r.start, r.end, r.width) == (0, 100, 2)
    assert (m.start, m.end, m.width, m.runtime) == (0, 100, 2, 100)
    assert (n.start, n.end, n.width, n.runtime) == (100, 110, 4, 10)


def test_a_waiting_job_is_molded_again_when_another_arrives() -> None:
    # 4 nodes held by a rigid job until 100. At 1, X (linear, 400 s on 1) plans all 4
    # nodes from 100 (100..200). At 2, Y (linear, 40 s on 1) arrives: from 1 node each,
    # X on 2 then 3 (ends 300, 234; Y beside it 100..140) is kept; X on 4 pushes Y to
    # 200..240 (440 > 374) and Y on 2 waits for X (234..254): both undone.
    rigid = Job(1, 0, 4, 100, 100)
    x = mold_job(2, 1, Moldable(1, 4, LINEAR4, 1, 400, 400))
    y = mold_job(3, 2, Moldable(1, 4, LINEAR4, 1, 40, 40))
    policy = make_policy("moldable-iterative")
    engine = Engine(Grid([Machine("m", 4)]), [policy])
    engine.load([rigid, x, y])
    engine.advance_to(1)
    assert policy.planned_width(x) == 4
    assert dict(policy.planned_starts(engine.machines[0])) == {x: 100}
    engine.advance_to(2)
    assert (policy.planned_width(x), policy.planned_width(y)) == (3, 1)
    assert dict(policy.planned_starts(engine.machines[0])) == {x: 100, y: 100}
    engine.run()
    assert (x.start, x.end, x.width) == (100, 234, 3)
    assert (y.start, y.end, y.width) == (100, 140, 1)


# -- the compiled search against a pure-Python Fig. 6 ---------------------------------


@dataclass
class _Waiting:
    low: int
    high: int
    job: Job

    def duration(self, n: int) -> int:
        mold = self.job.mold
        estimate = self.job.estimate if mold is None else mold.estimate_on(n)
        return estimate if estimate > 0 else 1


def reference_fig6(profile: ListProfile, now: int, queue: list[Job]) -> tuple[list[int], list[int]]:
    """Fig. 6 as written: a full conservative plan per trial, on the reference profile."""
    waiting = [
        _Waiting(j.mold.low, j.mold.high, j) if j.mold else _Waiting(j.width, j.width, j)
        for j in queue
    ]
    widths = [w.low for w in waiting]

    def plan() -> tuple[tuple[int, int], list[int]]:
        p = profile.copy()
        starts = [p.place(n, w.duration(n), now) for w, n in zip(waiting, widths, strict=True)]
        never = sum(s == NEVER for s in starts)
        ends = sum(
            s + w.duration(n) for s, w, n in zip(starts, waiting, widths, strict=True) if s != NEVER
        )
        return (never, ends), starts

    score, starts = plan()
    marked: set[int] = set()
    while True:
        best, most = None, 0
        for k, w in enumerate(waiting):
            if k in marked or widths[k] >= w.high:
                continue
            gain = w.duration(widths[k]) - w.duration(widths[k] + 1)
            if gain > most:
                best, most = k, gain
        if best is None:
            return widths, starts
        widths[best] += 1
        trial, trial_starts = plan()
        if trial < score:
            score, starts = trial, trial_starts
        else:
            widths[best] -= 1
            marked.add(best)


def _random_queue(rng: random.Random, capacity: int, n: int) -> list[Job]:
    jobs = []
    for i in range(n):
        high = rng.randint(1, capacity + 2)  # now and then wider than the machine
        low = rng.randint(1, high)
        width = rng.randint(low, high)
        estimate = rng.choice([-1, rng.randint(1, 50), rng.randint(1, 2000)])
        if rng.random() < 0.2:
            jobs.append(Job(i + 1, 0, width, estimate, 1))
            continue
        speed = (
            FIXED
            if rng.random() < 0.15
            else Speedup(
                "downey", round(rng.uniform(1, 2 * capacity), 3), round(rng.uniform(0, 2), 3)
            )
        )
        jobs.append(mold_job(i + 1, 0, Moldable(low, high, speed, width, 1, estimate)))
    return jobs


@pytest.mark.parametrize("seed", range(300))
def test_the_compiled_search_plans_as_fig6_written_out(seed: int) -> None:
    rng = random.Random(seed)
    capacity = rng.randint(1, 16)
    now = rng.randint(0, 100)
    running = sorted(
        (rng.randint(now + 1, now + 500), rng.randint(1, max(1, capacity // 3)))
        for _ in range(rng.randint(0, 4))
    )
    while sum(w for _, w in running) > capacity:
        running.pop()
    ends = [e for e, _ in running]
    widths = [w for _, w in running]
    compiled = Profile.of_running(capacity, now, ends, widths, room=40)
    reference = ListProfile.of_running(capacity, now, ends, widths)
    if rng.random() < 0.5:  # an advance reservation
        start = rng.randint(now, now + 300)
        span = (start, start + rng.randint(1, 300), rng.randint(1, capacity))
        compiled.reserve(*span)
        reference.reserve(*span)
    queue = _random_queue(rng, capacity, rng.randint(0, 12))
    shapes, models = [job_shape(j)[0] for j in queue], [job_shape(j)[1] for j in queue]
    result = iterative_step(StepInput.of(compiled, now, shapes, models))
    want_widths, want_starts = reference_fig6(reference, now, queue)
    assert result.widths.tolist() == want_widths
    assert result.starts.tolist() == want_starts


@pytest.mark.parametrize("seed", range(40))
def test_a_queue_of_rigid_jobs_is_planned_as_fig6_plans_it(seed: int) -> None:
    # No job can take a node more: the search makes its first plan and no trial, on a
    # short base profile and on one of 256 steps or more (planned on blocks of steps).
    rng = random.Random(seed)
    capacity = rng.randint(4, 64)
    long = seed % 2 == 1
    count = rng.randint(240, 300) if long else rng.randint(0, 4)
    running = sorted((rng.randint(1, 5000), 1) for _ in range(min(count, capacity // 2)))
    ends, widths = [e for e, _ in running], [w for _, w in running]
    compiled = Profile.of_running(capacity, 0, ends, widths, room=80)
    reference = ListProfile.of_running(capacity, 0, ends, widths)
    for _ in range(count - len(running)):  # reservations make the base longer still
        span = (rng.randint(0, 9000), rng.randint(1, 300), rng.randint(1, capacity))
        compiled.reserve(span[0], span[0] + span[1], span[2])
        reference.reserve(span[0], span[0] + span[1], span[2])
    assert (compiled.n >= Profile.BLOCKED_FROM) == long
    queue = []
    for i in range(rng.randint(1, 40)):
        width = rng.randint(1, capacity + 1)  # one too wide never fits
        queue.append(Job(i + 1, 0, width, rng.randint(1, 400), 1))
    shapes, models = [job_shape(j)[0] for j in queue], [job_shape(j)[1] for j in queue]
    result = iterative_step(StepInput.of(compiled, 0, shapes, models))
    assert (result.widths.tolist(), result.starts.tolist()) == reference_fig6(reference, 0, queue)
    assert (result.trials, result.accepted) == (0, 0)


def test_the_step_leaves_the_base_profile_as_it_was() -> None:
    profile = Profile.of_running(8, 0, [50, 90], [3, 2], room=8)
    before = profile.steps()
    jobs = _random_queue(random.Random(1), 8, 10)
    shapes, models = [job_shape(j)[0] for j in jobs], [job_shape(j)[1] for j in jobs]
    iterative_step(StepInput.of(profile, 0, shapes, models))
    assert profile.steps() == before
    assert np.all(profile.t[: profile.n] == [t for t, _ in before])


# -- whole schedules ------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_invariants_on_random_moldable_traces(seed: int) -> None:
    rng = random.Random(seed)
    nodes = rng.randint(1, 16)
    jobs = random_trace(rng, nodes, 40)
    requested = {j.id: (j.width, j.runtime) for j in jobs}
    engine = run(nodes, jobs, "moldable-iterative")
    assert len(engine.finished) == len(jobs)
    check_invariants(jobs, requested)


def test_withdrawn_jobs_leave_the_plan_and_the_report_counts_steps() -> None:
    policy = make_policy("moldable-iterative")
    assert isinstance(policy, MoldableIterative)
    engine = Engine(Grid([Machine("m", 4)]), [policy])
    hog = Job(1, 0, 4, 100, 100)
    a = mold_job(2, 1, Moldable(1, 4, LINEAR4, 1, 400, 400))
    b = mold_job(3, 1, Moldable(1, 4, LINEAR4, 1, 40, 40))
    engine.load([hog, a, b])
    engine.advance_to(1)
    engine.withdraw(a)
    engine.advance_to(2)
    assert [j for j, _ in policy.planned_starts(engine.machines[0])] == [b]
    assert policy.planned_width(b) == 4  # alone, it takes every node from 100
    engine.run()
    assert (b.start, b.width) == (100, 4) and a.start == -1
    report = policy.report()["moldable_iterative"]
    assert report["steps"] >= 3 and report["trials"] >= report["accepted"] > 0


# -- rigid queues planned from the kept plan ---------------------------------------------


def _rigid_then_moldable(seed: int) -> list[Job]:
    """Rigid jobs in bursts and gaps, early ends and kills, with moldable jobs among the
    middle third only: the queue is rigid, then not, then rigid again."""
    rng = random.Random(seed)
    jobs = []
    now = 0
    for i in range(1, 151):
        now += rng.choice([0, 0, 0, 1, 5, 20])
        estimate = rng.choice([10, 60, 300, 900])
        runtime = estimate if rng.random() < 0.3 else rng.randint(1, estimate + 20)
        if 50 <= i < 100 and rng.random() < 0.3:
            width = rng.randint(1, 4)
            mold = Moldable(1, 6, LINEAR4, width, estimate, runtime)
            jobs.append(mold_job(i, now, mold))
        else:
            jobs.append(Job(i, now, rng.randint(1, 6), estimate, runtime))
    return jobs


def _iterative_schedule(seed: int, keep_from: int, afresh: bool) -> tuple[list[object], int, int]:
    jobs = _rigid_then_moldable(seed)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(moldable_iterative, "KEEP_FROM", keep_from)
        if afresh:
            patch.setattr(moldable_iterative, "placed_again", lambda *args, **kw: None)
        policy = make_policy("moldable-iterative")
        assert isinstance(policy, MoldableIterative)
        engine = Engine(Grid([Machine("m", 8)]), [policy])
        engine.load(jobs)
        for job in jobs[7::19]:
            engine.call_at(job.submit + 2, _withdrawal(engine, job))
        engine.run()
    steps = policy.report()["moldable_iterative"]["steps"]
    schedule: list[object] = [(j.id, j.start, j.end, j.width) for j in jobs]
    return schedule + [steps], policy.kept_hits, policy.molded


def _withdrawal(engine: Engine, job: Job) -> Callable[[], None]:
    def withdraw() -> None:
        if job.state is JobState.QUEUED:
            engine.withdraw(job)

    return withdraw


@pytest.mark.parametrize("seed", range(6))
def test_a_rigid_queue_is_planned_from_the_kept_plan_as_fig6_plans_it(seed: int) -> None:
    kept, hits, molded = _iterative_schedule(seed, keep_from=3, afresh=False)
    again, no_hits, _ = _iterative_schedule(seed, keep_from=3, afresh=True)
    searched, _, _ = _iterative_schedule(seed, keep_from=10**6, afresh=False)
    assert kept == again == searched
    assert hits > 10 and no_hits == 0
    assert molded == 0  # every moldable job started or left: the queue is rigid again


@pytest.mark.parametrize(("runtime", "hits"), [(10, 3), (5, 2)])
def test_an_end_at_the_estimate_keeps_the_plan_an_early_one_does_not(
    runtime: int, hits: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # R holds both nodes until its estimate, 10; A and B queue behind it at 1 and 2,
    # each step placing the newcomer on the kept plan. R ending at 10 leaves that plan
    # in force (a third step from it); ending at 5 opens room it did not have.
    monkeypatch.setattr(moldable_iterative, "KEEP_FROM", 1)
    policy = make_policy("moldable-iterative")
    assert isinstance(policy, MoldableIterative)
    engine = Engine(Grid([Machine("m", 2)]), [policy])
    r = Job(1, 0, 2, 10, runtime)
    a, b = Job(2, 1, 1, 100, 100), Job(3, 2, 1, 100, 100)
    engine.load([r, a, b])
    engine.run()
    assert (a.start, b.start) == (runtime, runtime)
    assert policy.kept_hits == hits
