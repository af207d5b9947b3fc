"""Compressions made from the plan in force (``kernels.compression`` through
``KeptCompression``) against compressions made afresh (``kernels.profile.compress``).

Random machines plan a queue (every job at its earliest start), then go through
rounds of changes: a running job ends early, a waiting job is withdrawn, a new one is
placed at its earliest start, time passes to the next planned start and the jobs due
start. After each, the profile of the plan in force made that of now from what
changed must be the one laid out afresh, and both compressions of it must give the
same starts and leave the same steps; the kept one carries the slots its movers left
from round to round.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from batchd.model.times import NEVER
from batchd.sched.core.compression import KeptCompression
from batchd.sched.core.profile import Profile
from batchd.sched.kernels import blocked_compression, plan_change
from batchd.sched.kernels import compression as kernels


def intervals(starts: np.ndarray, ends: np.ndarray, count: int) -> list[tuple[int, int]]:
    return list(zip(starts[:count].tolist(), ends[:count].tolist(), strict=True))


class Plan:
    def __init__(self, rng: random.Random, bursts: bool = False) -> None:
        self.rng = rng
        self.capacity = rng.choice([3, 8, 20])
        self.now = 0
        self.running = [
            (rng.randint(1, 80), rng.randint(1, self.capacity // 2 + 1)) for _ in range(3)
        ]
        self.widths = [self.width() for _ in range(rng.randint(5, 30))]
        self.durations = [rng.choice([1, 4, 10, 25, 60]) for _ in self.widths]
        if bursts:  # runs of one shape side by side, as a trace's job arrays come
            shapes = [(self.width(), rng.choice([4, 10, 25])) for _ in range(3)]
            self.widths, self.durations = [], []
            while len(self.widths) < 40:
                width, duration = rng.choice(shapes)
                copies = rng.randint(1, 8)
                self.widths += [width] * copies
                self.durations += [duration] * copies
        self.kept = KeptCompression()
        self.kept.made_on(self.base())
        self.profile = self.base()
        self.starts = self.profile.plan(*self.arrays(), self.now)

    def width(self) -> int:
        return self.rng.randint(1, self.capacity + (1 if self.rng.random() < 0.05 else 0))

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array(self.widths, dtype=np.int64), np.array(self.durations, dtype=np.int64)

    def base(self) -> Profile:
        ends = sorted(self.running)
        return Profile.of_running(
            self.capacity, self.now, [e for e, _ in ends], [w for _, w in ends], room=64
        )

    def leave(self, i: int) -> None:
        self.kept.leave(int(self.starts[i]), self.durations[i], self.widths[i])
        del self.widths[i], self.durations[i]
        self.starts = np.delete(self.starts, i)

    def change(self) -> None:
        rng = self.rng
        planned = [int(s) for s in self.starts if s != NEVER]
        if len(planned) > 1 and rng.random() < 0.3:  # time passes: the jobs due then start
            self.now = min(planned)
            self.running = [(e, w) for e, w in self.running if e > self.now]
            for i in reversed(range(len(self.widths))):
                if self.starts[i] == self.now:
                    if self.widths[i] and self.durations[i]:
                        self.running.append((self.now + self.durations[i], self.widths[i]))
                    self.leave(i)
        if self.running and rng.random() < 0.7:  # an early end
            self.running.pop(rng.randrange(len(self.running)))
        if len(self.widths) > 1 and rng.random() < 0.3:  # a withdrawal
            self.leave(rng.randrange(len(self.widths)))
        if rng.random() < 0.5:  # a newcomer at its earliest start on the plan in force
            width, duration = self.width(), rng.choice([1, 4, 10, 25, 60])
            start = self.profile.place(width, duration, self.now)
            self.widths.append(width)
            self.durations.append(duration)
            self.starts = np.append(self.starts, start)

    def compress(self) -> None:
        widths, durations = self.arrays()
        fresh = self.base()
        fresh.reserve_all(widths, durations, self.starts)
        made_afresh = fresh.copy()
        want = made_afresh.compress(widths, durations, self.starts, self.now)
        base = self.base()
        gains = self.kept.changed(self.profile, base, self.now, len(widths))
        assert self.profile.steps() == fresh.steps()
        arrays = (widths, durations)
        got = self.kept.compress(self.profile, gains, arrays, self.starts.copy(), base, self.now)
        assert got.tolist() == want.tolist()
        assert self.profile.steps() == made_afresh.steps()
        moved = [
            (int(a), int(a + d))
            for a, b, d in zip(self.starts, got, durations, strict=True)
            if a != b and a != NEVER
        ]
        assert sorted(
            intervals(self.kept.left_a, self.kept.left_b, len(self.kept.left_a))
        ) == sorted(moved)
        self.starts = got


@pytest.mark.parametrize("seed", range(60))
def test_a_compression_made_from_the_plan_equals_one_made_afresh(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    if seed % 2:  # on blocks of steps (kernels.blocked_compression), however short
        monkeypatch.setattr(Profile, "BLOCKED_FROM", 0)
    plan = Plan(random.Random(seed))
    for _ in range(12):
        plan.change()
        plan.compress()


@pytest.mark.parametrize("seed", range(40))
def test_runs_of_one_shape_compress_as_afresh(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Jobs of one width, duration and start side by side: one that kept its start,
    # with nothing moved since, tells the next that it keeps its own; one that moved
    # tells nothing.
    if seed % 2:
        monkeypatch.setattr(Profile, "BLOCKED_FROM", 0)
    plan = Plan(random.Random(seed), bursts=True)
    for _ in range(12):
        plan.change()
        plan.compress()


@pytest.mark.parametrize("blocked_from", [0, 10**9], ids=["blocks", "steps"])
def test_a_job_like_the_last_that_kept_its_start_moves_where_a_move_since_left_room(
    blocked_from: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 4 nodes: one busy until 3; one that was busy until 9 ended at 0 (the gain). Four
    # jobs of 2 nodes and 3 s at 0, 3, 6, 9 keep their starts; a 1-node job at 3 moves
    # to 0 and leaves [3, 6); the next job of 2 nodes and 3 s at 9, like the last one
    # that kept its start, moves there.
    monkeypatch.setattr(Profile, "BLOCKED_FROM", blocked_from)
    widths = np.array([2, 2, 2, 2, 1, 2, 1], dtype=np.int64)
    durs = np.full(7, 3, dtype=np.int64)
    held = np.array([0, 3, 6, 9, 3, 9, 6], dtype=np.int64)
    profile = Profile.of_running(4, 0, [3], [1], room=64)
    profile.reserve_all(widths, durs, held)
    afresh = profile.copy()
    want = afresh.compress(widths, durs, held, 0)
    assert want.tolist() == [0, 3, 6, 9, 0, 3, 6]
    starts = held.copy()
    gains = np.full(8, 0, dtype=np.int64), np.full(8, NEVER, dtype=np.int64), 1
    left = np.zeros(7, dtype=np.int64), np.zeros(7, dtype=np.int64)
    assert profile.compress_again(widths, durs, starts, gains, left, 0) == 2
    assert starts.tolist() == want.tolist()
    assert profile.steps() == afresh.steps()


def kept_compression(
    kept: KeptCompression,
    plan: Profile,
    base: Profile,
    arrays: tuple[np.ndarray, np.ndarray],
    held: np.ndarray,
    now: int,
) -> list[int]:
    """The compression of the plan in force (``plan``, made on ``kept.base``) on
    ``base``, the base now."""
    gains = kept.changed(plan, base, now, len(arrays[0]))
    starts: list[int] = kept.compress(plan, gains, arrays, held.copy(), base, now).tolist()
    return starts


def test_the_fewest_free_nodes_over_an_interval_one_step_at_a_time() -> None:
    profile = Profile(4, 0, room=16)
    for start, end, width in [(0, 5, 1), (5, 9, 2), (9, 10, 3), (10, 12, 4), (12, 20, 1)]:
        profile.reserve(start, end, width)
    t, f, n = profile.t, profile.f, profile.n
    expected = {(0, 5): 3, (0, 6): 2, (4, 9): 2, (4, 10): 1, (9, 10): 1, (9, 11): 0,
                (10, 12): 0, (11, 20): 0, (12, 20): 3, (12, 21): 3, (19, 99): 3, (25, 99): 4}  # fmt: skip
    for (a, b), low in expected.items():
        assert kernels.fewest(t, f, n, a, b) == low, (a, b)


@pytest.mark.parametrize("blocked_from", [0, 10**9], ids=["blocks", "steps"])
def test_jobs_alike_side_by_side_move_together_as_far_as_the_room_holds(
    blocked_from: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 4 nodes, once a job ended early (the gain): 2 free over [0, 1), 3 over [1, 4);
    # 1 held over [4, 14); three jobs of 1 node and 10 s hold the other 3 from 4. The
    # first two move to 0 together (2 free before their start; past it they run on
    # into their own slots); the third, with no room left at 0, moves to 1.
    monkeypatch.setattr(Profile, "BLOCKED_FROM", blocked_from)
    widths = np.array([1, 1, 1], dtype=np.int64)
    durs = np.full(3, 10, dtype=np.int64)
    held = np.array([4, 4, 4], dtype=np.int64)
    profile = Profile(4, 0, room=64)
    profile.reserve(0, 1, 2)
    profile.reserve(1, 4, 1)
    profile.reserve(4, 14, 1)
    profile.reserve(4, 14, 3)
    afresh = profile.copy()
    want = afresh.compress(widths, durs, held, 0)
    assert want.tolist() == [0, 0, 1]
    starts = held.copy()
    gains = np.full(4, 0, dtype=np.int64), np.full(4, NEVER, dtype=np.int64), 1
    left = np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.int64)
    assert profile.compress_again(widths, durs, starts, gains, left, 0) == 3
    assert starts.tolist() == want.tolist()
    assert profile.steps() == afresh.steps() == [(0, 0), (10, 2), (11, 3), (14, 4)]
    assert left[0].tolist() == [4, 4, 4] and left[1].tolist() == [14, 14, 14]


def test_a_job_is_searched_when_its_room_runs_on_through_its_own_slot() -> None:
    # 4 nodes: job A (4 wide) runs until 10; job B (2 wide, 10 s) was placed at 10.
    # A ends at 2: 4 nodes free over [2, 10), then 2 beside B. B's window at 2 needs
    # its own slot from 10 to 12: the run of room before its start is 8 s, too short
    # unless B gives up its slot first. It moves to 2.
    kept = KeptCompression()
    kept.made_on(Profile.of_running(4, 2, [10], [4]))
    plan = Profile.of_running(4, 2, [10], [4])
    plan.reserve(10, 20, 2)
    widths, durations = np.array([2]), np.array([10])
    base = Profile.of_running(4, 2, [], [])
    assert kept_compression(kept, plan, base, (widths, durations), np.array([10]), 2) == [2]
    assert plan.steps() == [(2, 2), (12, 4)]


def changes(
    plan: Profile,
    old: Profile,
    new: Profile,
    gone: list[tuple[int, int, int]],
    now: int = 0,
    left: list[tuple[int, int]] = [],  # noqa: B006 (read only)
) -> list[tuple[int, int]]:
    """``plan`` made on ``old`` made the one on ``new`` with ``gone`` freed: the gains."""
    rows = np.array(gone, dtype=np.int64).reshape(len(gone), 3)
    left_a = np.array([a for a, _ in left], dtype=np.int64)
    left_b = np.array([b for _, b in left], dtype=np.int64)
    room = old.n + new.n + 2 * len(gone) + len(left) + 1
    plan.advance(now)
    plan._room(room)
    ga, gb = np.zeros(room, dtype=np.int64), np.zeros(room, dtype=np.int64)
    plan.n, count = plan_change.changes_since(
        plan.t, plan.f, plan.n, old.t, old.f, old.n, new.t, new.f, new.n,
        rows, left_a, left_b, now, ga, gb,
    )  # fmt: skip
    return intervals(ga, gb, count)


def test_an_early_end_and_a_withdrawn_slot_free_their_nodes_where_they_held_them() -> None:
    # 4 nodes: a running job holds 2 until 30; job A (2 wide) holds [0, 10), job B
    # (1 wide) [10, 20). The running job ends at 5, B is withdrawn: 2 more free over
    # [5, 30), 1 more over [10, 20).
    old = Profile.of_running(4, 0, [30], [2])
    plan = old.copy()
    plan.reserve(0, 10, 2)
    plan.reserve(10, 20, 1)
    new = Profile.of_running(4, 5, [], [])
    assert changes(plan, old, new, [(10, 10, 1)], now=5) == [(5, 30)]
    afresh = new.copy()
    afresh.reserve(5, 10, 2)  # A's slot from now on
    assert plan.steps() == afresh.steps() == [(5, 2), (10, 4)]


def test_a_job_that_started_as_planned_changes_nothing() -> None:
    # Job A (2 of 4 nodes, 10 s) was planned at 0 and started: the base now runs it
    # until 10 and its slot left the plan; the profile stays, and no room opened.
    old = Profile.of_running(4, 0, [], [])
    plan = old.copy()
    plan.reserve(0, 10, 2)
    plan.reserve(10, 20, 4)
    steps = plan.steps()
    new = Profile.of_running(4, 3, [10], [2])
    assert changes(plan, old, new, [(0, 10, 2)], now=3) == []
    assert plan.steps() == [(3, 2), *steps[1:]]


def test_more_nodes_from_now_on_are_a_gain_that_never_ends() -> None:
    # A machine of 4 nodes grows to 5 (a base of 5): one more node free from now on;
    # a job withdrawn that held no start (NEVER) or no nodes frees nothing.
    old = Profile(4, 0)
    plan = old.copy()
    plan.reserve(0, 10, 4)
    new = Profile(5, 0)
    assert changes(plan, old, new, [(NEVER, 10, 2), (20, 10, 0)]) == [(0, NEVER)]
    assert plan.steps() == [(0, 1), (10, 5)]


def test_the_slots_left_last_time_join_the_gains_from_now_on() -> None:
    # No change at all, but the slots the last compression's movers left: [2, 8) is
    # cut at now (4), [8, 9) touches it, [20, 25) stands apart, [0, 3) is past.
    plan = Profile(2, 0)
    plan.reserve(0, 30, 1)
    steps = plan.steps()
    left = [(20, 25), (2, 8), (0, 3), (8, 9)]
    assert changes(plan, Profile(2, 0), Profile(2, 4), [], now=4, left=left) == [
        (4, 9),
        (20, 25),
    ]
    assert plan.steps() == [(4, 1), *steps[1:]]


def test_gains_are_kept_sorted_and_merged() -> None:
    ga, gb = np.zeros(8, dtype=np.int64), np.zeros(8, dtype=np.int64)
    count = 0
    for a, b in [(10, 20), (40, 50), (0, 5), (20, 30), (45, 60), (5, 6)]:
        count = kernels.add_gain(ga, gb, count, a, b)
    assert intervals(ga, gb, count) == [(0, 6), (10, 30), (40, 60)]
    count = kernels.add_gain(ga, gb, count, 7, 41)
    assert intervals(ga, gb, count) == [(0, 6), (7, 60)]
    count = kernels.add_gain(ga, gb, count, 70, 80)
    assert intervals(ga, gb, count) == [(0, 6), (7, 60), (70, 80)]
    count = kernels.add_gain(ga, gb, count, 90, 95)
    count = kernels.add_gain(ga, gb, count, 5, 75)  # three merged, one after them
    assert intervals(ga, gb, count) == [(0, 80), (90, 95)]


def test_a_window_that_holds_a_gain_before_a_start_begins_before_its_end() -> None:
    ga = np.array([10, 30, 0], dtype=np.int64)  # a stale slot past the two gains
    gb = np.array([20, 40, 0], dtype=np.int64)
    assert [kernels.starts_before(ga, gb, 2, old) for old in (5, 10, 11, 25, 30, 35, 50)] == [
        0,
        0,
        11,
        20,
        20,
        35,
        40,
    ]


def test_the_slots_left_last_time_are_gains_of_the_next_compression() -> None:
    # 2 nodes: job 1 (2 wide) holds [0, 10); job 2 (1 wide, 5 s) was placed at 10. Job 1
    # is withdrawn: job 2 moves to 0 and leaves [10, 15), which the next compression
    # carries for the jobs before it. After a rebuild nothing is carried.
    kept = KeptCompression()
    kept.made_on(Profile(2, 0))
    plan = Profile(2, 0)
    plan.reserve(0, 10, 2)
    plan.reserve(10, 15, 1)
    kept.leave(0, 10, 2)
    arrays = (np.array([1]), np.array([5]))
    assert kept_compression(kept, plan, Profile(2, 0), arrays, np.array([10]), 0) == [0]
    assert intervals(kept.left_a, kept.left_b, 1) == [(10, 15)]
    # Next, a job of 1 node runs until 10 beside job 2 (the base now), and job 3 (2
    # wide, 5 s), ahead of job 2 in the order (an SJF queue), was placed at 15 while
    # job 2 held [10, 15). Nothing else changed: the only gain is the slot job 2
    # left, and job 3 takes it.
    base = Profile.of_running(2, 0, [10], [1])
    kept.made_on(base, (kept.left_a, kept.left_b))
    plan = base.copy()
    plan.reserve(0, 5, 1)
    plan.reserve(15, 20, 2)
    arrays = (np.array([2, 1]), np.array([5, 5]))
    assert kept_compression(kept, plan, base, arrays, np.array([15, 0]), 0) == [10, 0]
    assert intervals(kept.left_a, kept.left_b, 1) == [(15, 20)]
    kept.made_on(base)
    assert len(kept.left_a) == len(kept.left_b) == 0
    assert kept.left_a.dtype == kept.left_b.dtype == np.int64


def compress(
    profile: Profile, jobs: list[tuple[int, int, int]], gain: int, now: int = 0
) -> tuple[list[int], int]:
    """The kernel's compression with room opened from ``gain`` on (NEVER: nowhere)."""
    widths = np.array([w for w, _, _ in jobs], dtype=np.int64)
    durs = np.array([d for _, d, _ in jobs], dtype=np.int64)
    starts = np.array([s for _, _, s in jobs], dtype=np.int64)
    left = np.zeros(len(jobs), dtype=np.int64), np.zeros(len(jobs), dtype=np.int64)
    ga, gb = np.full(len(jobs) + 1, gain), np.full(len(jobs) + 1, NEVER)
    profile._room(4 * len(jobs))
    n, moved = kernels.compress_again(
        profile.t,
        profile.f,
        profile.n,
        widths,
        durs,
        now,
        starts,
        ga,
        gb,
        int(gain != NEVER),
        *left,
    )
    profile.n = n
    return starts.tolist(), moved


