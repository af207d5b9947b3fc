"""EASY backfilling, one pass at a time on a machine set by hand, and plain in-order.

Notation: a running job is (estimated end, width); the shadow is when the head fits,
the extra nodes those the head leaves over then.
"""

from __future__ import annotations

from views import View, ids, job

from batchd.model.job import Job
from batchd.sched.core.order import fcfs_key, sjf_key
from batchd.sched.policies.easy import EasyPolicy
from batchd.sched.policies.inorder import InOrderPolicy


def easy(view: View, *jobs: Job, key=fcfs_key) -> EasyPolicy:  # type: ignore[no-untyped-def]
    policy = EasyPolicy("fcfs-easy", key)
    for j in jobs:
        policy.job_submitted(view, j)
    return policy


def test_jobs_that_end_by_the_shadow_backfill() -> None:
    # 2 free, (110, 2) runs; head 1 (w3): shadow 110, extra 1. Job 2 (100+20 > 110)
    # takes the extra node; job 3 ends at 110 exactly; no node is left for job 4.
    view = View(now=100, free=2, running=[(110, 2)])
    jobs = [job(1, 3, 5), job(2, 1, 20), job(3, 1, 10), job(4, 1, 1)]
    policy = easy(view, *jobs)
    assert ids(policy.schedule(view)) == [2, 3]
    assert [j.id for j in policy.waiting()] == [1, 4]


def test_the_first_jobs_start_and_count_in_the_shadow() -> None:
    # 4 free: 1 (w1, ends 105) and 2 (w2, ends 108) start; head 3 (w3) has 1 free now,
    # 2 at 105, 4 at 108 -> shadow 108, extra 1; job 4 ends at 108 and backfills.
    view = View(now=100, free=4)
    policy = easy(view, job(1, 1, 5), job(2, 2, 8), job(3, 3, 1), job(4, 1, 8))
    assert ids(policy.schedule(view)) == [1, 2, 4]
    assert [j.id for j in policy.waiting()] == [3]


def test_the_extra_nodes_are_used_up() -> None:
    # 6 nodes, 3 free, (10, 3) runs; head 1 (w4): shadow 10, extra 2. Long jobs take the
    # extra nodes while they last (2: yes, 3 (w2): no, 4: yes, 5: none left); job 6 ends
    # by the shadow and takes the last free node.
    view = View(capacity=6, free=3, running=[(10, 3)])
    jobs = [job(1, 4, 5), job(2, 1, 50), job(3, 2, 50), job(4, 1, 50), job(5, 1, 50),
            job(6, 1, 10)]  # fmt: skip
    policy = easy(view, *jobs)
    assert ids(policy.schedule(view)) == [2, 4, 6]


def test_a_job_on_the_extra_nodes_leaves_the_rest_free() -> None:
    # 6 nodes, 3 free, (10, 3) runs; head 1 (w4): shadow 10, extra 2. Job 2 takes an
    # extra node (2 free left), so job 3 (w2, ends by the shadow) fits.
    view = View(capacity=6, free=3, running=[(10, 3)])
    policy = easy(view, job(1, 4, 5), job(2, 1, 50), job(3, 2, 5))
    assert ids(policy.schedule(view)) == [2, 3]


def test_jobs_start_in_order_while_they_fit() -> None:
    view = View(free=4)
    policy = easy(view, job(1, 2, 5), job(2, 2, 5), job(3, 1, 1))
    assert ids(policy.schedule(view)) == [1, 2]  # no node left: 3 waits
    assert [j.id for j in policy.waiting()] == [3]
    policy = easy(view, job(1, 1, 5), job(2, 3, 5))
    assert ids(policy.schedule(view)) == [1, 2]
    assert policy.waiting() == []
    assert policy.schedule(view) == []


def test_a_head_wider_than_the_nodes_in_service_blocks_nobody() -> None:
    view = View(capacity=2, free=2)
    policy = easy(view, job(1, 3, 5), job(2, 1, 50), job(3, 1, 50))
    assert ids(policy.schedule(view)) == [2, 3]
    assert [j.id for j in policy.waiting()] == [1]


