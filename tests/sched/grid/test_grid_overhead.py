"""The overhead models of multi-site jobs (Hamscher et al.'s grid paper, sec. 5.2), exactly.

With ``f`` parts of ``r_i`` nodes and unit overhead ``p``: model 1 (1 + p) ** f,
model 2 max_i (1 + p) ** r_i, model 3 (1 + p) * f, model 4 max_i (1 + p) * r_i.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest

from batchd.sched.grid.overhead import PART_UNITS, POWER_DIGITS, multisite_factor, stretch


def test_the_four_models_on_three_parts() -> None:
    # p = 1/4, parts 2, 5, 3 (f = 3, largest 5).
    p = Fraction(1, 4)
    parts = [2, 5, 3]
    assert multisite_factor(1, p, parts) == Fraction(125, 64)  # (5/4) ** 3
    assert multisite_factor(2, p, parts) == Fraction(3125, 1024)  # (5/4) ** 5
    assert multisite_factor(3, p, parts) == Fraction(15, 4)  # 5/4 * 3
    assert multisite_factor(4, p, parts) == Fraction(25, 4)  # 5/4 * 5


def test_no_overhead_is_a_factor_of_one() -> None:
    for model in (1, 2):
        assert multisite_factor(model, Fraction(0), [3, 4]) == 1
    # models 3 and 4 multiply by f and by the largest part even at p = 0
    assert multisite_factor(3, Fraction(0), [3, 4]) == 2
    assert multisite_factor(4, Fraction(0), [3, 4]) == 4


def test_model_two_takes_the_largest_power() -> None:
    # Below 1 (a negative p) the largest power is the smallest part's: (1/2) ** 2.
    assert multisite_factor(2, Fraction(-1, 2), [3, 2, 4]) == Fraction(1, 4)
    assert multisite_factor(2, Fraction(1), [3, 2, 4]) == 16


def test_mean_part_unit() -> None:
    # parts 2, 6: mean 4, largest 6/4 = 3/2 units; p = 1/2.
    p = Fraction(1, 2)
    assert multisite_factor(4, p, [2, 6], "mean-part") == Fraction(9, 4)  # 3/2 * 3/2
    # model 2 with an integer exponent is exact: parts 1, 1, 4: mean 2, largest 2
    # units -> (3/2) ** 2.
    assert multisite_factor(2, p, [1, 1, 4], "mean-part") == Fraction(9, 4)
    # a fractional exponent, to POWER_DIGITS significant digits: parts 4, 2 -> 4/3
    # units, 1.5 ** (4/3).
    assert POWER_DIGITS == 30
    got = multisite_factor(2, p, [4, 2], "mean-part")
    assert got == Fraction(Decimal("1.71707136382999780171206331791"))
    # parts 1, 3 -> 3/2 units, 1.5 ** 1.5: a half exponent is no integer power either
    got = multisite_factor(2, p, [1, 3], "mean-part")
    assert got == Fraction(Decimal("1.83711730708738357364796305603"))
    got = multisite_factor(2, Fraction(1, 10), [3, 5], "mean-part")
    assert got == Fraction(Decimal("1.12652505799288964234455945603"))
    # models 1 and 3 count segments, whatever the unit
    assert multisite_factor(1, p, [2, 6], "mean-part") == Fraction(9, 4)
    assert multisite_factor(3, p, [2, 6], "mean-part") == 3


def test_bad_model_or_unit_is_refused() -> None:
    assert PART_UNITS == ("nodes", "mean-part")
    with pytest.raises(ValueError, match=r"^overhead model must be one of 1, 2, 3, 4, got 5$"):
        multisite_factor(5, Fraction(0), [1, 1])
    with pytest.raises(ValueError, match=r"^overhead model must be one of 1, 2, 3, 4, got 0$"):
        multisite_factor(0, Fraction(0), [1, 1], "mean-part")
    message = r"^part unit must be one of nodes, mean-part, got 'cores'$"
    for model in (1, 2, 4):
        with pytest.raises(ValueError, match=message):
            multisite_factor(model, Fraction(0), [1, 1], "cores")


def test_stretch_rounds_to_the_nearest_second_halves_up() -> None:
    assert stretch(10, Fraction(3, 2)) == 15
    assert stretch(3, Fraction(1, 2)) == 2  # 1.5 -> 2
    assert stretch(1, Fraction(5, 2)) == 3  # 2.5 -> 3 (not to even)
    assert stretch(3, Fraction(4, 3)) == 4  # 4 exactly
    assert stretch(7, Fraction(1, 3)) == 2  # 2.33 -> 2
    assert stretch(5, Fraction(1, 3)) == 2  # 1.67 -> 2
    assert stretch(1, Fraction(3)) == 3
    assert stretch(2, Fraction(2)) == 4
    assert stretch(1, Fraction(1, 4)) == 0  # 0.25 -> 0


def test_stretch_leaves_no_time_and_factor_one_alone() -> None:
    assert stretch(0, Fraction(5)) == 0
    assert stretch(-1, Fraction(5)) == -1  # no runtime known
    assert stretch(123, Fraction(1)) == 123
