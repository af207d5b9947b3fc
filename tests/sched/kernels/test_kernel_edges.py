"""Edges of the kernels the reference comparisons do not reach: Downey's pieces where
they meet, the rounding of a scaled estimate, the fair-share heaps' ties, the transfer run on its own, a fixed job's speedup on both sides of its limit,
the start-now search past the profile's last step, the shadow's equal ends and a fixed
job of the iterative search planned on fewer nodes than it names."""

from __future__ import annotations

import numpy as np
import pytest

from batchd.model.moldable import Speedup
from batchd.sched.kernels.backfill import shadow
from batchd.sched.kernels.fairshare import (
    ESTIMATE,
    FLAT,
    HIGH,
    LOW,
    SIGMA,
    WIDTH,
    A,
    _best_now,
    _drop,
    _gain,
    _loss,
    _push,
    _rekey,
    _sooner_later,
    efficiency_transfer,
)
from batchd.sched.kernels.iterative import iterate
from batchd.sched.kernels.moldable import scaled, speedup


def rows_of(jobs: list[tuple[int, int, int, int, bool, float]]) -> tuple[np.ndarray, np.ndarray]:
    """ints and floats of jobs given as (low, high, width, estimate, flat, A), sigma 0."""
    ints = np.zeros((len(jobs), 6), dtype=np.int64)
    floats = np.zeros((len(jobs), 3), dtype=np.float64)
    for r, (low, high, width, estimate, flat, a) in enumerate(jobs):
        ints[r, [LOW, HIGH, WIDTH, ESTIMATE, FLAT]] = (low, high, width, estimate, int(flat))
        floats[r, [A, SIGMA]] = (a, 0.0)
    return ints, floats


def test_equal_keys_rise_above_a_later_position() -> None:
    hk = np.empty(3, dtype=np.float64)
    hid = np.empty(3, dtype=np.int64)
    pos = np.full(3, -1, dtype=np.int64)
    size = _push(hk, hid, pos, 0, 0, 5.0)
    size = _push(hk, hid, pos, size, 1, 1.0)
    size = _push(hk, hid, pos, size, 2, 2.0)
    assert hid[0] == 1
    # Position 0 comes down to position 1's key: equal keys go to the first position.
    _rekey(hk, hid, pos, size, 0, 1.0)
    assert (hid[0], hk[0]) == (0, 1.0)
    assert [int(pos[k]) for k in range(3)] == [int(np.flatnonzero(hid == k)[0]) for k in range(3)]
    size = _drop(hk, hid, pos, size, 0)
    assert (size, hid[0], pos[0]) == (2, 1, -1)


def test_the_transfer_moves_nodes_one_at_a_time_to_the_better_gain() -> None:
    # Two linear jobs (A = 100) and one that gains nothing past 2 nodes (A = 2), fair
    # share 4 each, 12 nodes, 50 % leeway (2..6): the A = 2 job gives its nodes down to
    # 2 nodes (its speedup stays 2), both to the first of the equal gainers in the queue.
    ints, floats = rows_of(
        [(1, 12, 4, 100, False, 2.0), (1, 12, 4, 100, False, 100.0), (1, 12, 4, 100, False, 100.0)]
    )
    limits = np.array([4, 4, 4], dtype=np.int64)
    movable = np.ones(3, dtype=np.bool_)
    rows = np.arange(3, dtype=np.int64)
    moved = efficiency_transfer(limits, movable, rows, ints, floats, 0.5, 12)
    assert (moved, limits.tolist()) == (2, [2, 6, 4])


def test_a_fixed_job_loses_and_gains_nothing_on_either_side_of_its_limit() -> None:
    ints, floats = rows_of([(1, 8, 4, 100, True, 4.0)])
    assert _loss(3, ints, floats, 0) == 0.0
    assert _gain(3, ints, floats, 0) == 0.0
    ints, floats = rows_of([(1, 8, 4, 100, False, 4.0)])
    assert _loss(3, ints, floats, 0) == 1.0
    assert _gain(3, ints, floats, 0) == 1.0


def test_the_start_now_search_counts_the_last_step() -> None:
    # 4 nodes free until 10 s, 2 from then on; a linear job of 400 node-seconds ends
    # after 10 s on every width, so only 2 nodes fit now (4 would run 100 s).
    ints, floats = rows_of([(1, 4, 4, 100, False, 100.0)])
    t = np.array([0, 10], dtype=np.int64)
    least = np.array([4, 2], dtype=np.int64)
    assert _best_now(t, 2, 0, least, 1, 4, ints, floats, 0) == 2


def test_no_wider_width_ever_fits_reads_only_live_steps() -> None:
    # Arrays of exactly the live steps: no width above 2 ever has its nodes free.
    ints, floats = rows_of([(1, 4, 4, 100, False, 100.0)])
    t = np.array([0, 10], dtype=np.int64)
    f = np.array([1, 2], dtype=np.int64)
    assert not _sooner_later(t, f, 2, 0, 2, 4, 1000, ints, floats, 0)


def test_the_shadow_counts_every_job_ending_that_second() -> None:
    ends = np.array([10, 10, 10, 20], dtype=np.int64)
    widths = np.array([1, 1, 1, 1], dtype=np.int64)
    assert shadow(0, 1, ends, widths, 0, 4, 0) == (10, 2)


def test_a_fixed_job_keeps_its_estimate_on_fewer_nodes_than_it_names() -> None:
    # One node; a fixed job naming 4 nodes runs its 100 s on 1, then the next starts.
    t = np.array([0, 0, 0, 0], dtype=np.int64)
    f = np.array([1, 0, 0, 0], dtype=np.int64)
    widths = np.zeros(2, dtype=np.int64)
    starts = np.zeros(2, dtype=np.int64)
    one = np.ones(2, dtype=np.int64)
    trials, accepted = iterate(
        t, f, 1, 0, one, one, np.array([4, 1], dtype=np.int64),
        np.array([100, 10], dtype=np.int64), np.ones(2, dtype=np.bool_),
        np.full(2, 100.0), np.zeros(2), widths, starts,
    )  # fmt: skip
    assert (widths.tolist(), starts.tolist(), trials, accepted) == ([1, 1], [0, 100], 0, 0)


# Where two of Downey's pieces meet they agree in exact arithmetic but not to the last
# bit in floats; the kernel takes the model's piece (the fair-share transfer compares
# gains for equality). Each model below is one where the other piece differs.
@pytest.mark.parametrize(
    ("a", "sigma", "n"),
    [(1.2, 1.0, 1), (2.0, 0.11, 2), (2.0, 0.02, 3), (1.1, 9.0, 2)],
)
def test_speedup_takes_the_models_piece_where_two_meet(a: float, sigma: float, n: int) -> None:
    assert speedup(n, False, a, sigma) == Speedup("downey", a, sigma).at(n)


def test_a_scaled_estimate_drops_float_noise_below_a_microsecond() -> None:
    # 10386 s on 1 node is 5553.000000061... s on 2 by the floats: 5553 s, not 5554.
    assert scaled(10386, 2, 1, False, 7.123456789, 0.987654321) == 5553
