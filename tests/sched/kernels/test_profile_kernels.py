"""The compiled loops of the availability profile (``sched.kernels.profile``) against the
plain reference ``ListProfile``, on hand-made profiles and on random reservations: every
step list, start and step count must be the reference's."""

from __future__ import annotations

import random

import numpy as np
import pytest

from batchd.model.times import NEVER
from batchd.sched.core.profile import ListProfile
from batchd.sched.kernels import profile as kernels

ROOM = 64


def arrays(steps: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray, int]:
    t = np.zeros(ROOM, dtype=np.int64)
    f = np.zeros(ROOM, dtype=np.int64)
    for i, (time, free) in enumerate(steps):
        t[i] = time
        f[i] = free
    return t, f, len(steps)


def steps_of(t: np.ndarray, f: np.ndarray, n: int) -> list[tuple[int, int]]:
    return list(zip(t[:n].tolist(), f[:n].tolist(), strict=True))


def reference(steps: list[tuple[int, int]]) -> ListProfile:
    prof = ListProfile(10)
    prof.times = [time for time, _ in steps]
    prof.free = [free for _, free in steps]
    return prof


# 10 nodes; 4 free from 0, 10 from 10, 2 from 20, 6 from 30 on.
STEPS = [(0, 4), (10, 10), (20, 2), (30, 6)]


@pytest.mark.parametrize(
    ("x", "index"), [(-5, 0), (0, 0), (9, 0), (10, 1), (19, 1), (20, 2), (29, 2), (30, 3), (99, 3)]
)
def test_locate_finds_the_step_holding_a_time(x: int, index: int) -> None:
    t, _, n = arrays(STEPS)
    assert kernels.locate(t, n, x) == index


def test_locate_on_one_step_is_that_step() -> None:
    t, _, _ = arrays([(5, 3)])
    assert kernels.locate(t, 1, 100) == 0


@pytest.mark.parametrize(
    ("width", "dur", "not_before", "start"),
    [
        (4, 5, 0, 0),  # fits at once
        (4, 10, 0, 0),  # ends exactly where the next step begins
        (5, 5, 0, 10),  # needs the second step
        (5, 10, 0, 10),  # [10, 20) exactly
        (5, 11, 0, 30),  # would run into the 2 free from 20
        (3, 15, 5, 5),  # [5, 20): ends where the 2 free begin
        (3, 16, 5, 30),  # [5, 21) runs into the 2 free from 20
        (2, 50, 3, 3),  # fits everywhere: from not_before, not the step's start
        (6, 5, 12, 12),  # inside the second step
        (6, 100, 25, 30),
        (7, 1, 0, 10),
        (7, 1, 21, NEVER),  # 7 nodes are never free after 20
        (11, 1, 0, NEVER),  # wider than the machine
    ],
)
def test_earliest_start(width: int, dur: int, not_before: int, start: int) -> None:
    t, f, n = arrays(STEPS)
    assert kernels.earliest_start(t, f, n, width, dur, not_before) == start
    assert reference(STEPS).earliest_start(width, dur, not_before) == start


@pytest.mark.parametrize(
    ("start", "end", "delta", "after"),
    [
        (0, 10, 6, [(0, 10), (20, 2), (30, 6)]),  # merges with the next step
        (10, 20, -6, [(0, 4), (20, 2), (30, 6)]),  # merges with the previous step
        (10, 20, -8, [(0, 4), (10, 2), (30, 6)]),  # merges with the next step
        (5, 15, -1, [(0, 4), (5, 3), (10, 9), (15, 10), (20, 2), (30, 6)]),
        (12, 18, -2, [(0, 4), (10, 10), (12, 8), (18, 10), (20, 2), (30, 6)]),
        (35, 40, -1, [(0, 4), (10, 10), (20, 2), (30, 6), (35, 5), (40, 6)]),
        (-5, 10, -1, [(0, 3), (10, 10), (20, 2), (30, 6)]),  # the past is gone
        (-5, 0, -1, STEPS),  # entirely in the past
        (15, 15, -3, STEPS),  # empty
        (15, 12, -3, STEPS),  # reversed
        (30, 40, -4, [(0, 4), (10, 10), (20, 2), (40, 6)]),
        (20, 30, 8, [(0, 4), (10, 10), (30, 6)]),
        (20, 30, 2, [(0, 4), (10, 10), (20, 4), (30, 6)]),
        (0, 30, 1, [(0, 5), (10, 11), (20, 3), (30, 6)]),
    ],
)
def test_add(start: int, end: int, delta: int, after: list[tuple[int, int]]) -> None:
    t, f, n = arrays(STEPS)
    n = kernels.add(t, f, n, start, end, delta)
    assert steps_of(t, f, n) == after
    if end > start:
        ref = reference(STEPS)
        ref.release(max(start, 0), end, delta)
        assert ref.steps() == after


