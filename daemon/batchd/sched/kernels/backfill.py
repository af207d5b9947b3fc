"""EASY's shadow rule, written once in plain Python.

The EASY policy and the grid layers run ``shadow`` as it is; the what-if
simulator compiles this same function with numba (``kernels.whatif``). So it
uses only what both understand: integers, indexing and loops.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Ends: TypeAlias = "Sequence[int] | npt.NDArray[np.int64]"  # lists here, arrays compiled


def shadow(
    free: int, need: int, ends: Ends, widths: Ends, lo: int, hi: int, now: int
) -> tuple[int, int]:
    """When ``need`` nodes will be free, and how many beyond ``need`` are free then.

    ``free`` nodes are idle at ``now``; the running jobs ``ends[lo:hi]`` (ascending
    estimated ends, all after ``now``) give back ``widths[lo:hi]`` at their ends. Jobs
    ending at the same second all count at that second. The caller makes sure they
    free ``need`` nodes in the end (``need`` <= ``free`` + their widths: the capacity
    in service); the walk does not test for the end of the list.
    """
    avail = free
    i = lo
    t = now
    while avail < need:
        t = ends[i]
        avail += widths[i]
        i += 1
    while i < hi and ends[i] == t:  # the rest of that second's ends count too
        avail += widths[i]
        i += 1
    return t, avail - need


def with_ends(
    ends: Sequence[int], widths: Sequence[int], added: Iterable[tuple[int, int]]
) -> tuple[list[int], list[int]]:
    """The running jobs by estimated end (``ends``, ``widths``, not changed) with the
    (end, width) of jobs started in this pass merged in, for ``shadow``."""
    ends, widths = list(ends), list(widths)
    for end, w in added:
        i = bisect_right(ends, end)
        ends.insert(i, end)
        widths.insert(i, w)
    return ends, widths
