"""The small loops of the what-if simulator (``sched.kernels.whatif``) on worked cases: the
running set loaded by end, the sorted insertion of a started job's end (both ways of
shifting), and the durations a job holds its nodes. The simulations themselves are tested
against naive rules and the engine in tests/sched/core/test_whatif.py."""

from __future__ import annotations

import random

import numpy as np
import pytest

from batchd.model.times import NEVER
from batchd.sched.kernels import whatif


def ints(values: list[int]) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def test_duration_is_at_least_one_second() -> None:
    assert [whatif.duration(e) for e in (-3, 0, 1, 2, 3600)] == [1, 1, 1, 2, 3600]


def test_load_running_keeps_the_jobs_after_now_by_end() -> None:
    re = np.zeros(8, dtype=np.int64)
    rw = np.zeros(8, dtype=np.int64)
    hi, free = whatif.load_running(10, 20, ints([5, 10, 12, 30]), ints([1, 2, 3, 4]), re, rw)
    assert (hi, free) == (2, 13)  # the jobs ending at 5 and 10 have ended
    assert re[:hi].tolist() == [12, 30]
    assert rw[:hi].tolist() == [3, 4]


def test_load_running_sorts_an_unsorted_list_stably() -> None:
    re = np.zeros(8, dtype=np.int64)
    rw = np.zeros(8, dtype=np.int64)
    ends = ints([40, 15, 3, 15, 20])
    widths = ints([1, 2, 4, 3, 5])
    hi, free = whatif.load_running(10, 16, ends, widths, re, rw)
    assert (hi, free) == (4, 5)
    assert re[:hi].tolist() == [15, 15, 20, 40]
    assert rw[:hi].tolist() == [2, 3, 5, 1]  # equal ends keep their order


def test_load_running_sees_an_unsorted_pair_at_the_end() -> None:
    re = np.zeros(4, dtype=np.int64)
    rw = np.zeros(4, dtype=np.int64)
    hi, free = whatif.load_running(0, 10, ints([1, 2, 9, 5]), ints([1, 2, 3, 4]), re, rw)
    assert (hi, free) == (4, 0)
    assert re[:hi].tolist() == [1, 2, 5, 9]
    assert rw[:hi].tolist() == [1, 2, 4, 3]


def test_shifts_move_a_slice_by_one() -> None:
    a = ints([0, 1, 2, 3, 4, 5])
    whatif.shift_up(a, 1, 4)
    assert a.tolist() == [0, 1, 1, 2, 3, 5]
    b = ints([0, 1, 2, 3, 4, 5])
    whatif.shift_down(b, 2, 5)
    assert b.tolist() == [0, 2, 3, 4, 4, 5]
    c = ints([7, 8, 9])
    whatif.shift_up(c, 1, 1)  # empty slices move nothing
    whatif.shift_down(c, 2, 2)
    assert c.tolist() == [7, 8, 9]


def test_insert_end_shifts_up_when_nothing_is_free_before() -> None:
    re = ints([10, 20, 30, 0, 0])
    rw = ints([1, 2, 3, 0, 0])
    assert whatif.insert_end(re, rw, 0, 3, 20, 9) == (0, 4)
    assert re[:4].tolist() == [10, 20, 20, 30]  # after the equal end
    assert rw[:4].tolist() == [1, 2, 9, 3]


def test_insert_end_shifts_the_shorter_side() -> None:
    # Live slice [2, 6): the new end lands after the first live one: shift down.
    re = ints([0, 0, 10, 20, 30, 40, 0])
    rw = ints([0, 0, 1, 2, 3, 4, 0])
    assert whatif.insert_end(re, rw, 2, 6, 15, 7) == (1, 6)
    assert re[1:6].tolist() == [10, 15, 20, 30, 40]
    assert rw[1:6].tolist() == [1, 7, 2, 3, 4]
    # Near the end: shift up.
    re = ints([0, 0, 10, 20, 30, 40, 0])
    rw = ints([0, 0, 1, 2, 3, 4, 0])
    assert whatif.insert_end(re, rw, 2, 6, 35, 7) == (2, 7)
    assert re[2:7].tolist() == [10, 20, 30, 35, 40]
    assert rw[2:7].tolist() == [1, 2, 3, 7, 4]
    # In the middle (as many on both sides): shift up.
    re = ints([0, 10, 20, 30, 40, 0])
    rw = ints([0, 1, 2, 3, 4, 0])
    assert whatif.insert_end(re, rw, 1, 5, 25, 7) == (1, 6)
    assert re[1:6].tolist() == [10, 20, 25, 30, 40]
    assert rw[1:6].tolist() == [1, 2, 7, 3, 4]
    # Before everything, with room before: shift down nothing.
    re = ints([0, 10, 20, 0])
    rw = ints([0, 1, 2, 0])
    assert whatif.insert_end(re, rw, 1, 3, 5, 7) == (0, 3)
    assert re[:3].tolist() == [5, 10, 20]
    assert rw[:3].tolist() == [7, 1, 2]


