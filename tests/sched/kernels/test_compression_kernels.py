"""Compressions made from the plan in force (``kernels.compression`` through
``KeptCompression``) against compressions made afresh (``kernels.profile.compress``).

Random machines plan a queue (every job at its earliest start), then go through
rounds of changes: a running job ends early, a waiting job is withdrawn, a new one is
placed at its earliest start. After each, both compressions of the same profile must
give the same starts and leave the same steps; the kept one carries the slots its
movers left from round to round.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from batchd.model.times import NEVER
from batchd.sched.core.compression import KeptCompression
from batchd.sched.core.profile import Profile
from batchd.sched.kernels import compression as kernels


def intervals(starts: np.ndarray, ends: np.ndarray, count: int) -> list[tuple[int, int]]:
    return list(zip(starts[:count].tolist(), ends[:count].tolist(), strict=True))


class Plan:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.capacity = rng.choice([3, 8, 20])
        self.now = 0
        self.running = [
            (rng.randint(1, 80), rng.randint(1, self.capacity // 2 + 1)) for _ in range(3)
        ]
        self.widths = [self.width() for _ in range(rng.randint(5, 30))]
        self.durations = [rng.choice([1, 4, 10, 25, 60]) for _ in self.widths]
        self.kept = KeptCompression()
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

    def change(self) -> None:
        rng = self.rng
        if self.running and rng.random() < 0.7:  # an early end
            self.running.pop(rng.randrange(len(self.running)))
        if len(self.widths) > 1 and rng.random() < 0.3:  # a withdrawal
            i = rng.randrange(len(self.widths))
            del self.widths[i], self.durations[i]
            self.starts = np.delete(self.starts, i)
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
        got = self.kept.compress(self.profile, fresh, (widths, durations), self.starts, self.now)
        assert got.tolist() == want.tolist()
        assert fresh.steps() == made_afresh.steps()
        moved = [
            (int(a), int(a + d))
            for a, b, d in zip(self.starts, got, durations, strict=True)
            if a != b and a != NEVER
        ]
        assert sorted(
            intervals(self.kept.left_a, self.kept.left_b, len(self.kept.left_a))
        ) == sorted(moved)
        self.profile, self.starts = fresh, got


@pytest.mark.parametrize("seed", range(60))
def test_a_compression_made_from_the_plan_equals_one_made_afresh(seed: int) -> None:
    plan = Plan(random.Random(seed))
    for _ in range(12):
        plan.change()
        plan.compress()


def test_a_job_is_searched_when_its_room_runs_on_through_its_own_slot() -> None:
    # 4 nodes: job A (4 wide) runs until 10; job B (2 wide, 10 s) was placed at 10.
    # A ends at 2: 4 nodes free over [2, 10), then 2 beside B. B's window at 2 needs
    # its own slot from 10 to 12: the run of room before its start is 8 s, too short
    # unless B gives up its slot first. It moves to 2.
    old = Profile.of_running(4, 2, [10], [4])
    old.reserve(10, 20, 2)
    new = Profile.of_running(4, 2, [], [])
    new.reserve(10, 20, 2)
    widths, durations = np.array([2]), np.array([10])
    starts = KeptCompression().compress(old, new, (widths, durations), np.array([10]), 2)
    assert starts.tolist() == [2]
    assert new.steps() == [(2, 2), (12, 4)]


def test_more_room_lists_where_the_second_profile_has_more() -> None:
    first = Profile.of_running(4, 0, [10, 30], [2, 2])  # 0 free to 10, 2 to 30
    second = Profile.of_running(4, 0, [5], [4])  # 0 free to 5, then 4
    ga = np.empty(8, dtype=np.int64)
    gb = np.empty(8, dtype=np.int64)
    count = kernels.more_room(first.t, first.f, first.n, second.t, second.f, second.n, 0, ga, gb)
    assert intervals(ga, gb, count) == [(5, 30)]
    count = kernels.more_room(second.t, second.f, second.n, first.t, first.f, first.n, 0, ga, gb)
    assert count == 0


def test_gains_are_kept_sorted_and_merged() -> None:
    ga, gb, gw, gl = (np.zeros(8, dtype=np.int64) for _ in range(4))
    count = 0
    for a, b in [(10, 20), (40, 50), (0, 5), (20, 30), (45, 60), (5, 6)]:
        count = kernels.add_gain(ga, gb, gw, gl, count, a, b)
    assert intervals(ga, gb, count) == [(0, 6), (10, 30), (40, 60)]
    count = kernels.add_gain(ga, gb, gw, gl, count, 7, 41)
    assert intervals(ga, gb, count) == [(0, 6), (7, 60)]


def test_the_gains_have_room_however_many_there_are() -> None:
    # 19 gains (2 more nodes free in each of [10k, 10k + 5)) and one job: the gains'
    # arrays are sized by both profiles' steps, not by the jobs.
    old = Profile(8, 0, room=64)
    new = Profile(8, 0, room=64)
    for k in range(1, 20):
        old.reserve(10 * k, 10 * k + 5, 4)
        new.reserve(10 * k, 10 * k + 5, 2)
    new.reserve(0, 1, 1)
    starts = KeptCompression().compress(old, new, (np.array([1]), np.array([1])), np.array([0]), 0)
    assert starts.tolist() == [0]


def test_forget_drops_the_slots_the_last_compression_left() -> None:
    # 2 nodes: job 1 (2 wide) holds [0, 10); job 2 (1 wide, 5 s) was placed at 10. Job 1
    # is withdrawn: job 2 moves to 0 and leaves [10, 15), which the next compression
    # carries for the jobs before it. After a rebuild nothing is carried.
    old = Profile(2, 0)
    old.reserve(0, 10, 2)
    old.reserve(10, 15, 1)
    new = Profile(2, 0)
    new.reserve(10, 15, 1)
    kept = KeptCompression()
    assert kept.compress(old, new, (np.array([1]), np.array([5])), np.array([10]), 0).tolist() == [
        0
    ]
    assert intervals(kept.left_a, kept.left_b, 1) == [(10, 15)]
    kept.forget()
    assert len(kept.left_a) == len(kept.left_b) == 0
    assert kept.left_a.dtype == kept.left_b.dtype == np.int64


def test_a_job_without_a_start_is_placed_like_a_newcomer() -> None:
    # 4 nodes, 2 busy until 10; job 1 (2 wide, 5 s) holds [0, 5); job 2 (2 wide, 5 s)
    # holds no start (NEVER): it is searched for and placed at 5, the slots kept as
    # they are; job 3 (3 wide, 4 s) at 10 stays.
    profile = Profile.of_running(4, 0, [10], [2], room=16)
    profile.reserve(0, 5, 2)
    profile.reserve(10, 14, 3)
    widths, durs = np.array([2, 2, 3], dtype=np.int64), np.array([5, 5, 4], dtype=np.int64)
    starts = np.array([0, NEVER, 10], dtype=np.int64)
    gains = np.zeros(8, dtype=np.int64), np.zeros(8, dtype=np.int64)
    left = np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.int64)
    n, moved = kernels.compress_again(
        profile.t, profile.f, profile.n, widths, durs, 0, starts, *gains, 0, *left
    )
    assert starts.tolist() == [0, 5, 10] and moved == 0
    profile.n = n
    assert profile.steps() == [(0, 0), (10, 1), (14, 4)]


def test_more_room_to_the_end_is_a_gain_that_never_ends() -> None:
    first = Profile(4, 0)
    first.reserve(0, 10, 2)  # 2 free to 10, then 4
    second = Profile(5, 0)
    second.reserve(0, 5, 2)
    second.reserve(5, 10, 3)  # 3 free to 5, 2 to 10 (as many), then 5
    ga = np.full(8, -1, dtype=np.int64)
    gb = np.full(8, -1, dtype=np.int64)
    count = kernels.more_room(first.t, first.f, first.n, second.t, second.f, second.n, 0, ga, gb)
    assert count == 2 and intervals(ga, gb, 3) == [(0, 5), (10, NEVER), (-1, -1)]


def test_gains_merged_together_move_the_ones_after_them() -> None:
    ga, gb, gw, gl = (np.zeros(8, dtype=np.int64) for _ in range(4))
    count = 0
    for a, b in [(0, 1), (10, 20), (30, 40), (50, 60), (70, 80)]:
        count = kernels.add_gain(ga, gb, gw, gl, count, a, b)
    gw[3], gl[3] = 2, 7  # what is known of (50, 60) moves with it
    count = kernels.add_gain(ga, gb, gw, gl, count, 5, 35)
    assert intervals(ga, gb, count) == [(0, 1), (5, 40), (50, 60), (70, 80)]
    assert (gw[2], gl[2]) == (2, 7)


def test_runs_end_at_the_last_step_whatever_lies_past_it() -> None:
    # Steps 0 and 1 are live (n = 2); the slots past them hold old values.
    t = np.array([0, 10, 5, 50], dtype=np.int64)
    f = np.array([0, 0, 9, 9], dtype=np.int64)
    assert kernels.runs_meeting(t, f, 2, 0, 20, 1, 1, 0, 100, 100) == (0, NEVER, False)
    t = np.array([0, 10, 20, 12], dtype=np.int64)
    f = np.array([0, 5, 7, 0], dtype=np.int64)
    # The run from 10 lasts for ever: at least ``enough`` (100), so a 50 s job fits at 10.
    assert kernels.runs_meeting(t, f, 2, 0, 20, 1, 50, 0, 100, 100) == (100, 10, False)


def test_a_run_is_followed_back_to_now() -> None:
    # Room for one node from 0 to 20; the gain is at [10, 20): the run begins at 0.
    t = np.array([0, 5, 10, 20], dtype=np.int64)
    f = np.array([1, 1, 1, 0], dtype=np.int64)
    assert kernels.runs_meeting(t, f, 4, 10, 20, 1, 15, 0, 100, 100) == (20, 0, False)


def test_more_room_stops_at_the_last_live_step() -> None:
    t0 = np.array([0, 10, 3], dtype=np.int64)  # a stale slot past the two live steps
    f0 = np.array([2, 4, 0], dtype=np.int64)
    t1 = np.array([0, 20, 99], dtype=np.int64)
    f1 = np.array([3, 4, 0], dtype=np.int64)
    ga = np.zeros(8, dtype=np.int64)
    gb = np.zeros(8, dtype=np.int64)
    count = kernels.more_room(t0, f0, 2, t1, f1, 2, 0, ga, gb)
    assert intervals(ga, gb, count) == [(0, 10)]
