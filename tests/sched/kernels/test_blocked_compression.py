"""Compressions made from the plan in force on a profile cut into blocks
(``sched.kernels.blocked_compression``) against the same compression one step at a
time (``kernels.compression``): the same starts, the same slots left and the very
same steps, with blocks small enough that they split, empty and are passed over
whole many times in one compression. (``test_compression_kernels`` runs its rounds
through ``KeptCompression`` on blocks too.)"""

from __future__ import annotations

import random

import numpy as np
import pytest

from batchd.model.times import NEVER
from batchd.sched.core.profile import Profile
from batchd.sched.kernels import blocked_compression
from batchd.sched.kernels import compression as kernels


def planned(rng: random.Random) -> tuple[Profile, np.ndarray, np.ndarray, np.ndarray]:
    """A plan of 120 jobs of a few shapes, every reservation in its profile, after the
    early end of the running job due last (room opens from now on)."""
    capacity = rng.choice([4, 16, 64])
    widths = np.array([rng.choice([1, 2, capacity // 2, capacity]) for _ in range(120)])
    durs = np.array([rng.choice([3, 10, 40]) for _ in widths])
    ends = sorted(rng.randint(1, 60) for _ in range(4))
    running = [capacity // 4] * 4
    plan = Profile.of_running(capacity, 0, ends, running, room=512)
    starts = plan.plan(widths, durs, 0)
    profile = Profile.of_running(capacity, 0, ends[:-1], running[1:], room=512)
    profile.reserve_all(widths, durs, starts)
    if rng.random() < 0.2:
        starts[rng.randrange(len(starts))] = NEVER  # a job that held no start
        profile = Profile.of_running(capacity, 0, ends[:-1], running[1:], room=512)
        profile.reserve_all(widths, durs, starts)
    return profile, widths, durs, starts


def both_ways(seed: int, block: int) -> None:
    rng = random.Random(seed)
    profile, widths, durs, held = planned(rng)
    first = rng.choice([0, 5])
    results = []
    for compress in (kernels.compress_again, blocked_compression.compress_again):
        t, f = profile.t.copy(), profile.f.copy()
        starts = held.copy()
        left = np.zeros(len(widths), dtype=np.int64), np.zeros(len(widths), dtype=np.int64)
        gains = np.full(len(widths) + 1, first), np.full(len(widths) + 1, NEVER), 1
        args = (t, f, profile.n, widths, durs, 0, starts, *gains, *left)
        if compress is blocked_compression.compress_again:
            n, moved = compress(*args, block)
        else:
            n, moved = compress(*args)
        results.append((starts.tolist(), t[:n].tolist(), f[:n].tolist(), left[0][:moved].tolist()))
    assert results[0] == results[1]
    assert results[0][3]  # jobs moved


@pytest.mark.parametrize("block", [2, 3, 4, 8, 64])
@pytest.mark.parametrize("seed", range(8))
def test_a_compression_on_blocks_is_the_one_made_step_by_step(seed: int, block: int) -> None:
    both_ways(seed, block)


def test_long_profiles_are_compressed_on_blocks_and_short_ones_step_by_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    used: list[str] = []

    def spy(name: str, compress):  # type: ignore[no-untyped-def]
        def wrapped(*args):  # type: ignore[no-untyped-def]
            used.append(name)
            return compress(*args)

        return wrapped

    monkeypatch.setattr(kernels, "compress_again", spy("steps", kernels.compress_again))
    monkeypatch.setattr(
        blocked_compression,
        "compress_again",
        spy("blocks", blocked_compression.compress_again),
    )
    one = np.ones(1, dtype=np.int64)
    for steps in (Profile.BLOCKED_FROM - 1, Profile.BLOCKED_FROM):
        profile = Profile(4 * steps)
        for k in range(1, steps - 1):  # a step per second, one node fewer each, one end
            profile.reserve(k, 4 * steps, 1)
        assert profile.n == steps
        left = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
        none = np.zeros(1, dtype=np.int64)
        profile.compress_again(one, one, np.array([NEVER]), (none, none, 0), left, 0)
    assert used == ["steps", "blocks"]


def test_a_run_of_room_from_before_now_begins_at_now_on_blocks_too() -> None:
    # As in test_compression_kernels: 1 node free from 0 to 16, none beside the job's
    # own slot [16, 36); at 3 it moves to 3, not to the run's first step at 0.
    profile = Profile(2, 0, room=32)
    profile.reserve(0, 16, 1)
    profile.reserve(16, 36, 2)
    starts = np.array([16], dtype=np.int64)
    left = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    one, twenty = np.array([1]), np.array([20])
    gain = np.array([3, 0]), np.array([NEVER, 0]), 1  # room opened from 3 on
    n, moved = blocked_compression.compress_again(
        profile.t, profile.f, profile.n, one, twenty, 3, starts, *gain, *left, 2
    )
    assert (starts.tolist(), moved) == ([3], 1)
    profile.n = n
    assert profile.steps() == [(0, 1), (3, 0), (23, 1), (36, 2)]