@pytest.mark.parametrize("seed", range(4))
def test_insert_end_keeps_the_live_slice_sorted(seed: int) -> None:
    rng = random.Random(seed)
    size = 40
    re = np.zeros(2 * size + 2, dtype=np.int64)
    rw = np.zeros(2 * size + 2, dtype=np.int64)
    lo = hi = size
    live: list[tuple[int, int]] = []
    for k in range(size):
        end = rng.randint(0, 30)
        lo, hi = whatif.insert_end(re, rw, lo, hi, end, k)
        live.append((end, k))
        live.sort(key=lambda pair: pair[0])  # stable: equal ends in insertion order
        assert list(zip(re[lo:hi].tolist(), rw[lo:hi].tolist(), strict=True)) == live


def test_backfill_starts_what_fits_by_the_shadow_or_in_the_extra_nodes() -> None:
    # At t = 0: 4 free, the head's shadow at 10 with 1 extra node. Candidates none; the
    # queue q[1:] = jobs 1..4 (job 0 is the head).
    widths = ints([6, 3, 2, 1, 1])
    dur = ints([5, 20, 10, 30, 5])
    out = ints([NEVER] * 5)
    q = ints([0, 1, 2, 3, 4])
    cand = np.zeros(5, dtype=np.int64)
    re = np.zeros(10, dtype=np.int64)
    rw = np.zeros(10, dtype=np.int64)
    re[0], rw[0] = 10, 2
    free, extra, u, nc, cmin, lo, hi, started = whatif.backfill(
        0, 4, 10, 1, widths, dur, out, q, 1, 5, cand, 0, re, rw, 0, 1
    )
    # Job 1 (3 wide, 20 s) ends after the shadow and is wider than the extra node: no.
    # Job 2 (2 wide, 10 s) ends by the shadow: starts. Job 3 (1 wide, 30 s) fits in the
    # extra node: starts. Job 4 (1 wide, 5 s) ends by the shadow: starts. No node is left.
    assert out.tolist() == [NEVER, NEVER, 0, 0, 0]
    assert (free, extra, u, nc, cmin, started) == (0, 0, 5, 0, whatif.LATER, 3)
    assert list(zip(re[lo:hi].tolist(), rw[lo:hi].tolist(), strict=True)) == [
        (5, 1),
        (10, 2),
        (10, 2),
        (30, 1),
    ]


def test_backfill_keeps_candidates_that_do_not_fit_yet() -> None:
    # 1 free, shadow at 10, no extra: job 1 (2 wide, 5 s) passes the test but does not
    # fit: a candidate; job 2 (1 wide, 5 s) starts; then no node is free and job 3 stays
    # unexamined (u stops before it).
    widths = ints([6, 2, 1, 1])
    dur = ints([5, 5, 5, 5])
    out = ints([NEVER] * 4)
    q = ints([0, 1, 2, 3])
    cand = np.zeros(4, dtype=np.int64)
    re = np.zeros(8, dtype=np.int64)
    rw = np.zeros(8, dtype=np.int64)
    free, extra, u, nc, cmin, lo, hi, started = whatif.backfill(
        0, 1, 10, 0, widths, dur, out, q, 1, 4, cand, 0, re, rw, 0, 0
    )
    assert (free, extra, u, nc, cmin, started) == (0, 0, 3, 1, 2, 1)
    assert cand[:nc].tolist() == [1]
    assert out.tolist() == [NEVER, NEVER, 0, NEVER]
    # Later, 2 free at t = 4: the candidate starts first, the rest stays unexamined.
    free, extra, u, nc, cmin, lo, hi, started = whatif.backfill(
        4, 2, 10, 0, widths, dur, out, q, u, 4, cand, nc, re, rw, lo, hi
    )
    assert out.tolist() == [NEVER, 4, 0, NEVER]
    assert (free, u, nc, cmin, started) == (0, 3, 0, whatif.LATER, 1)


def test_candidates_left_when_the_nodes_run_out_stay_candidates() -> None:
    # 2 free, shadow at 10, no extra. Candidates: job 1 (2 wide) starts and takes both
    # nodes; jobs 2 and 3 (1 wide) are left candidates, unexamined.
    widths = ints([6, 2, 1, 1])
    dur = ints([5, 5, 5, 5])
    out = ints([NEVER] * 4)
    q = ints([0, 1, 2, 3])
    cand = ints([1, 2, 3, 0])
    re = np.zeros(8, dtype=np.int64)
    rw = np.zeros(8, dtype=np.int64)
    free, extra, u, nc, cmin, lo, hi, started = whatif.backfill(
        0, 2, 10, 0, widths, dur, out, q, 4, 4, cand, 3, re, rw, 0, 0
    )
    assert (free, u, nc, cmin, started) == (0, 4, 2, 1, 1)
    assert cand[:nc].tolist() == [2, 3]
    assert out.tolist() == [NEVER, 0, NEVER, NEVER]


def test_candidates_start_while_a_node_is_free() -> None:
    # 2 free: two 1-wide candidates both start.
    widths = ints([6, 1, 1])
    dur = ints([5, 5, 5])
    out = ints([NEVER] * 3)
    cand = ints([1, 2, 0])
    re = np.zeros(8, dtype=np.int64)
    rw = np.zeros(8, dtype=np.int64)
    free, extra, u, nc, cmin, lo, hi, started = whatif.backfill(
        0, 2, 10, 0, widths, dur, out, ints([0, 1, 2]), 3, 3, cand, 2, re, rw, 0, 0
    )
    assert (free, nc, cmin, started) == (0, 0, whatif.LATER, 2)
    assert out.tolist() == [NEVER, 0, 0]