def test_a_job_without_a_start_is_placed_like_a_newcomer() -> None:
    # 4 nodes, 2 busy until 10; job 1 (2 wide, 5 s) holds [0, 5); job 2 (2 wide, 5 s)
    # holds no start (NEVER): it is searched for and placed at 5, the slots kept as
    # they are; job 3 (3 wide, 4 s) at 10 stays.
    profile = Profile.of_running(4, 0, [10], [2], room=16)
    profile.reserve(0, 5, 2)
    profile.reserve(10, 14, 3)
    assert compress(profile, [(2, 5, 0), (2, 5, NEVER), (3, 4, 10)], 0) == ([0, 5, 10], 0)
    assert profile.steps() == [(0, 0), (10, 1), (14, 4)]


def test_no_job_starting_before_the_first_gain_is_searched() -> None:
    # 2 nodes free over [0, 10), where a 1-wide job of 5 s planned at 20 would fit: the
    # room was there when it was placed (a plan does not do that), so with the first
    # gain at 20 or later it keeps its start; with one at 0 it moves.
    def profile() -> Profile:
        plan = Profile.of_running(2, 0, [], [], room=16)
        plan.reserve(10, 20, 2)
        plan.reserve(20, 25, 1)
        return plan

    assert compress(profile(), [(1, 5, 20)], 20) == ([20], 0)
    assert compress(profile(), [(1, 5, 20)], NEVER) == ([20], 0)
    assert compress(profile(), [(1, 5, 20)], 0) == ([0], 1)
    # A gain at 6 opens no window that ends before 6 + 5: none begins before 2.
    plan = profile()
    assert compress(plan, [(1, 5, 20)], 6) == ([2], 1)
    assert plan.steps() == [(0, 2), (2, 1), (7, 2), (10, 0), (20, 2)]


