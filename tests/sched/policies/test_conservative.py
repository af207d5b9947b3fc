"""Conservative backfilling: placements, promises, and when the plan is made again.

A running job is (estimated end, width) in the views below.
"""

from __future__ import annotations

import pytest
from views import View, ids, job

from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.times import NEVER
from batchd.sched.core.order import fcfs_key, sjf_key
from batchd.sched.core.profile import Profile
from batchd.sched.policies.conservative import ConservativePolicy, Replan, promise
from batchd.sched.registry import make_policy


def planned(policy: ConservativePolicy, view: View) -> dict[int, int]:
    return {j.id: start for j, start in policy.planned_starts(view)}


def four_jobs(replan: Replan = "rebuild") -> tuple[ConservativePolicy, list[Job]]:
    """4 nodes. 1 (w4, 10 s) starts at 0; 2 and 3 (w2, 5 s) are placed side by side at
    10; 4 (w1, 3 s) finds no node before 15."""
    policy = ConservativePolicy("fcfs-cons", fcfs_key, replan)
    view = View()
    jobs = [job(1, 4, 10), job(2, 2, 5), job(3, 2, 5), job(4, 1, 3)]
    for j in jobs:
        policy.job_submitted(view, j)
    assert ids(policy.schedule(view)) == [1]
    jobs[0].start = 0
    return policy, jobs


def test_each_new_job_is_placed_at_its_earliest_start_and_promised_it() -> None:
    policy, jobs = four_jobs()
    assert [j.result.submit_plan for j in jobs] == [0, 10, 10, 15]
    running = View(free=0, running=[(10, 4)])
    assert planned(policy, running) == {2: 10, 3: 10, 4: 15}
    assert policy.planned_start(running, jobs[3]) == 15
    assert policy.planned_start(running, jobs[0]) == NEVER  # not waiting
    assert [j.id for j in policy.waiting()] == [2, 3, 4]
    assert policy.head() is jobs[1]
    assert policy.counts.rebuilds == 1  # the first placement made the plan


def test_an_end_at_the_estimate_keeps_the_plan_and_starts_the_jobs_due() -> None:
    policy, jobs = four_jobs()
    jobs[0].end = 10
    policy.job_ended(View(now=10), jobs[0])
    assert (policy.counts.skipped, policy.counts.rebuilds) == (1, 1)
    assert ids(policy.schedule(View(now=10))) == [2, 3]
    assert ids(policy.schedule(View(now=10, free=0, running=[(15, 4)]))) == []
    assert planned(policy, View(now=10, free=0, running=[(15, 4)])) == {4: 15}


def test_an_early_end_makes_the_plan_again() -> None:
    policy, jobs = four_jobs()
    jobs[0].end = 6
    policy.job_ended(View(now=6), jobs[0])
    assert policy.planned_start(View(now=6), jobs[3]) is None  # the plan is out of date
    assert ids(policy.schedule(View(now=6))) == [2, 3]
    assert policy.counts.rebuilds == 2
    assert policy.planned_start(View(now=6, free=0, running=[(11, 4)]), jobs[3]) == 11
    assert [j.result.submit_plan for j in jobs] == [0, 10, 10, 15]  # promises stay


def test_a_job_placed_before_others_in_the_order_unsettles_the_plan() -> None:
    policy = ConservativePolicy("sjf-cons", sjf_key)
    view = View()
    first, long, short = job(1, 4, 10), job(2, 2, 8), job(3, 2, 5)
    for j in (first, long, short):
        policy.job_submitted(view, j)
    policy.schedule(view)
    assert [j.id for j in policy.waiting()] == [3, 2]
    first.start, first.end = 0, 10
    policy.job_ended(View(now=10), first)
    assert policy.counts.skipped == 0  # made again: 3 was placed ahead of 2 in the order
    assert ids(policy.schedule(View(now=10))) == [3, 2]
    assert policy.counts.rebuilds == 2


def test_a_withdrawn_job_makes_the_plan_again() -> None:
    policy, jobs = four_jobs()
    policy.withdraw(View(), jobs[1])
    running = View(free=0, running=[(10, 4)])
    assert policy.planned_start(running, jobs[3]) is None
    assert ids(policy.schedule(running)) == []
    assert planned(policy, running) == {3: 10, 4: 10}


