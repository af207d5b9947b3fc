"""The planned starts of policies that keep no plan (``Forecaster``), worked out by hand.

The machine: 10 nodes, 6 of them busy until 50. ``A`` takes 4 nodes for 100 s, ``B`` 8
for 10 s, ``C`` 4 for 5 s, ``WIDE`` 11 (more than the machine). A kept plan is reused
only while it holds; ``planned`` counts the plans made afresh, which is what keeping
one saves.
"""

from __future__ import annotations

import random

import pytest

from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.sched.core import forecast
from batchd.sched.core.forecast import Forecaster
from batchd.sched.core.order import OrderedQueue, fcfs_key
from batchd.sched.core.plans import base_profile
from batchd.sched.core.profile import Profile
from machine_view import HandView


def view(now: int = 0, ends: tuple[int, ...] = (50,)) -> HandView:
    return HandView(now, 10, list(ends), [6] * len(ends))


def jobs() -> tuple[Job, Job, Job, Job]:
    return Job(1, 0, 4, 100, 100), Job(2, 1, 8, 10, 10), Job(3, 2, 4, 5, 5), Job(4, 3, 11, 5, 5)


@pytest.fixture
def planned(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per plan made afresh (each starts from a new base profile)."""
    made: list[int] = []

    def counted(v: HandView, room: int) -> Profile:
        made.append(room)
        return base_profile(v, room)

    monkeypatch.setattr(forecast, "base_profile", counted)
    return made


def test_with_backfilling_each_job_takes_its_earliest_start() -> None:
    a, b, c, wide = jobs()
    # A now (4 free until 50); B when 8 are free, at 100; C when 6 are free, at 50. WIDE
    # never, and nobody waits for it.
    assert Forecaster().plan(view(), [a, b, c, wide]) == [0, 100, 50, NEVER]
    assert Forecaster().plan(view(), [wide, c]) == [NEVER, 0]
    assert Forecaster().plan(view(), []) == []


def test_in_order_no_job_starts_before_the_one_ahead() -> None:
    a, b, c, wide = jobs()
    assert Forecaster(in_order=True).plan(view(), [a, b, c]) == [0, 100, 110]
    assert Forecaster(in_order=True).plan(view(), [c, a, b]) == [0, 5, 105]
    # Behind a job that can never start, nobody starts.
    assert Forecaster(in_order=True).plan(view(), [c, wide, a]) == [0, NEVER, NEVER]
    assert Forecaster(in_order=True).plan(view(5), [c]) == [5]


def test_a_job_appended_is_placed_on_the_kept_plan(planned: list[int]) -> None:
    a, b, c, _ = jobs()
    f = Forecaster()
    assert f.plan(view(), [a, b]) == [0, 100]
    assert f.plan(view(), [a, b, c]) == [0, 100, 50]
    assert f.plan(view(), [a, b, c]) == [0, 100, 50]
    assert planned == [2]
    g = Forecaster(in_order=True)
    assert g.plan(view(), [a, b]) == [0, 100]
    assert g.plan(view(), [a, b, c]) == [0, 100, 110]
    assert planned == [2, 2]


def test_the_answer_is_a_copy() -> None:
    a, b, c, _ = jobs()
    f = Forecaster()
    first = f.plan(view(), [a, b])
    first.append(7)
    assert f.plan(view(), [a, b]) == [0, 100]


def test_other_jobs_are_planned_afresh(planned: list[int]) -> None:
    a, b, c, _ = jobs()
    f = Forecaster()
    assert f.plan(view(), [a, b]) == [0, 100]
    assert f.plan(view(), [b, a]) == [50, 60]  # B first: at 50; A then waits for it
    assert f.plan(view(), [b]) == [50]  # fewer jobs
    assert planned == [2, 2, 1]


def test_another_machine_is_planned_afresh(planned: list[int]) -> None:
    a, b, _, _ = jobs()
    f = Forecaster()
    assert f.plan(view(), [a, b]) == [0, 100]
    assert f.plan(view(0, (30,)), [a, b]) == [0, 100]  # the same starts, planned again
    assert f.plan(view(0, (30,)), [a, b, Job(5, 0, 8, 10, 10)]) == [0, 100, 110]
    assert f.plan(HandView(0, 12, [30], [6]), [a]) == [0]
    assert f.plan(HandView(0, 12, [30], [6], [(200, 300, 1)]), [a]) == [0]
    assert planned == [2, 2, 1, 1]


def test_time_past_the_first_planned_start_plans_afresh(planned: list[int]) -> None:
    a, b, c, _ = jobs()
    f = Forecaster()
    assert f.plan(view(), [a, b]) == [0, 100]
    assert f.plan(view(5), [a, b]) == [5, 105]  # A did not start at 0: from now on
    assert planned == [2, 2]


def test_time_before_the_first_planned_start_keeps_the_plan(planned: list[int]) -> None:
    a, b, c, _ = jobs()
    f = Forecaster()
    assert f.plan(view(10), [b]) == [50]
    assert f.plan(view(50), [b]) == [50]  # still its earliest start: kept
    assert planned == [1]
    assert f.plan(view(60), [b]) == [60]
    assert planned == [1, 1]


def test_time_before_the_plan_was_made_plans_afresh(planned: list[int]) -> None:
    a, b, c, _ = jobs()
    f = Forecaster()
    assert f.plan(view(10), [b]) == [50]
    assert f.plan(view(5), [b, c]) == [50, 5]  # the kept plan begins at 10
    assert planned == [1, 2]


def queue_of(*queued: Job) -> OrderedQueue:
    q = OrderedQueue(fcfs_key)
    for job in queued:
        q.insert(job)
    return q


def test_a_queue_is_planned_once_while_only_appended_to(planned: list[int]) -> None:
    a, b, c, wide = jobs()
    q = queue_of(a, b)
    f = Forecaster()
    assert f.plan_queue(view(), q) == [0, 100]
    assert f.plan_queue(view(), q) == [0, 100]
    q.insert(c)
    assert f.start_of(view(), q, c) == 50
    assert f.start_of(view(), q, a) == 0
    assert f.start_of(view(), q, wide) == NEVER  # not waiting
    assert planned == [2]
    q.remove(a)  # a change: planned afresh
    assert f.plan_queue(view(), q) == [50, 0]
    assert planned == [2, 2]


def test_a_queue_on_another_machine_or_time_is_planned_afresh(planned: list[int]) -> None:
    a, b, _, _ = jobs()
    q = queue_of(a, b)
    f = Forecaster()
    assert f.plan_queue(view(), q) == [0, 100]
    assert f.plan_queue(view(5), q) == [5, 105]
    assert f.plan_queue(view(5, (40,)), q) == [5, 105]
    assert planned == [2, 2, 2]


def test_another_queue_is_planned_afresh(planned: list[int]) -> None:
    a, b, c, _ = jobs()
    f = Forecaster()
    assert f.plan_queue(view(), queue_of(a, b)) == [0, 100]
    other = queue_of(b, c)
    assert f.plan_queue(view(), other) == [50, 0]
    assert planned == [2, 2]


def test_a_list_planned_between_forgets_the_queue() -> None:
    a, b, _, _ = jobs()
    q = queue_of(a, b)
    f = Forecaster()
    assert f.plan_queue(view(), q) == [0, 100]
    assert f.plan(view(), [b]) == [50]
    assert f.plan_queue(view(), q) == [0, 100]


def test_after_an_empty_plan_jobs_are_planned() -> None:
    a, b, _, _ = jobs()
    f = Forecaster()
    assert f.plan(view(), []) == []
    assert f.plan(view(), [a, b]) == [0, 100]
    assert f.plan(view(3), [a, b]) == [3, 103]


def test_with_backfilling_a_job_appended_passes_one_that_never_starts(
    planned: list[int],
) -> None:
    _, b, c, wide = jobs()
    f = Forecaster()
    assert f.plan(view(), [wide]) == [NEVER]
    assert f.plan(view(), [wide, c]) == [NEVER, 0]
    assert f.plan(view(), [wide, c, b]) == [NEVER, 0, 50]
    assert planned == [1]


def test_a_job_appended_earlier_than_the_plan_moves_its_first_start(
    planned: list[int],
) -> None:
    _, b, c, _ = jobs()
    f = Forecaster()
    assert f.plan(view(), [b]) == [50]
    assert f.plan(view(), [b, c]) == [50, 0]  # placed on the kept plan: C starts first
    assert f.plan(view(5), [b, c]) == [50, 5]  # so at 5 C has not started: planned afresh
    assert planned == [1, 2]


def test_in_order_the_first_start_is_kept_too(planned: list[int]) -> None:
    a, _, c, _ = jobs()
    f = Forecaster(in_order=True)
    assert f.plan(view(), [c, a]) == [0, 5]
    assert f.plan(view(3), [c, a]) == [3, 8]
    assert planned == [2, 2]
    g = Forecaster(in_order=True)
    assert g.plan(view(), [a]) == [0]
    assert g.plan(view(), [a, c]) == [0, 50]  # C not before A, when 4 are free beside it
    assert g.plan(view(60), [a, c]) == [60, 60]  # A did not start: both planned afresh
    assert planned == [2, 2, 1, 2]


@pytest.mark.parametrize("in_order", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_jobs_appended_one_by_one_start_as_in_a_plan_made_afresh(in_order: bool, seed: int) -> None:
    # The search of each appended job starts where an earlier job no wider and no
    # longer found room: the starts must be those of the whole queue planned anew,
    # also after the running jobs change (a plan made afresh, with more room: what was
    # learned of the old plan's room must not hold jobs back).
    rng = random.Random(seed)
    ends = sorted(rng.sample(range(1, 400), 5))
    widths = [rng.randint(1, 3) for _ in ends]
    queue: list[Job] = []
    kept = Forecaster(in_order=in_order)
    for i in range(1, 201):
        if i % 70 == 0:  # the running job that ends last ends now
            ends, widths = ends[:-1], widths[:-1]
        v = HandView(0, 16, ends, widths)
        width = rng.choice([1, 1, 2, 3, 4, 8, 12, 16, 17])  # 17: never on 16 nodes
        duration = rng.choice([5, 10, 30, 60, 60, 120, 600])
        queue.append(Job(i, 0, width, duration, duration))
        assert kept.plan(v, queue) == Forecaster(in_order=in_order).plan(v, queue), i


def test_a_search_starts_where_a_job_no_wider_and_no_longer_found_room(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A planned afresh at 0 and B at 100 (8 nodes when A ends). C, B's shape, cannot
    # find room before B's start: its search begins there (at 110, once B ends, it
    # fits). D, narrower and shorter than every job placed, searches from now (50,
    # beside A, once the 6 busy nodes are free).
    searched: list[int] = []
    search = Profile.earliest_start

    def spied(profile: Profile, width: int, duration: int, not_before: int) -> int:
        searched.append(not_before)
        return search(profile, width, duration, not_before)

    monkeypatch.setattr(Profile, "earliest_start", spied)
    a, b = Job(1, 0, 4, 100, 100), Job(2, 1, 8, 10, 10)
    c, d = Job(3, 2, 8, 10, 10), Job(4, 3, 4, 5, 5)
    f = Forecaster()
    assert f.plan(view(), [a, b]) == [0, 100]
    assert f.plan(view(), [a, b, c]) == [0, 100, 110]
    assert f.plan(view(), [a, b, c, d]) == [0, 100, 110, 50]
    assert searched == [100, 0]