def test_a_job_with_room_in_the_second_before_its_start_runs_on_into_its_slot() -> None:
    # 2 nodes: busy until 8, then 1 free; job (2 wide, 10 s) at 10 with 2 free in
    # [9, 10) once an early end opened it: no window of 10 s fits before 10 beside
    # its own slot, but one second earlier does, with the slot given up.
    plan = Profile.of_running(2, 0, [], [], room=16)
    plan.reserve(0, 9, 2)
    plan.reserve(10, 20, 2)
    assert compress(plan, [(2, 10, 10)], 9) == ([9], 1)
    assert plan.steps() == [(0, 0), (19, 2)]


def test_a_window_a_move_took_is_not_found_again_by_the_next_job_of_its_shape() -> None:
    # 3 nodes; a job not in the queue holds 2 over [0, 10). Two 1-wide 10 s jobs were
    # placed at 10 and 12 while a third node was busy until 10; it ended at 0 (the
    # gain). The first takes the window at 0 that was found for their shape, so the
    # second, which can no longer start there, moves to 10, where the first left.
    plan = Profile.of_running(3, 0, [], [], room=32)
    plan.reserve(0, 10, 2)
    plan.reserve(10, 20, 1)
    plan.reserve(12, 22, 1)
    assert compress(plan, [(1, 10, 10), (1, 10, 12)], 0) == ([0, 10], 2)
    assert plan.steps() == [(0, 0), (10, 2), (20, 3)]