def test_around_advance_reservations_each_job_must_fit_its_whole_estimate() -> None:
    # A reservation takes all 4 nodes over [5,15). Job 1 cannot end by 5: it holds
    # [15,25) on 2 nodes. 2 and 3 end by 5 and start; 4 cannot start now; 5 takes the
    # last node, and with none free and the head reserved the pass stops before 6.
    view = View(free=4, pending=[(5, 15, 4)])
    jobs = [job(1, 2, 10), job(2, 2, 5), job(3, 1, 3), job(4, 1, 20), job(5, 1, 2),
            job(6, 1, 1)]  # fmt: skip
    policy = easy(view, *jobs)
    assert ids(policy.schedule(view)) == [2, 3, 5]
    assert [j.id for j in policy.waiting()] == [1, 4, 6]


def test_around_reservations_only_the_first_job_that_can_run_is_reserved() -> None:
    # 2 free, (4, 2) runs, a reservation far ahead. Job 1 (w5) never fits: no
    # reservation. Job 2 (w3) is reserved [4,6), leaving 1 node then; job 3 (w4) could
    # run at 6 but holds nothing, so job 4 (w1, [0,10)) starts on that 1 node.
    view = View(free=2, running=[(4, 2)], pending=[(100, 101, 1)])
    policy = easy(view, job(1, 5, 1), job(2, 3, 2), job(3, 4, 1), job(4, 1, 10))
    assert ids(policy.schedule(view)) == [4]
    assert [j.id for j in policy.waiting()] == [1, 2, 3]


# -- a pass that started nothing is remembered ------------------------------------------
# 4 nodes, 1 free, (10, 3) runs. Head 1 (w4): shadow 10, extra 0. Job 5 (w1, 30 s) ends
# after the shadow: nothing starts. Job 9 (w4) waits behind.


def blocked(key=fcfs_key) -> tuple[EasyPolicy, View, list[Job]]:  # type: ignore[no-untyped-def]
    view = View(free=1, running=[(10, 3)])
    jobs = [job(1, 4, 5), job(5, 1, 30), job(9, 4, 100)]
    policy = easy(view, *jobs, key=key)
    assert policy.schedule(view) == []
    assert policy._blocked == (jobs[0], 1, 10, 0)
    return policy, view, jobs


def test_after_a_blocked_pass_a_newcomer_backfills_by_the_same_shadow() -> None:
    policy, view, jobs = blocked()
    policy.job_submitted(view, job(6, 1, 11))  # ends after 10: no
    assert policy.schedule(view) == []
    assert policy._blocked == (jobs[0], 1, 10, 0) and policy._arrived == []
    policy.job_submitted(view, job(7, 1, 10))
    assert ids(policy.schedule(view)) == [7]
    assert policy._blocked is None
    assert [j.id for j in policy.waiting()] == [1, 5, 6, 9]


def test_newcomers_after_a_blocked_pass_are_tried_in_queue_order() -> None:
    policy, view, _ = blocked(key=sjf_key)
    policy.job_submitted(view, job(6, 1, 9))
    policy.job_submitted(view, job(7, 1, 8))  # shorter: first in SJF order
    assert ids(policy.schedule(view)) == [7]


def test_newcomers_that_fit_no_rule_do_not_start() -> None:
    policy, view, _ = blocked()
    policy.job_submitted(view, job(6, 2, 1))  # wider than the free node
    policy.job_submitted(view, job(7, 1, 11))
    assert policy.schedule(view) == []


def later(view: View) -> View:
    """The same free node, but the running job is now expected to end at 40: job 5
    (30 s) would end by the shadow. Only a full pass sees it."""
    return View(now=view.now, free=1, running=[(40, 3)], overrun=view.overrun)


