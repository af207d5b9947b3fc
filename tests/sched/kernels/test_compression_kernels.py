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