def test_a_job_that_runs_on_into_its_slot_starts_where_the_run_of_room_begins() -> None:
    # 2 nodes, both busy over [0, 7); one over [8, 10); job J (1 wide, 5 s) at 10
    # beside job K (1 node over [10, 15)). No window of 5 s before 10 beside J's slot,
    # but the run of room from 7 reaches it: J starts at 7 and runs on into its slot.
    profile = Profile(2, 0, room=32)
    profile.reserve(0, 7, 2)
    profile.reserve(8, 10, 1)
    profile.reserve(10, 15, 2)
    assert compress(profile, [(1, 5, 10)], 7) == ([7], 1)
    assert profile.steps() == [(0, 0), (7, 1), (8, 0), (12, 1), (15, 2)]
    # A run that began before now begins at now.
    profile = Profile(2, 0, room=32)
    profile.reserve(0, 16, 1)
    profile.reserve(16, 36, 2)
    assert compress(profile, [(1, 20, 16)], 3, now=3) == ([3], 1)


def test_a_first_window_before_the_run_of_room_is_taken() -> None:
    # 3 nodes: 1 free over [0, 6), none over [6, 10); job J (1 wide, 5 s) at 10 where
    # 2 more are free: its shape's first window, at 0 (the gain), is taken.
    profile = Profile(3, 0, room=32)
    profile.reserve(0, 6, 2)
    profile.reserve(6, 10, 3)
    profile.reserve(10, 15, 1)
    assert compress(profile, [(1, 5, 10)], 0) == ([0], 1)
    assert profile.steps() == [(0, 0), (5, 1), (6, 0), (10, 3)]