def test_a_plan_made_during_an_overrun_is_made_again_at_the_next_event() -> None:
    policy, jobs = four_jobs()
    over = View(now=12, free=0, running=[(13, 4)], overrun=True)
    assert policy.must_replan(over)
    assert policy.schedule(over) == []
    assert policy.guessed
    calm = View(now=12, free=0, running=[(13, 4)])
    assert policy.must_replan(calm)
    assert policy.planned_start(calm, jobs[3]) is None
    assert policy.schedule(calm) == []
    assert not policy.guessed and not policy.must_replan(calm)
    assert planned(policy, calm) == {2: 13, 3: 13, 4: 18}


def test_compress_moves_jobs_earlier_but_never_later() -> None:
    policy, jobs = four_jobs("compress")
    jobs[0].end = 6
    policy.job_ended(View(now=6), jobs[0])
    assert ids(policy.schedule(View(now=6))) == [2, 3]
    assert (policy.counts.compressions, policy.counts.rebuilds) == (1, 1)
    assert policy.planned_start(View(now=6, free=0, running=[(11, 4)]), jobs[3]) == 11


def test_a_changed_machine_rebuilds_even_a_compressing_plan() -> None:
    policy, jobs = four_jobs("compress")
    policy.invalidate()
    assert policy.reshaped and not policy.settled
    running = View(free=0, running=[(10, 4)])
    assert policy.schedule(running) == []
    assert (policy.counts.compressions, policy.counts.rebuilds) == (0, 2)
    assert not policy.reshaped
    jobs[0].end = 6
    policy.job_ended(View(now=6), jobs[0])
    policy.schedule(View(now=6))
    assert (policy.counts.compressions, policy.counts.rebuilds) == (1, 2)


def test_a_job_wider_than_the_nodes_in_service_holds_no_promise() -> None:
    policy = ConservativePolicy("fcfs-cons", fcfs_key, "guarded")
    view = View(capacity=2, free=2)
    wide, narrow = job(1, 3, 5), job(2, 1, 5)
    policy.job_submitted(view, wide)
    policy.job_submitted(view, narrow)
    assert wide.result.submit_plan < 0
    assert ids(policy.schedule(view)) == [2]
    assert planned(policy, View(capacity=2, free=1, running=[(5, 1)])) == {1: NEVER}
    narrow.start, narrow.end = 0, 3
    policy.job_ended(View(now=3, capacity=2, free=2), narrow)
    assert policy.schedule(View(now=3, capacity=2, free=2)) == []
    assert policy.counts.rebuilds == 2  # guarded: NEVER is no broken promise


def test_a_promise_is_the_first_start_planned() -> None:
    j = job(1, 1, 1)
    promise(j, NEVER)
    assert j.result.submit_plan < 0
    promise(j, 7)
    promise(j, 3)
    assert j.result.submit_plan == 7
    k = job(2, 1, 1)
    promise(k, 0)
    promise(k, 5)
    assert k.result.submit_plan == 0


# -- rebuild breaks a promise, guarded and compress keep it (a list-scheduling anomaly) ----
# 2 nodes; jobs (id, submit, width, estimate, runtime):
#   1: (1, 1, 3, 2)  2: (2, 2, 6, 5)  3: (2, 1, 1, 1)  4: (2, 1, 1, 1)
# t2: 2 placed [4,10), 3 [2,3) starts, 4 [3,4): promises 1, 4, 2, 3. t3: 1 ends early.
# A rebuild in FCFS order puts 2 at [3,9) and 4 after it at 9 > its promise 3; 2 ends
# at 8 -> 4 [8,9). Guarded sees 4 late and compresses instead: 4 keeps [3,4), 2 [4,9).
ANOMALY = [(1, 1, 1, 3, 2), (2, 2, 2, 6, 5), (3, 2, 1, 1, 1), (4, 2, 1, 1, 1)]
REBUILT = {1: (1, 3), 2: (3, 8), 3: (2, 3), 4: (8, 9)}
KEPT = {1: (1, 3), 2: (4, 9), 3: (2, 3), 4: (3, 4)}


@pytest.mark.parametrize(
    ("name", "params", "expected"),
    [
        ("fcfs-cons", {"replan": "rebuild"}, REBUILT),
        ("fcfs-cons", {"replan": "guarded"}, KEPT),
        ("fcfs-cons", {"replan": "compress"}, KEPT),
        ("fcfs-cons", {}, KEPT),
    ],
)
def test_the_replan_modes_on_an_anomaly(
    name: str, params: dict[str, str], expected: dict[int, tuple[int, int]]
) -> None:
    jobs = [Job(id=i, submit=s, width=w, estimate=e, runtime=r) for i, s, w, e, r in ANOMALY]
    engine = Engine(Grid([Machine("m", 2)]), [make_policy(name, params)])
    engine.load(jobs)
    engine.run()
    assert {j.id: (j.start, j.end) for j in jobs} == expected
    assert {j.id: j.result.submit_plan for j in jobs} == {1: 1, 2: 4, 3: 2, 4: 3}


