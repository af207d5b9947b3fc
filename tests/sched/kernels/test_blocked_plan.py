"""``plan_all`` on a profile cut into blocks (``sched.kernels.blocked_plan``) against the
same plan made one step at a time (``kernels.profile.plan_all``) and against the plain
reference ``ListProfile``: the same starts and the very same steps, with blocks small
enough that they split, empty and are passed over whole many times in one plan."""

from __future__ import annotations

import random

import numpy as np
import pytest

from batchd.model.times import NEVER
from batchd.sched.core.profile import ListProfile, Profile
from batchd.sched.kernels import blocked_plan
from batchd.sched.kernels import profile as kernels


def steps_of(t: np.ndarray, f: np.ndarray, n: int) -> list[tuple[int, int]]:
    return list(zip(t[:n].tolist(), f[:n].tolist(), strict=True))


def profile_arrays(steps: list[tuple[int, int]], jobs: int) -> tuple[np.ndarray, np.ndarray]:
    t = np.zeros(len(steps) + 2 * jobs + 2, dtype=np.int64)
    f = np.zeros(len(t), dtype=np.int64)
    for i, (time, free) in enumerate(steps):
        t[i], f[i] = time, free
    return t, f


def plan_both_ways(
    steps: list[tuple[int, int]],
    jobs: list[tuple[int, int]],
    not_before: int,
    block: int,
) -> tuple[list[int], list[tuple[int, int]]]:
    """The blocked plan's starts and steps, checked against the plan one step at a time."""
    widths = np.array([w for w, _ in jobs], dtype=np.int64)
    durs = np.array([d for _, d in jobs], dtype=np.int64)
    t, f = profile_arrays(steps, len(jobs))
    starts = np.zeros(len(jobs), dtype=np.int64)
    n = blocked_plan.plan_all(t, f, len(steps), widths, durs, not_before, starts, block)
    t0, f0 = profile_arrays(steps, len(jobs))
    flat = np.zeros(len(jobs), dtype=np.int64)
    n0 = kernels.plan_all(t0, f0, len(steps), widths, durs, not_before, flat)
    assert starts.tolist() == flat.tolist()
    assert steps_of(t, f, n) == steps_of(t0, f0, n0)
    return starts.tolist(), steps_of(t, f, n)


def test_a_hand_plan_on_blocks_of_two_steps() -> None:
    # 10 nodes: 4 free until 10, all from then on; blocks of 2 steps split at once.
    steps = [(0, 4), (10, 10)]
    jobs = [(6, 10), (4, 5), (10, 5), (11, 1), (3, 20), (3, 20), (3, 20)]
    starts, after = plan_both_ways(steps, jobs, 2, 2)
    ref = ListProfile(10)
    ref.times, ref.free = [0, 10], [4, 10]
    assert starts == [ref.place(w, d, 2) for w, d in jobs]
    assert starts == [10, 2, 20, NEVER, 25, 25, 25]
    assert after == ref.steps()


@pytest.mark.parametrize("block", [2, 3, 4, 8, 64])
@pytest.mark.parametrize("seed", range(6))
def test_random_plans_match_the_plan_one_step_at_a_time(block: int, seed: int) -> None:
    # A profile of running jobs and reservations, then bursts of a few shapes (long and
    # short, too wide, of no nodes or no time), from a time inside the profile.
    rng = random.Random(seed * 31 + block)
    capacity = rng.randint(4, 64)
    ref = ListProfile(capacity)
    for _ in range(rng.randint(0, 40)):
        start = rng.randint(0, 400)
        ref.reserve(start, start + rng.randint(1, 300), rng.randint(1, capacity))
    shapes = [(rng.randint(0, capacity + 1), rng.choice([0, 1, 5, 30, 200, 900])) for _ in range(8)]
    jobs: list[tuple[int, int]] = []
    while len(jobs) < 250:
        jobs += [rng.choice(shapes)] * rng.randint(1, 12)
    not_before = rng.randint(0, 100)
    starts, after = plan_both_ways(ref.steps(), jobs, not_before, block)
    assert starts == [ref.place(w, d, not_before) for w, d in jobs]
    assert after == ref.steps()


def test_a_search_from_before_the_profile_begins_at_its_origin() -> None:
    starts, after = plan_both_ways([(50, 3), (60, 8)], [(5, 10), (3, 4)], 0, 2)
    assert starts == [60, 50]
    assert after == [(50, 0), (54, 3), (70, 8)]


def test_long_profiles_are_planned_on_blocks_and_short_ones_one_step_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    used: list[str] = []

    def spy(name: str, plan):  # type: ignore[no-untyped-def]
        def wrapped(*args):  # type: ignore[no-untyped-def]
            used.append(name)
            return plan(*args)

        return wrapped

    monkeypatch.setattr(kernels, "plan_all", spy("steps", kernels.plan_all))
    monkeypatch.setattr(blocked_plan, "plan_all", spy("blocks", blocked_plan.plan_all))
    jobs = np.ones(3, dtype=np.int64), np.full(3, 5, dtype=np.int64)
    for steps in (Profile.BLOCKED_FROM - 1, Profile.BLOCKED_FROM):
        profile = Profile(4 * steps)
        for k in range(1, steps - 1):  # a step per second, one node fewer each, one end
            profile.reserve(k, 4 * steps, 1)
        assert profile.n == steps
        profile.plan(*jobs, 0)
    assert used == ["steps", "blocks"]