def test_jobs_of_no_nodes_move_to_now_and_newcomers_of_one_second_are_reserved() -> None:
    # 2 nodes: 1 free over [0, 2), none over [2, 9), 1 over [9, 30). A job of no nodes
    # and one of no time (1 wide), both held at 10 with room opened from 8 on: they
    # hold nothing, so they start at the first second with room for them, now, however
    # far the gain. A job held at no start, 1 s long and 2 wide, is placed at 30 and
    # reserved there.
    for compress_again in (kernels.compress_again, blocked_compression.compress_again):
        profile = Profile(2, 0, room=32)
        profile.reserve(0, 30, 1)
        profile.reserve(2, 9, 1)
        widths, durs = np.array([0, 1, 2]), np.array([5, 0, 1])
        starts = np.array([10, 10, NEVER])
        gains = np.array([8, 0, 0, 0]), np.array([NEVER, 0, 0, 0]), 1
        left = np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.int64)
        n, _ = compress_again(
            profile.t, profile.f, profile.n, widths, durs, 0, starts, *gains, *left
        )
        profile.n = n
        assert starts.tolist() == [0, 0, 30]
        assert profile.steps() == [(0, 1), (2, 0), (9, 1), (30, 0), (31, 2)]


def test_a_window_before_now_is_no_start() -> None:
    # The profile begins at 0, now is 3: 1 node free from 0 to 40 beside a 1-node job J
    # (5 s) held at 16, with room opened from 3 on. J moves to 3, not to 0.
    for compress_again in (kernels.compress_again, blocked_compression.compress_again):
        profile = Profile(2, 0, room=32)
        profile.reserve(0, 40, 1)
        profile.reserve(16, 21, 1)
        starts = np.array([16])
        gains = np.array([3, 0]), np.array([NEVER, 0]), 1
        left = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
        one, five = np.array([1]), np.array([5])
        compress_again(profile.t, profile.f, profile.n, one, five, 3, starts, *gains, *left)
        assert starts.tolist() == [3]