# 2 nodes, no kill: job 2 (estimate 3) runs from 25 to 43, past the starts planned for
# 4 and 5 at its estimated end (28). At 43 those starts have passed unused.
PASSED_UNUSED = [
    (1, 3, 2, 8, 11), (2, 3, 2, 3, 18), (3, 10, 2, 15, 11), (4, 16, 1, 12, 5),
    (5, 16, 1, 4, 15), (6, 16, 1, 6, 21), (7, 21, 2, 1, 28), (8, 21, 1, 11, 24),
    (9, 23, 2, 2, 6), (10, 23, 2, 17, 12),
]  # fmt: skip


@pytest.mark.parametrize("replan", ["guarded", "compress", "rebuild"])
def test_a_plan_whose_starts_passed_unused_is_made_afresh(replan: str) -> None:
    # Compressed from starts held at now (43), the jobs overlapped and the compression
    # put none at 43 and the first at 44, a second no event comes at: every job waited
    # for ever. Made afresh, jobs 4 and 5 start when job 2 ends.
    jobs = [Job(id=i, submit=s, width=w, estimate=e, runtime=r) for i, s, w, e, r in PASSED_UNUSED]
    engine = Engine(
        Grid([Machine("m", 2)]), [make_policy("fcfs-cons", {"replan": replan})], kill=False
    )
    engine.load(jobs)
    engine.run()
    assert all(j.end >= 0 for j in jobs)
    assert (jobs[3].start, jobs[4].start) == (43, 43)


def test_a_guarded_compression_starts_from_the_base_not_the_rebuilds_plan() -> None:
    # 4 nodes, all five jobs at 1: 1 (w2) and 2 (w1) start, 3 (w3) is promised 12, 4
    # (w2, 1 s) 6 and 5 (w2) 17. Jobs 1 and 2 end at 4, early; the rebuild would break
    # a promise, so the plan is compressed, onto the running jobs and the promises
    # alone (not onto the rejected rebuild's reservations, where no room opens and
    # every job would wait for ever): 3 and 4 start at 4, 5 when 3 ends.
    spec = [(1, 1, 2, 11, 3), (2, 1, 1, 5, 3), (3, 1, 3, 5, 2), (4, 1, 2, 1, 0), (5, 1, 2, 6, 6)]
    jobs = [Job(id=i, submit=s, width=w, estimate=e, runtime=r) for i, s, w, e, r in spec]
    policy = make_policy("fcfs-cons")
    engine = Engine(Grid([Machine("m", 4)]), [policy])
    engine.load(jobs)
    engine.run()
    assert [(j.start, j.end, j.result.submit_plan) for j in jobs] == [
        (1, 4, 1), (1, 4, 1), (4, 6, 12), (4, 4, 6), (6, 12, 17),
    ]  # fmt: skip
    assert isinstance(policy, ConservativePolicy) and policy.counts.compressions >= 1


class Narrowed(ConservativePolicy):
    """Plans every job on one node for twice its estimate, and notes what it was asked.
    The queue keeps the shape of a job whose width changed (a job planned at its own
    width keeps its own estimate there)."""

    def __init__(self) -> None:
        super().__init__("narrowed", fcfs_key)
        self.asked: list[tuple[int, Profile | None, int]] = []

    def shape(self, job: Job, profile: Profile, now: int) -> tuple[int, int]:
        self.asked.append((job.id, profile, now))
        assert profile is self.profile
        return 1, 2 * job.duration


def test_a_new_job_takes_the_shape_the_policy_gives_it() -> None:
    policy = Narrowed()
    view = View(now=3, free=0, running=[(10, 4)])
    wide, single = job(1, 3, 5), job(2, 1, 4)
    policy.job_submitted(view, wide)
    policy.job_submitted(view, single)
    assert [(i, now) for i, _, now in policy.asked] == [(1, 3), (2, 3)]
    assert (policy.queue.widths, policy.queue.durations) == ([1, 1], [10, 4])
    assert planned(policy, view) == {1: 10, 2: 10}


