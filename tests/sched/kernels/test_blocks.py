"""A long profile held in blocks (``sched.kernels.blocks``): each reservation and
release made on the blocks leaves the steps the same change makes one step at a time
(``ListProfile``), and every block's fewest and most free nodes right; with blocks so
small that they are full, split and empty all the time, and reservations that begin
and end inside steps, on them, or merge with their neighbours."""

from __future__ import annotations

import random

import numpy as np
import pytest

from batchd.sched.core.profile import ListProfile
from batchd.sched.kernels import blocks


def arrays(steps: list[tuple[int, int]], room: int) -> tuple[np.ndarray, np.ndarray]:
    t = np.zeros(len(steps) + room, dtype=np.int64)
    f = np.zeros(len(t), dtype=np.int64)
    for i, (time, free) in enumerate(steps):
        t[i], f[i] = time, free
    return t, f


@pytest.mark.parametrize("block", [2, 3, 4, 8, 64])
@pytest.mark.parametrize("seed", range(10))
def test_reservations_on_blocks_are_the_ones_made_step_by_step(block: int, seed: int) -> None:
    rng = random.Random(seed * 7 + block)
    capacity = rng.randint(4, 40)
    ref = ListProfile(capacity)
    for _ in range(rng.randint(0, 30)):
        start = rng.randint(0, 500)
        ref.reserve(start, start + rng.randint(1, 200), rng.randint(1, capacity))
    changes = 200
    t, f = arrays(ref.steps(), 2 * changes + 2)
    state = blocks.cut(t, f, len(ref.steps()), 2 * changes, block)
    bt, bf, count, lag, least, most, order, sizes = state
    held: list[tuple[int, int, int]] = []  # reservations made, to be given back
    for _ in range(changes):
        if held and rng.random() < 0.3:  # give one back
            start, end, width = held.pop(rng.randrange(len(held)))
            width = -width
        else:
            # Times on the steps (to merge or not) as often as inside them.
            times = [time for time, _ in ref.steps()]
            start = rng.choice(times) if rng.random() < 0.5 else rng.randint(0, 700)
            end = start + rng.randint(1, 250)
            if rng.random() < 0.5:
                later = [time for time in times if time > start]
                end = rng.choice(later) if later else end
            room = min(
                ref.free_at(time) for time in [start, *(x for x in times if start < x < end)]
            )
            if room <= 0:
                continue
            width = rng.randint(1, room)  # fits: a reservation on a plan
            held.append((start, end, width))
        blocks.take(*state, start, end, width)
        if width > 0:
            ref.reserve(start, end, width)
        else:
            ref.release(start, end, -width)
        n = blocks.join(t, f, bt, bf, count, lag, order, sizes)
        assert list(zip(t[:n].tolist(), f[:n].tolist(), strict=True)) == ref.steps()
        for q in range(sizes[0]):
            b = order[q]
            free = bf[b, : count[b]] + lag[b]
            assert count[b] > 0 and (least[b], most[b]) == (free.min(), free.max())


@pytest.mark.parametrize("block", [2, 3, 64])
def test_the_fewest_free_nodes_over_an_interval(block: int) -> None:
    steps = [(0, 4), (5, 2), (9, 1), (10, 0), (12, 3), (20, 1)]
    t, f = arrays(steps, 4)
    state = blocks.cut(t, f, len(steps), 2, block)
    bt, bf, count, lag, _, _, order, sizes = state
    blocks.take(*state, 0, 5, 1)  # a lag on the first block: values are read through it
    expected = {(0, 5): 3, (0, 6): 2, (4, 9): 2, (4, 10): 1, (9, 10): 1, (9, 11): 0,
                (10, 12): 0, (11, 20): 0, (12, 20): 3, (12, 21): 1, (19, 99): 1, (25, 99): 1}  # fmt: skip
    for (a, b), low in expected.items():
        assert blocks.fewest(bt, bf, count, lag, order, sizes, a, b) == low, (a, b)
