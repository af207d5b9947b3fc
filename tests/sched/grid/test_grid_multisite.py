"""Multi-site grid scheduling and the overhead models of Hamscher et al.'s grid paper, sec. 5.2, by hand."""

from __future__ import annotations

from fractions import Fraction

import pytest
from gridutil import job, run_grid, table

from batchd.sched.grid.multisite import split_widths
from batchd.sched.grid.overhead import multisite_factor, stretch


# m0, m1 of 4 nodes; p = 0.5. J1 t0 w6 100 s: no machine can start it alone ->
# split over the machines with the most free nodes: m0 4, m1 2 (f = 2 parts).
# Factors: 1. 1.5^2 = 2.25 -> 225; 2. max(1.5^4, 1.5^2) = 5.0625 -> 506.25 -> 506;
# 3. 1.5 * 2 = 3 -> 300; 4. max(1.5*4, 1.5*2) = 6 -> 600.
# J2 t0 w2 10 s: m1 has 2 free -> runs there alone [0,10).
@pytest.mark.parametrize(("model", "run"), [(1, 225), (2, 506), (3, 300), (4, 600)])
def test_split_and_overhead_models(model: int, run: int) -> None:
    layer, runs, out = run_grid(
        "multisite", [4, 4], [job(1, 0, 6, 100), job(2, 0, 2, 10)], overhead=str(model), p="0.5"
    )
    assert [(j.id, j.machine, j.width, j.start, j.end) for j in runs] == [
        (1, 0, 4, 0, run),
        (1, 1, 2, 0, run),
        (2, 1, 2, 0, 10),
    ]
    assert table(out) == {1: (0, 0, run), 2: (1, 0, 10)}
    assert [j.width for j in out] == [6, 2]
    assert layer.stats.multisite_jobs == 1
    assert layer.stats.multisite_added_node_seconds == 6 * (run - 100)


def test_overhead_factors_exact() -> None:
    p = Fraction("0.1")
    assert multisite_factor(1, p, [3, 5]) == Fraction(121, 100)
    assert multisite_factor(2, p, [3, 5]) == Fraction(11, 10) ** 5
    assert multisite_factor(3, p, [3, 5, 1]) == Fraction(33, 10)
    assert multisite_factor(4, p, [3, 5]) == Fraction(55, 10)
    assert stretch(100, Fraction(11, 10)) == 110  # exact: not 110.00000000000001
    assert stretch(5, Fraction(1, 10)) == 1  # 0.5 rounds up
    assert stretch(0, Fraction(3)) == 0


# part_unit=mean-part: r_i counted in the job's mean part, sum(parts) / f nodes.
# Parts [3, 5]: mean 4, largest 5/4 units; p = 0.1. Model 2: 1.1 ** 1.25 =
# 1.126... (to 30 digits); model 4: 1.1 * 1.25 = 1.375. An even split [4, 4] is
# one unit: 1.1 under both; models 1 and 3 do not change.
def test_overhead_mean_part_unit() -> None:
    p = Fraction("0.1")
    m2 = multisite_factor(2, p, [3, 5], "mean-part")
    assert abs(float(m2) - 1.1**1.25) < 1e-15 and m2 != Fraction(11, 10)
    assert multisite_factor(4, p, [3, 5], "mean-part") == Fraction(11, 8)
    assert multisite_factor(2, p, [4, 4], "mean-part") == Fraction(11, 10)
    assert multisite_factor(4, p, [4, 4], "mean-part") == Fraction(11, 10)
    assert multisite_factor(1, p, [3, 5], "mean-part") == multisite_factor(1, p, [3, 5])
    assert multisite_factor(3, p, [3, 5], "mean-part") == multisite_factor(3, p, [3, 5])
    # At p = 0.01 a 256-node part of a 512-node job: 12.8 read as nodes, 1.01 as mean parts.
    assert float(multisite_factor(2, Fraction("0.01"), [256, 256])) == pytest.approx(12.78, 1e-3)
    assert multisite_factor(2, Fraction("0.01"), [256, 256], "mean-part") == Fraction(101, 100)


# The split of test_split_and_overhead_models (m0 4 + m1 2 of a 6-node job, 100 s,
# p = 0.5) with part_unit=mean-part: mean 3, largest 4/3. Model 2: 1.5 ** (4/3) =
# 1.7171... -> 171.7 -> 172; model 4: 1.5 * 4/3 = 2 -> 200.
@pytest.mark.parametrize(("model", "run"), [(2, 172), (4, 200)])
def test_split_with_mean_part_unit(model: int, run: int) -> None:
    _, _, out = run_grid(
        "multisite",
        [4, 4],
        [job(1, 0, 6, 100), job(2, 0, 2, 10)],
        overhead=str(model),
        p="0.5",
        part_unit="mean-part",
    )
    assert table(out) == {1: (0, 0, run), 2: (1, 0, 10)}


# Parts on the fewest machines, most free first; the last part at least min_part:
# w5 on free [4, 4], min_part 2: 4 + 1 -> the last takes 1 more from the first: 3 + 2.
# min_part 3: 4 - 2 = 2 < 3 -> no split. w8: 4 + 4. w3 on [1, 2, 2]: m1 2 + m2 1.
def test_split_widths() -> None:
    assert split_widths(5, [4, 4], 1) == [(0, 4), (1, 1)]
    assert split_widths(5, [4, 4], 2) == [(0, 3), (1, 2)]
    assert split_widths(5, [4, 4], 3) is None
    assert split_widths(8, [4, 4], 1) == [(0, 4), (1, 4)]
    assert split_widths(3, [1, 2, 2], 1) == [(1, 2), (2, 1)]
    assert split_widths(3, [1, 2, 2], 2) is None  # 2 + 1: the 1 would need 1 more
    assert split_widths(9, [4, 4], 1) is None


# FCFS: m0 4, m1 4, p 0. J1 t0 w4 100 s -> m0 (bestfit: tie -> first). J2 t0 w6 10 s:
# m1 alone too narrow; free 0 + 4 < 6 -> waits, and J3 t0 w1 10 s behind it waits too.
# t=100: J2 split m0 4 + m1 2 [100,110) (factor (1+0)^2 = 1); J3 -> m1 [100,110).
def test_multisite_fcfs_head_waits() -> None:
    jobs = [job(1, 0, 4, 100), job(2, 0, 6, 10), job(3, 0, 1, 10)]
    _, runs, out = run_grid("multisite", [4, 4], jobs)
    assert table(out) == {1: (0, 0, 100), 2: (0, 100, 110), 3: (1, 100, 110)}
    parts = [(j.machine, j.width, j.start) for j in runs if j.id == 2]
    assert parts == [(0, 4, 100), (1, 2, 100)]