def test_skips_and_compressions_are_counted() -> None:
    policy, jobs = four_jobs()
    for j, end in ((jobs[0], 10),):
        j.end = end
        policy.job_ended(View(now=end), j)
    policy.schedule(View(now=10))
    for j in jobs[1:3]:
        j.start, j.end = 10, 15
        policy.job_ended(View(now=15), j)
    assert policy.counts.skipped == 3
    assert ids(policy.schedule(View(now=15))) == [4]
    policy, jobs = four_jobs("compress")
    jobs[0].end = 6
    policy.job_ended(View(now=6), jobs[0])
    policy.schedule(View(now=6))
    for j in jobs[1:3]:
        j.start, j.end = 6, 8
        policy.job_ended(View(now=8), j)
    assert ids(policy.schedule(View(now=8))) == [4]
    assert policy.counts.compressions == 2


def test_a_job_due_at_submission_starts_once_with_the_jobs_the_plan_has_due() -> None:
    # 1 (w4) runs [0,10); 2 (w2) is placed at 10. 1 ends at its estimate: the plan
    # stands. Job 3 (w1), submitted at 10, is placed at 10 and is due at once.
    policy = ConservativePolicy("fcfs-cons", fcfs_key)
    view = View()
    first, second = job(1, 4, 10), job(2, 2, 5)
    policy.job_submitted(view, first)
    policy.job_submitted(view, second)
    assert ids(policy.schedule(view)) == [1]
    first.start, first.end = 0, 10
    at10 = View(now=10)
    policy.job_ended(at10, first)
    policy.job_submitted(at10, job(3, 1, 1))
    assert ids(policy.schedule(at10)) == [3, 2]


def test_an_overrun_rebuilds_a_compressing_plan() -> None:
    policy, jobs = four_jobs("compress")
    over = View(now=12, free=0, running=[(13, 4)], overrun=True)
    policy.schedule(over)
    assert (policy.counts.compressions, policy.counts.rebuilds) == (0, 2)
    # The next plan is rebuilt too: the last one was a guess.
    policy.withdraw(over, jobs[3])
    policy.schedule(View(now=13, free=0, running=[(14, 4)]))
    assert (policy.counts.compressions, policy.counts.rebuilds) == (0, 3)
    policy.withdraw(over, jobs[2])
    policy.schedule(View(now=13, free=0, running=[(14, 4)]))
    assert (policy.counts.compressions, policy.counts.rebuilds) == (1, 3)


def test_guarded_rebuilds_when_no_job_would_start_later_than_promised() -> None:
    policy, jobs = four_jobs("guarded")
    policy.withdraw(View(), jobs[2])  # 2 keeps 10, 4 moves from 15 to 10
    policy.schedule(View(free=0, running=[(10, 4)]))
    assert (policy.counts.compressions, policy.counts.rebuilds) == (0, 2)


def anomaly(wide: bool) -> tuple[ConservativePolicy, list[Job]]:
    """The anomaly above, pass by pass on 2 nodes; ``wide``: with a job of 3 nodes that
    never fits (no promise)."""
    policy = ConservativePolicy("fcfs-cons", fcfs_key, "guarded")
    first = job(1, 1, 3, submit=1)
    policy.job_submitted(View(now=1, capacity=2, free=2), first)
    assert ids(policy.schedule(View(now=1, capacity=2, free=2))) == [1]
    first.start = 1
    at2 = View(now=2, capacity=2, free=1, running=[(4, 1)])
    jobs = [first, job(2, 2, 6, 2), job(3, 1, 1, 2), job(4, 1, 1, 2)]
    if wide:
        jobs.append(job(5, 3, 1, 2))
    for j in jobs[1:]:
        policy.job_submitted(at2, j)
    assert ids(policy.schedule(at2)) == [3]
    jobs[2].start = 2
    return policy, jobs


@pytest.mark.parametrize("wide", [False, True])
def test_guarded_compresses_when_a_rebuild_breaks_a_promise(wide: bool) -> None:
    policy, jobs = anomaly(wide)
    at3 = View(now=3, capacity=2, free=2)
    jobs[0].end = jobs[2].end = 3
    policy.job_ended(at3, jobs[0])
    policy.job_ended(at3, jobs[2])
    assert ids(policy.schedule(at3)) == [4]
    assert (policy.counts.compressions, policy.counts.rebuilds) == (1, 1)