def test_a_job_end_makes_the_next_pass_a_full_one() -> None:
    policy, view, jobs = blocked()
    assert policy.schedule(later(view)) == []  # nothing changed that the pass checks
    policy.job_ended(view, jobs[0])
    assert ids(policy.schedule(later(view))) == [5]


def test_a_resumed_job_makes_the_next_pass_a_full_one() -> None:
    policy, view, jobs = blocked()
    policy.job_resumed(view, jobs[0])
    assert ids(policy.schedule(later(view))) == [5]


def test_a_withdrawn_job_makes_the_next_pass_a_full_one() -> None:
    policy, view, jobs = blocked()
    policy.withdraw(view, jobs[2])
    assert ids(policy.schedule(later(view))) == [5]
    assert [j.id for j in policy.waiting()] == [1]


def test_a_changed_machine_makes_the_next_pass_a_full_one() -> None:
    policy, view, _ = blocked()
    policy.invalidate()
    assert ids(policy.schedule(later(view))) == [5]


def test_an_overrun_makes_the_pass_a_full_one_and_is_not_remembered() -> None:
    policy, view, _ = blocked()
    over = later(view)
    over.overrun = True
    over.running = [(10, 3)]
    assert policy.schedule(over) == []
    assert policy._blocked is None
    assert ids(policy.schedule(later(view))) == [5]


def test_an_overrun_makes_a_remembered_pass_out_of_date() -> None:
    policy, view, _ = blocked()
    over = later(view)
    over.overrun = True
    assert ids(policy.schedule(over)) == [5]


def test_a_new_head_makes_the_next_pass_a_full_one() -> None:
    policy, view, _ = blocked()
    first = job(0, 4, 5)
    first.priority = 1
    policy.job_submitted(view, first)
    assert ids(policy.schedule(later(view))) == [5]


def test_other_free_nodes_make_the_next_pass_a_full_one() -> None:
    policy, view, _ = blocked()
    assert ids(policy.schedule(View(free=2, running=[(40, 2)]))) == [5]


def test_a_full_machine_forgets_the_blocked_pass() -> None:
    policy, view, _ = blocked()
    assert policy.schedule(View(free=0, running=[(10, 4)])) == []
    assert policy._blocked is None
    assert ids(policy.schedule(later(view))) == [5]


def test_an_empty_queue_starts_nothing() -> None:
    view = View()
    policy = easy(view)
    assert policy.schedule(view) == []


# -- a deep queue: the narrow jobs' classes are merged -------------------------------------


def test_a_deep_queue_backfills_by_merging_the_width_classes() -> None:
    # Head 1 (w4) and 70 wide jobs behind it; the two narrow ones at the end are the
    # only ones that fit the free node: 101 ends by the shadow (10), 100 does not.
    view = View(free=1, running=[(10, 3)])
    jobs = [job(1, 4, 5)] + [job(i, 4, 5) for i in range(2, 72)]
    jobs += [job(100, 1, 11), job(101, 1, 10)]
    policy = easy(view, *jobs)
    assert ids(policy.schedule(view)) == [101]
    assert policy.queue.classes is not None  # merged, not walked
    assert len(policy.waiting()) == 72
    assert 101 not in [e[3].id for e in policy.queue.classes[1]]


def test_a_deep_queue_starts_its_first_jobs_and_backfills_the_narrow_ones() -> None:
    # 4 free: job 1 (w2, 5 s) starts; head 2 (w4): 2 free, 4 at 5 -> shadow 5, extra 0.
    view = View(free=4)
    jobs = [job(1, 2, 5)] + [job(i, 4, 5) for i in range(2, 72)] + [job(100, 1, 5)]
    policy = easy(view, *jobs)
    assert ids(policy.schedule(view)) == [1, 100]
    assert [j.id for j in policy.waiting()] == list(range(2, 72))


# -- in order, without backfilling ---------------------------------------------------------


