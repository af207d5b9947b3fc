"""How much longer a job runs when it is split over machines or moved: Hamscher et al.'s grid paper.

Sec. 5.2 of Hamscher et al.'s grid paper gives four models of the factor by which a multi-site job's
execution length grows, with ``f`` the number of job parts (segments), ``r_i`` the
nodes requested by part ``i`` and ``p`` a unit value of the partitioning overhead:

    1. (1 + p) ** f
    2. max_i (1 + p) ** r_i
    3. (1 + p) * f
    4. max_i (1 + p) * r_i

They are implemented exactly as written (models 2 and 4 grow with the part sizes,
so model 4 multiplies a job with a 100-node part by more than 100). The factor
applies only to jobs that run on two or more machines. Arithmetic is exact
(fractions, ``p`` taken as the decimal it was written as) and a stretched time is
rounded to the nearest second, halves up.

``unit="mean-part"`` is a normalized reading of models 2 and 4: ``r_i`` counted in
the job's mean part, ``R / f`` nodes (``R`` the job's width), so that ``p`` is a
unit per segment as in models 1 and 3. An even split then costs ``1 + p`` under
both, an uneven one more, up to model 1's and model 3's factor; the largest part
is never smaller than the mean, so the factor is never below ``1 + p``. Model 2's
exponent ``f * max(r_i) / R`` is then a fraction: its power is taken in decimal
arithmetic to ``POWER_DIGITS`` significant digits (the same on every platform).
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal, localcontext
from fractions import Fraction

PART_UNITS = ("nodes", "mean-part")
POWER_DIGITS = 30


def _power(base: Fraction, exponent: Fraction) -> Fraction:
    """``base ** exponent`` exactly for an integer exponent, else to ``POWER_DIGITS`` digits."""
    if exponent.denominator == 1:
        return base ** int(exponent)
    with localcontext() as ctx:
        ctx.prec = POWER_DIGITS
        b = Decimal(base.numerator) / Decimal(base.denominator)
        e = Decimal(exponent.numerator) / Decimal(exponent.denominator)
        return Fraction(b**e)


def multisite_factor(
    model: int, p: Fraction, parts: Sequence[int], unit: str = "nodes"
) -> Fraction:
    """The factor of overhead model ``model`` for a job split into ``parts`` (node counts).

    ``unit`` says how models 2 and 4 count a part: ``nodes`` (as written) or
    ``mean-part`` (in units of the job's mean part, ``sum(parts) / len(parts)``).
    """
    base = 1 + p
    f = len(parts)
    if unit == "mean-part" and model in (2, 4):
        largest = Fraction(f * max(parts), sum(parts))
        return _power(base, largest) if model == 2 else base * largest
    if unit not in PART_UNITS:
        raise ValueError(f"part unit must be one of {', '.join(PART_UNITS)}, got {unit!r}")
    if model == 1:
        return base**f
    if model == 2:
        return base ** max(parts) if base >= 1 else base ** min(parts)
    if model == 3:
        return base * f
    if model == 4:
        return base * max(parts)
    raise ValueError(f"overhead model must be one of 1, 2, 3, 4, got {model}")


def stretch(seconds: int, factor: Fraction) -> int:
    """``seconds`` times ``factor``, rounded to the nearest second (halves up)."""
    if seconds <= 0 or factor == 1:
        return seconds
    exact = seconds * factor
    return int((exact + Fraction(1, 2)).__floor__())
