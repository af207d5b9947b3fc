"""A plan's outline (``batchd.sched.core.outline``) and the Forecaster's, worked out by hand.

The outline of a plan is its head (the first job's submission and planned start), the
latest planned end and the earliest planned start; a job with no planned start (NEVER)
has no end. ``Extent`` keeps the end and the first start of parallel lists of starts and
durations and reads only what was appended since its last answer.
"""

from __future__ import annotations

from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.sched.core.forecast import Forecaster
from batchd.sched.core.order import OrderedQueue, fcfs_key
from batchd.sched.core.outline import EMPTY, Extent, PlanOutline
from batchd.sched.core.policy import OrderedPolicy, Policy
from machine_view import HandView


def job(id: int, submit: int, estimate: int) -> Job:
    return Job(id, submit, 1, estimate, estimate)


def test_the_outline_of_a_plan_by_walking_it() -> None:
    a, b, c = job(1, 5, 100), job(2, 7, 0), job(3, 9, 20)
    # a from 40 to 140; b (estimate 0: it holds its node 1 s) from 30 to 31; c never.
    plan = [(a, 40), (b, 30), (c, NEVER)]
    assert PlanOutline.of(plan) == PlanOutline(5, 40, 140, 30)
    assert PlanOutline.of([(c, NEVER)]) == PlanOutline(9, NEVER, None, NEVER)
    assert PlanOutline.of([(b, 30)]) == PlanOutline(7, 30, 31, 30)
    assert PlanOutline.of([]) == EMPTY == PlanOutline(None, NEVER, None, NEVER)


def test_a_tail_after_an_outline() -> None:
    a, b, c = job(1, 5, 100), job(2, 7, 0), job(3, 9, 20)
    # Onto nothing, the tail's first job is the head.
    assert EMPTY.then([(c, NEVER), (a, 40)]) == PlanOutline(9, NEVER, 140, 40)
    # A head stays; ends and first starts combine; an unplanned job changes neither.
    head = PlanOutline(1, 50, 60, 50)
    assert head.then([(b, 30), (c, NEVER)]) == PlanOutline(1, 50, 60, 30)
    assert head.then([(a, 40)]) == PlanOutline(1, 50, 140, 40)
    assert PlanOutline(1, NEVER, None, NEVER).then([(b, 70)]) == PlanOutline(1, NEVER, 71, 70)
    assert head.then([]) is head


def test_an_extent_of_short_and_long_lists() -> None:
    empty = Extent().of([], [])
    assert (empty.end, empty.first) == (None, NEVER)
    short = Extent().of([10, NEVER, 5], [3, 100, 1])
    assert (short.end, short.first) == (13, 5)
    unplanned = Extent().of([NEVER, NEVER], [1, 2])
    assert (unplanned.end, unplanned.first) == (None, NEVER)
    # 64 entries and more are summed in numpy: the same answers.
    starts = [NEVER, *range(100, 199)]
    durations = [10**6, *([7] * 99)]
    long = Extent().of(starts, durations)
    assert (long.end, long.first) == (205, 100)
    never = Extent().of([NEVER] * 70, [1] * 70)
    assert (never.end, never.first) == (None, NEVER)


def test_an_extent_reads_only_what_was_appended() -> None:
    starts, durations = [10, 20], [5, 5]
    extent = Extent()
    assert (extent.of(starts, durations).end, extent.first) == (25, 10)
    durations[0] = 1000  # changed in place, unannounced: not read again
    starts.append(30)
    durations.append(1)
    assert (extent.of(starts, durations).end, extent.first) == (31, 10)  # not 1010
    starts.append(NEVER)
    durations.append(10**6)
    starts.append(2)
    durations.append(100)
    assert (extent.of(starts, durations).end, extent.first) == (102, 2)
    assert (extent.of(starts, durations).end, extent.first) == (102, 2)  # nothing new


def test_an_extent_starts_again_on_a_change_a_new_list_or_a_shorter_one() -> None:
    starts, durations = [10, 20], [5, 5]
    extent = Extent()
    extent.of(starts, durations, changes=1)
    durations[0] = 1000
    assert extent.of(starts, durations, changes=2).end == 1010  # announced: read again
    durations[0] = 5
    assert extent.of(list(starts), durations, changes=2).end == 25  # another list
    copy = list(starts)
    extent.of(copy, durations, changes=2)
    del copy[1]
    assert (extent.of(copy, durations[:1], changes=2).end, extent.first) == (15, 10)


def test_a_policy_tells_no_outline_unless_it_keeps_one() -> None:
    assert Policy.plan_outline(object(), HandView(0, 4)) is None  # type: ignore[arg-type]


def queue_of(*queued: Job) -> OrderedQueue:
    q = OrderedQueue(fcfs_key)
    for j in queued:
        q.insert(j)
    return q


def test_the_forecasters_outline_is_that_of_its_plan() -> None:
    # 10 nodes, 6 busy until 50. A (4 nodes, 100 s) now; B (8, 10 s) at 100 when 8 are
    # free; C (4, 5 s) now, beside A; WIDE (11) never.
    view = HandView(0, 10, [50], [6])
    a, b = Job(1, 0, 4, 100, 100), Job(2, 1, 8, 10, 10)
    c, wide = Job(3, 2, 4, 5, 5), Job(4, 3, 11, 5, 5)
    f = Forecaster()
    assert f.outline_queue(view, queue_of()) == EMPTY
    q = queue_of(a, b)
    assert f.outline_queue(view, q) == PlanOutline(0, 0, 110, 0)
    q.insert(wide)
    q.insert(c)  # appended: C behind WIDE, at 50
    assert f.outline_queue(view, q) == PlanOutline(0, 0, 110, 0)
    plan = list(zip(q.jobs, f.plan_queue(view, q), strict=True))
    assert f.outline_queue(view, q) == PlanOutline.of(plan)
    q.remove(a)  # B now waits first, at 50 (to 60); C starts now
    assert f.outline_queue(view, q) == PlanOutline(1, 50, 60, 0)


class Ordered(OrderedPolicy):
    def schedule(self, view: object) -> list[object]:  # type: ignore[override]
        return []


def test_an_ordered_policy_tells_its_forecasters_outline() -> None:
    view = HandView(0, 10, [50], [6])
    policy = Ordered("ordered", fcfs_key)
    policy.job_submitted(view, Job(1, 0, 4, 100, 100))
    policy.job_submitted(view, Job(2, 1, 8, 10, 10))
    assert policy.plan_outline(view) == PlanOutline(0, 0, 110, 0)


def test_an_extent_appended_to_with_and_without_planned_entries() -> None:
    starts, durations = [10], [5]
    extent = Extent()
    extent.of(starts, durations)
    starts.append(NEVER)  # nothing planned among the new: the end stays
    durations.append(3)
    assert (extent.of(starts, durations).end, extent.first) == (15, 10)
    starts, durations = [NEVER], [5]
    extent = Extent()
    assert extent.of(starts, durations).end is None
    starts.append(20)  # the first planned entry gives the first end
    durations.append(5)
    assert (extent.of(starts, durations).end, extent.first) == (25, 20)


def test_a_long_extent_keeps_every_second_of_late_times() -> None:
    late = 2**53 + 1  # no float64 holds it
    starts = [late + i for i in range(70)]
    extent = Extent().of(starts, [3] * 70)
    assert (extent.end, extent.first) == (late + 69 + 3, late)