def test_in_order_starts_jobs_while_the_head_fits() -> None:
    view = View(free=3)
    policy = InOrderPolicy("fcfs", fcfs_key)
    for j in (job(1, 1, 5), job(2, 2, 5), job(3, 1, 5)):
        policy.job_submitted(view, j)
    assert ids(policy.schedule(view)) == [1, 2]
    assert policy.schedule(View(free=0)) == []
    assert ids(policy.schedule(View(free=1))) == [3]
    assert policy.schedule(View(free=1)) == []


def test_in_order_stops_at_the_first_job_that_does_not_fit() -> None:
    policy = InOrderPolicy("fcfs", fcfs_key)
    view = View(free=2)
    for j in (job(1, 3, 5), job(2, 1, 5)):
        policy.job_submitted(view, j)
    assert policy.schedule(view) == []
    assert [j.id for j in policy.waiting()] == [1, 2]


def test_in_order_around_reservations_each_job_must_fit_its_whole_estimate() -> None:
    # A reservation takes all 4 nodes over [5,15): job 1 ends by 5 and starts; job 2
    # would run into it and stops the pass, job 3 (which would fit) waits behind it.
    view = View(free=4, pending=[(5, 15, 4)])
    policy = InOrderPolicy("fcfs", fcfs_key)
    for j in (job(1, 2, 5), job(2, 2, 6), job(3, 1, 1)):
        policy.job_submitted(view, j)
    assert ids(policy.schedule(view)) == [1]
    assert [j.id for j in policy.waiting()] == [2, 3]
    assert policy.schedule(View(now=15, free=4, pending=[(20, 30, 4)])) == []
    assert ids(policy.schedule(View(now=15, free=4, pending=[(30, 40, 4)]))) == [2, 3]


def test_first_jobs_leave_the_queue_when_nothing_backfills() -> None:
    # 4 free: 1 starts; head 2 (w4): shadow 5, extra 0; 3 runs past 5 and waits.
    view = View(free=4)
    policy = easy(view, job(1, 1, 5), job(2, 4, 5), job(3, 2, 100))
    assert ids(policy.schedule(view)) == [1]
    assert [j.id for j in policy.waiting()] == [2, 3]


def test_around_reservations_the_head_holds_its_nodes() -> None:
    # Job 0 (w5) never fits; head 1 (w4) is reserved from 4, when the running job ends;
    # job 2 (w1, 10 s) would run into that and waits.
    view = View(free=2, running=[(4, 2)], pending=[(100, 101, 1)])
    policy = easy(view, job(0, 5, 1), job(1, 4, 10), job(2, 1, 10), job(3, 1, 4))
    assert ids(policy.schedule(view)) == [3]
    assert [j.id for j in policy.waiting()] == [0, 1, 2]


def test_around_reservations_the_jobs_started_hold_their_nodes() -> None:
    # Job 1 (w3) starts; job 2 (w2) then cannot, and is reserved at 10; job 3 (w1)
    # takes the last node.
    view = View(free=4, pending=[(100, 101, 1)])
    policy = easy(view, job(1, 3, 10), job(2, 2, 10), job(3, 1, 5))
    assert ids(policy.schedule(view)) == [1, 3]


def test_in_order_around_reservations_the_jobs_started_hold_their_nodes() -> None:
    view = View(free=4, pending=[(100, 101, 1)])
    policy = InOrderPolicy("fcfs", fcfs_key)
    for j in (job(1, 3, 10), job(2, 2, 1)):
        policy.job_submitted(view, j)
    assert ids(policy.schedule(view)) == [1]


def test_a_deep_queue_that_backfills_nothing_is_remembered() -> None:
    # As above, but the narrow job ends after the shadow: nothing starts, and the pass
    # is remembered; a newcomer that ends by the shadow then backfills.
    view = View(free=1, running=[(10, 3)])
    jobs = [job(1, 4, 5)] + [job(i, 4, 5) for i in range(2, 72)] + [job(100, 1, 11)]
    policy = easy(view, *jobs)
    assert policy.schedule(view) == []
    assert policy._blocked == (jobs[0], 1, 10, 0)
    policy.job_submitted(view, job(101, 1, 10))
    assert ids(policy.schedule(view)) == [101]
