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
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction


def multisite_factor(model: int, p: Fraction, parts: Sequence[int]) -> Fraction:
    """The factor of overhead model ``model`` for a job split into ``parts`` (node counts)."""
    base = 1 + p
    f = len(parts)
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