@pytest.mark.parametrize("blocked_from", [0, 10**9], ids=["blocks", "steps"])
def test_more_shapes_than_are_remembered_compress_as_afresh(
    blocked_from: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 100 jobs of 100 shapes (more than SHAPES), planned, then the running job due last
    # ends now: the compression from the plan in force is the one made afresh.
    monkeypatch.setattr(Profile, "BLOCKED_FROM", blocked_from)
    rng = random.Random(7)
    shapes = [(rng.randint(1, 8), d) for d in rng.sample(range(1, 400), 100)]
    widths = np.array([w for w, _ in shapes], dtype=np.int64)
    durs = np.array([d for _, d in shapes], dtype=np.int64)
    kept = KeptCompression()
    kept.made_on(Profile.of_running(8, 0, [50, 300], [4, 4]))
    plan = Profile.of_running(8, 0, [50, 300], [4, 4], room=512)
    held = plan.plan(widths, durs, 0)
    afresh = Profile.of_running(8, 0, [50], [4], room=512)
    afresh.reserve_all(widths, durs, held)
    want = afresh.compress(widths, durs, held, 0)
    base = Profile.of_running(8, 0, [50], [4])
    got = kept_compression(kept, plan, base, (widths, durs), held, 0)
    assert got == want.tolist()
    assert plan.steps() == afresh.steps()
    assert (np.array(got) < held).sum() > kernels.SHAPES  # more movers than remembered shapes


def test_a_shape_keeps_its_slot_and_bound_until_another_takes_the_slot() -> None:
    sw, sd, low = kernels.shapes()
    assert sw.tolist() == [-1] * kernels.SHAPES  # every slot empty
    q = kernels.shape_of(sw, sd, low, 4, 3600, 10)
    assert 0 <= q < kernels.SHAPES and (sw[q], sd[q], low[q]) == (4, 3600, 10)
    low[q] = 500  # what a search found
    assert kernels.shape_of(sw, sd, low, 4, 3600, 10) == q and low[q] == 500
    # Another shape whose width and duration pick the same slot takes it with its own
    # bound; the first, back, begins afresh.
    other = next(
        (w, d)
        for w in range(1, 64)
        for d in range(1, 4096)
        if (w, d) != (4, 3600) and kernels.shape_of(*kernels.shapes(), w, d, 0) == q
    )
    assert kernels.shape_of(sw, sd, low, *other, 20) == q and low[q] == 20
    assert kernels.shape_of(sw, sd, low, 4, 3600, 30) == q and low[q] == 30
    # The slots spread: the shapes of a trace do not crowd into a few.
    used = {
        kernels.shape_of(*kernels.shapes(), w, d, 0)
        for w in (1, 8, 16)
        for d in range(60, 86400, 997)
    }
    assert len(used) > kernels.SHAPES // 2