def test_add_over_a_whole_merges_both_sides() -> None:
    steps = [(0, 4), (10, 2), (20, 4)]
    t, f, n = arrays(steps)
    assert kernels.add(t, f, n, 10, 20, 2) == 1
    assert steps_of(t, f, 1) == [(0, 4)]


@pytest.mark.parametrize(
    ("now", "after"),
    [
        (-3, STEPS),
        (0, STEPS),
        (5, [(5, 4), (10, 10), (20, 2), (30, 6)]),
        (10, [(10, 10), (20, 2), (30, 6)]),
        (25, [(25, 2), (30, 6)]),
        (30, [(30, 6)]),
        (99, [(99, 6)]),
    ],
)
def test_advance_forgets_the_past(now: int, after: list[tuple[int, int]]) -> None:
    t, f, n = arrays(STEPS)
    n = kernels.advance(t, f, n, now)
    assert steps_of(t, f, n) == after
    ref = reference(STEPS)
    ref.advance(now)
    assert ref.steps() == after


def test_place_reserves_the_earliest_slot() -> None:
    t, f, n = arrays(STEPS)
    start, n = kernels.place(t, f, n, 5, 10, 0)
    assert start == 10
    assert steps_of(t, f, n) == [(0, 4), (10, 5), (20, 2), (30, 6)]
    start, n2 = kernels.place(t, f, n, 7, 1, 0)
    assert (start, n2) == (NEVER, n)
    assert steps_of(t, f, n) == [(0, 4), (10, 5), (20, 2), (30, 6)]


def test_build_from_running_jobs() -> None:
    t = np.zeros(ROOM, dtype=np.int64)
    f = np.zeros(ROOM, dtype=np.int64)
    ends = np.array([3, 5, 8, 8, 12], dtype=np.int64)
    widths = np.array([1, 2, 1, 3, 2], dtype=np.int64)
    n = kernels.build(t, f, 5, 10, ends, widths)
    # The jobs ending at 3 and 5 have ended at 5: 10 - 6 free then.
    assert steps_of(t, f, n) == [(5, 4), (8, 8), (12, 10)]
    ref = ListProfile.of_running(10, 5, ends.tolist(), widths.tolist())
    assert ref.steps() == steps_of(t, f, n)