def test_guarded_rebuilds_past_a_job_that_never_fits() -> None:
    policy, jobs = anomaly(wide=True)
    policy.withdraw(View(now=2, capacity=2, free=1, running=[(4, 1)]), jobs[3])
    at3 = View(now=3, capacity=2, free=2)
    jobs[0].end = jobs[2].end = 3
    policy.job_ended(at3, jobs[0])
    policy.job_ended(at3, jobs[2])
    assert ids(policy.schedule(at3)) == [2]  # 4 left: 2 starts at 3, before its promise
    assert (policy.counts.compressions, policy.counts.rebuilds) == (0, 2)


def test_an_empty_policy_has_no_head() -> None:
    policy = ConservativePolicy("fcfs-cons", fcfs_key)
    assert policy.head() is None and policy.waiting() == []
    assert policy.replan_mode == "rebuild"


def test_an_out_of_date_plan_is_answered_by_a_forecast() -> None:
    policy, jobs = four_jobs()
    jobs[0].end = 6
    policy.job_ended(View(now=6), jobs[0])
    assert planned(policy, View(now=6)) == {2: 6, 3: 6, 4: 11}


def test_a_compressed_plan_is_made_again_even_after_an_end_at_the_estimate() -> None:
    policy, jobs = four_jobs("compress")
    jobs[0].end = 6
    policy.job_ended(View(now=6), jobs[0])
    assert ids(policy.schedule(View(now=6))) == [2, 3]
    for j in jobs[1:3]:
        j.start, j.end = 6, 11  # at their estimates
        policy.job_ended(View(now=11), j)
    assert ids(policy.schedule(View(now=11))) == [4]
    assert (policy.counts.skipped, policy.counts.compressions) == (0, 2)


def depth_jobs(replan: Replan, depth: int) -> tuple[ConservativePolicy, list[Job]]:
    """4 nodes. 1 (w4, 10 s) starts at 0, 2 (w4, 10 s) is placed at 10, 3 (w1, 3 s) at
    20; 1 ends at 5 and 2 starts then."""
    policy = ConservativePolicy("fcfs-cons", fcfs_key, replan, depth)
    view = View()
    jobs = [job(1, 4, 10), job(2, 4, 10), job(3, 1, 3)]
    for j in jobs:
        policy.job_submitted(view, j)
    assert ids(policy.schedule(view)) == [1]
    assert [j.result.submit_plan for j in jobs] == [0, 10, 20]
    jobs[0].start, jobs[0].end = 0, 5
    policy.job_ended(View(now=5), jobs[0])
    assert ids(policy.schedule(View(now=5))) == [2]
    return policy, jobs


@pytest.mark.parametrize("replan", ["rebuild", "compress", "guarded"])
def test_a_depth_moves_the_first_jobs_only(replan: Replan) -> None:
    after = View(now=5, free=0, running=[(15, 4)])
    policy, jobs = depth_jobs(replan, 0)
    assert planned(policy, after) == {3: 15}  # every job re-planned
    policy, jobs = depth_jobs(replan, 1)
    assert planned(policy, after) == {3: 20}  # 3 was behind the first: held
    assert policy.wakes and policy.next_wakeup(5) == 20
    # 2 ends at its estimate; 3 is now the first and moves.
    jobs[1].start, jobs[1].end = 5, 15
    policy.job_ended(View(now=15), jobs[1])
    assert ids(policy.schedule(View(now=15))) == [3]


def test_a_depth_wakes_the_policy_where_no_end_falls() -> None:
    # Held at 20 while nothing runs, 3 starts at the wake-up.
    policy, jobs = depth_jobs("compress", 1)
    jobs[1].start, jobs[1].end = 5, 6
    policy.job_ended(View(now=6), jobs[1])
    assert ids(policy.schedule(View(now=6))) == [3]  # the re-plan at 6 moves it
    policy, jobs = depth_jobs("compress", 1)
    assert policy.next_wakeup(5) == 20  # the engine asks after each pass
    assert ids(policy.schedule(View(now=19, free=4))) == []
    assert ids(policy.schedule(View(now=20, free=4))) == [3]  # no event but the wake-up
    assert policy.next_wakeup(20) is None


@pytest.mark.parametrize("value", ["-1", "x"])
def test_a_bad_depth_is_refused_by_name(value: str) -> None:
    with pytest.raises(ValueError, match="depth"):
        make_policy("fcfs-cons", {"depth": value})