def test_build_with_nothing_running() -> None:
    t = np.zeros(ROOM, dtype=np.int64)
    f = np.zeros(ROOM, dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    assert kernels.build(t, f, 7, 10, empty, empty) == 1
    assert steps_of(t, f, 1) == [(7, 10)]


def test_plan_reserve_and_compress() -> None:
    widths = np.array([6, 4, 10, 11, 3], dtype=np.int64)
    durs = np.array([10, 5, 5, 1, 20], dtype=np.int64)
    t, f, n = arrays([(0, 10)])
    starts = np.zeros(5, dtype=np.int64)
    n = kernels.plan_all(t, f, n, widths, durs, 2, starts)
    assert starts.tolist() == [2, 2, 12, NEVER, 17]
    assert steps_of(t, f, n) == [(0, 10), (2, 0), (7, 4), (12, 0), (17, 7), (37, 10)]
    ref = ListProfile(10)
    assert ref.plan(widths.tolist(), durs.tolist(), 2) == starts.tolist()
    assert ref.steps() == steps_of(t, f, n)

    # The same reservations put into an empty profile give the same steps.
    t2, f2, n2 = arrays([(0, 10)])
    n2 = kernels.reserve_all(t2, f2, n2, widths, durs, starts)
    assert steps_of(t2, f2, n2) == steps_of(t, f, n)

    # Reservations made late move earlier: the wide job first, then the others.
    late = np.array([30, 40, 50, NEVER, 60], dtype=np.int64)
    t3, f3, n3 = arrays([(0, 10)])
    n3 = kernels.reserve_all(t3, f3, n3, widths, durs, late)
    assert steps_of(t3, f3, n3)[:3] == [(0, 10), (30, 4), (40, 6)]
    n3 = kernels.compress(t3, f3, n3, widths, durs, 0, late)
    assert late.tolist() == [0, 0, 10, NEVER, 15]
    assert steps_of(t3, f3, n3) == [(0, 0), (5, 4), (10, 0), (15, 7), (35, 10)]


@pytest.mark.parametrize("seed", range(6))
def test_random_reservations_match_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    capacity = rng.randint(4, 12)
    t = np.zeros(4 * ROOM, dtype=np.int64)
    f = np.zeros(4 * ROOM, dtype=np.int64)
    t[0], f[0] = 0, capacity
    n = 1
    ref = ListProfile(capacity)
    for _ in range(25):
        width = rng.randint(1, capacity + 1)
        dur = rng.randint(1, 30)
        not_before = rng.randint(0, 60)
        expected = ref.earliest_start(width, dur, not_before)
        assert kernels.earliest_start(t, f, n, width, dur, not_before) == expected
        start, n = kernels.place(t, f, n, width, dur, not_before)
        assert start == ref.place(width, dur, not_before)
        if rng.random() < 0.3 and start != NEVER:
            n = kernels.add(t, f, n, start, start + dur, width)
            ref.release(start, start + dur, width)
        if rng.random() < 0.15:
            now = rng.randint(0, 40)
            n = kernels.advance(t, f, n, now)
            ref.advance(now)
        assert steps_of(t, f, n) == ref.steps()
        probe = rng.randint(-5, 120)
        assert f[kernels.locate(t, n, probe)] == ref.free_at(probe)


def test_advance_on_arrays_with_no_spare_slot() -> None:
    t = np.array([time for time, _ in STEPS], dtype=np.int64)
    f = np.array([free for _, free in STEPS], dtype=np.int64)
    n = kernels.advance(t, f, 4, 25)
    assert steps_of(t, f, n) == [(25, 2), (30, 6)]


@pytest.mark.parametrize("seed", range(8))
def test_a_long_plan_equals_each_job_searched_from_the_start(seed: int) -> None:
    # plan_all begins each search at the start of a recent job no wider and no longer
    # (RECENT of them): hundreds of jobs of a few shapes, some too wide, on a profile
    # with running jobs, must get the starts of searches that begin at not_before.
    rng = random.Random(seed)
    capacity = rng.randint(4, 16)
    shapes = [(rng.randint(1, capacity + 1), rng.choice([1, 5, 20, 60])) for _ in range(6)]
    jobs = [rng.choice(shapes) for _ in range(3 * kernels.RECENT + 7)]
    ref = ListProfile(capacity)
    for _ in range(4):
        start = rng.randint(0, 50)
        ref.reserve(start, start + rng.randint(1, 40), rng.randint(1, capacity))
    plan_as_the_reference(ref, jobs, 3)


def plan_as_the_reference(ref: ListProfile, jobs: list[tuple[int, int]], not_before: int) -> None:
    """plan_all on ``ref``'s steps gives each job the start ``ref.place`` gives it, one
    after the other, and leaves the reference's steps."""
    widths = np.array([w for w, _ in jobs], dtype=np.int64)
    durs = np.array([d for _, d in jobs], dtype=np.int64)
    room = 2 * len(jobs) + 4 + len(ref.steps())
    t = np.zeros(room, dtype=np.int64)
    f = np.zeros(room, dtype=np.int64)
    for i, (time, free) in enumerate(ref.steps()):
        t[i], f[i] = time, free
    starts = np.zeros(len(jobs), dtype=np.int64)
    n = kernels.plan_all(t, f, len(ref.steps()), widths, durs, not_before, starts)
    assert starts.tolist() == [ref.place(w, d, not_before) for w, d in jobs]
    assert steps_of(t, f, n) == ref.steps()


def test_jobs_of_one_shape_side_by_side_start_together_as_far_as_room_allows() -> None:
    # 9 nodes, 7 free until 10, 5 until 20, then 9. Six jobs of 2 nodes for 15 s: two
    # fit [0, 15) (5 free at the narrowest), two [15, 30), the last two from 20. Then a
    # job of another shape, searched for on its own, and one of the first shape, which
    # starts at 30 (1 node is left in [15, 30)), not with the last two.
    t, f, n = arrays([(0, 7), (10, 5), (20, 9)])
    widths = np.array([2, 2, 2, 2, 2, 2, 1, 2], dtype=np.int64)
    durs = np.array([15, 15, 15, 15, 15, 15, 15, 15], dtype=np.int64)
    starts = np.zeros(len(widths), dtype=np.int64)
    n = kernels.plan_all(t, f, n, widths, durs, 0, starts)
    assert starts.tolist() == [0, 0, 15, 15, 20, 20, 0, 30]
    ref = reference([(0, 7), (10, 5), (20, 9)])
    shapes = zip(widths.tolist(), durs.tolist(), strict=True)
    assert [ref.place(w, d, 0) for w, d in shapes] == starts.tolist()
    assert steps_of(t, f, n) == ref.steps()


@pytest.mark.parametrize("seed", range(8))
def test_bursts_of_one_shape_get_the_starts_of_one_search_each(seed: int) -> None:
    # Bursts of up to 30 jobs of a shape (an array, a user's loop), some too wide for the
    # machine, some of no nodes or no time, on a profile with reservations.
    rng = random.Random(seed)
    capacity = rng.randint(4, 40)
    ref = ListProfile(capacity)
    for _ in range(6):
        start = rng.randint(0, 50)
        ref.reserve(start, start + rng.randint(1, 40), rng.randint(1, capacity))
    jobs: list[tuple[int, int]] = []
    while len(jobs) < 300:
        shape = (rng.randint(0, capacity + 1), rng.choice([0, 1, 5, 20, 60]))
        jobs += [shape] * rng.randint(1, 30)
    plan_as_the_reference(ref, jobs, 2)


@pytest.mark.parametrize(
    ("width", "dur", "not_before", "found"),
    [
        (4, 10, 0, (0, 0, 1)),  # steps 0..0 cover [0, 10)
        (4, 15, 0, (0, 0, 2)),  # [0, 15): steps 0 and 1
        (3, 5, 25, (30, 3, 4)),  # the last step holds it; no step after
        (5, 5, 0, (10, 1, 2)),  # 5 free only in [10, 20)
        (5, 11, 0, (30, 3, 4)),  # 5 free for 11 seconds: only from 30 on
        (11, 1, 0, (NEVER, 0, 0)),  # wider than the machine
        (2, 40, 12, (12, 1, 4)),  # [12, 52): steps 1 to 3
        (2, 0, 12, (12, 1, 2)),  # an empty window: the step holding its start
    ],
)
def test_window_gives_the_start_and_the_steps_it_covers(
    width: int, dur: int, not_before: int, found: tuple[int, int, int]
) -> None:
    t, f, n = arrays(STEPS)
    assert kernels.window(t, f, n, width, dur, not_before) == found
    assert kernels.earliest_start(t, f, n, width, dur, not_before) == found[0]


def test_window_stops_at_its_limit() -> None:
    t, f, n = arrays(STEPS)
    assert kernels.window(t, f, n, 5, 5, 0, 10) == (NEVER, 0, 0)  # the start is 10
    assert kernels.window(t, f, n, 5, 5, 0, 11) == (10, 1, 2)
    assert kernels.earliest_start(t, f, n, 5, 5, 0, 10) == NEVER
    assert kernels.earliest_start(t, f, n, 5, 5, 0, 11) == 10


@pytest.mark.parametrize(("width", "dur"), [(0, 10), (3, 0), (0, 0)])
def test_a_job_of_no_nodes_or_no_time_holds_nothing(width: int, dur: int) -> None:
    # It gets a start, and the steps stay as they were: no step split, none doubled.
    t, f, n = arrays(STEPS)
    start, n = kernels.place(t, f, n, width, dur, 5)
    assert start == 5 and steps_of(t, f, n) == STEPS
    # One job: a second of the same shape would merge back the steps the first split.
    starts = np.zeros(1, dtype=np.int64)
    shape = np.array([width], dtype=np.int64), np.array([dur], dtype=np.int64)
    n = kernels.plan_all(t, f, n, *shape, 12, starts)
    assert starts.tolist() == [12] and steps_of(t, f, n) == STEPS


@pytest.mark.parametrize("seed", range(10))
def test_take_is_add_without_its_searches(seed: int) -> None:
    # Reserving the window a search found by its step indices must leave the steps
    # add leaves (merged on both sides, split on both, or neither).
    rng = random.Random(seed)
    capacity = rng.randint(2, 9)
    ref = ListProfile(capacity)
    t = np.zeros(4 * ROOM, dtype=np.int64)
    f = np.zeros(4 * ROOM, dtype=np.int64)
    t[0], f[0], n = 0, capacity, 1
    for _ in range(40):
        width = rng.randint(1, capacity)
        dur = rng.choice([1, 3, 10, 25])
        not_before = rng.randint(0, 50)
        start, i, j = kernels.window(t, f, n, width, dur, not_before)
        assert start == ref.earliest_start(width, dur, not_before)
        if start == NEVER:
            continue
        assert t[i] <= start and (i + 1 == n or t[i + 1] > start)
        assert all(t[k] < start + dur for k in range(i, j)) and (j == n or t[j] >= start + dur)
        n = kernels.take(t, f, n, i, j, start, start + dur, width)
        ref.reserve(start, start + dur, width)
        assert steps_of(t, f, n) == ref.steps()
        if rng.random() < 0.3:  # room given back, so later windows meet merged steps
            n = kernels.add(t, f, n, start, start + dur, width)
            ref.release(start, start + dur, width)
            assert steps_of(t, f, n) == ref.steps()


@pytest.mark.parametrize("seed", range(6))
def test_release_all_takes_a_plans_tail_back_out(seed: int) -> None:
    # A plan with its last jobs taken out again is the plan of the first ones alone;
    # jobs too wide (planned at NEVER) held nothing and give nothing back.
    rng = random.Random(seed)
    capacity = 8
    count = 40
    widths = np.array([rng.randint(1, capacity + 1) for _ in range(count)], dtype=np.int64)
    durs = np.array([rng.randint(1, 30) for _ in range(count)], dtype=np.int64)
    cut = rng.randint(0, count)

    def planned(jobs: int) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
        t, f, n = arrays([(5, capacity), (20, capacity - 3), (45, capacity)])
        t, f = np.resize(t, 4 * ROOM), np.resize(f, 4 * ROOM)
        starts = np.zeros(jobs, dtype=np.int64)
        n = kernels.plan_all(t, f, n, widths[:jobs], durs[:jobs], 5, starts)
        return t, f, n, starts

    t, f, n, starts = planned(count)
    assert NEVER in starts.tolist()
    n = kernels.release_all(t, f, n, widths[cut:], durs[cut:], starts[cut:])
    t0, f0, n0, _ = planned(cut)
    assert steps_of(t, f, n) == steps_of(t0, f0, n0)


@pytest.mark.parametrize("seed", range(6))
def test_reservations_of_one_start_and_duration_side_by_side_go_in_and_out_together(
    seed: int,
) -> None:
    # Runs of jobs that share a start and a duration, of any widths, some never planned
    # (NEVER), some of no time: reserve_all leaves the steps one reservation at a time
    # leaves, and release_all takes them all back out.
    rng = random.Random(seed)
    capacity = 200
    steps = [(0, capacity), (15, capacity - 20), (40, capacity)]
    jobs: list[tuple[int, int, int]] = []
    while len(jobs) < 60:
        start = rng.choice([NEVER, rng.randint(0, 60)])
        dur = rng.choice([0, 1, 7, 30])
        jobs += [(rng.randint(1, 3), dur, start) for _ in range(rng.randint(1, 6))]
    widths, durs, starts = (np.array(col, dtype=np.int64) for col in zip(*jobs, strict=True))
    ref = reference(steps)
    for w, d, s in jobs:
        if s != NEVER:
            ref.reserve(s, s + d, w)
    t, f, n = arrays(steps)
    t, f = np.resize(t, 4 * ROOM), np.resize(f, 4 * ROOM)
    n = kernels.reserve_all(t, f, n, widths, durs, starts)
    assert steps_of(t, f, n) == ref.steps()
    n = kernels.release_all(t, f, n, widths, durs, starts)
    assert steps_of(t, f, n) == steps


def test_reservations_that_began_before_the_origin_hold_from_it() -> None:
    # A profile from 10 on: a reservation over [5, 15) holds [10, 15), one over [2, 8)
    # nothing, as reserving them one at a time does.
    t, f, n = arrays([(10, 4)])
    widths, durs = np.array([2, 1]), np.array([10, 6])
    n = kernels.reserve_all(t, f, n, widths, durs, np.array([5, 2]))
    assert steps_of(t, f, n) == [(10, 2), (15, 4)]


def test_a_change_that_never_ends_changes_every_step_from_its_start() -> None:
    def added(steps: list[tuple[int, int]], start: int, delta: int) -> list[tuple[int, int]]:
        t = np.array([s for s, _ in steps] + [0, 0], dtype=np.int64)
        f = np.array([v for _, v in steps] + [0, 0], dtype=np.int64)
        n = kernels.add(t, f, len(steps), start, NEVER, delta)
        return list(zip(t[:n].tolist(), f[:n].tolist(), strict=True))

    assert added([(0, 4), (10, 2)], 5, 2) == [(0, 4), (5, 6), (10, 4)]
    assert added([(0, 4), (10, 2)], 10, 2) == [(0, 4)]  # merged with the step before
    assert added([(0, 4), (10, 2)], 0, -1) == [(0, 3), (10, 1)]
