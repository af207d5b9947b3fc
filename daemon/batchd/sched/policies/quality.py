"""Quality of a plan for self-tuning (Streit's dynP paper, sec. 3.2): lower is better.

Values are exact (ints and Fractions) where the metric allows, so that equal
plans compare equal whatever order their jobs were summed in; SLDwW uses an
exactly rounded float sum for the same reason.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Literal

import numpy as np

from batchd.model.times import NEVER
from batchd.sched.kernels import sums

Quality = Literal["ms", "art", "artww", "sldww", "awt"]
QUALITIES: tuple[str, ...] = ("ms", "art", "artww", "sldww", "awt")
SUMMED: tuple[str, ...] = ("ms", "art", "artww", "awt")  # need only sums of the submits


def plan_quality(
    metric: str,
    starts: np.ndarray,
    widths: np.ndarray,
    durations: np.ndarray,
    submits: np.ndarray,
) -> Fraction | float | int:
    """The quality of planned jobs (arrays aligned, one entry per job)."""
    if len(starts) == 0:
        return 0
    ends = starts + durations
    if metric == "ms":
        return int(ends.max())
    if metric == "art":
        return Fraction(int((ends - submits).sum()), len(starts))
    if metric == "artww":
        return Fraction(int((widths * (ends - submits)).sum()), int(widths.sum()))
    if metric == "awt":
        return Fraction(int((starts - submits).sum()), len(starts))
    if metric == "sldww":
        resp = ends - submits
        sld = np.maximum(resp, 60) / np.maximum(durations, 60)
        return math.fsum((widths * sld).tolist()) / float(widths.sum())
    raise ValueError(f"unknown quality metric {metric!r}; choose one of {', '.join(QUALITIES)}")


def queue_terms(
    metric: str, widths: np.ndarray, durations: np.ndarray, submits: int, weighted_submits: int
) -> tuple[int, int]:
    """The parts of ``summed_quality`` that no order of the jobs changes, from the sum
    of their submits and of width x submit: (what is added to the order's own sum, the
    divisor). A self-tuning step measures several orders of one queue with them."""
    if metric == "ms" or len(widths) == 0:
        return 0, 1  # a maximum, or no job: nothing shared
    if metric == "art":
        return int(durations.sum()) - submits, len(widths)
    if metric == "artww":
        weighted_durations, _ = sums.weighted_sum_and_max(widths, durations)
        return int(weighted_durations) - weighted_submits, int(widths.sum())
    if metric == "awt":
        return -submits, len(widths)
    raise ValueError(f"{metric!r} needs each job's submit; these need sums only: {SUMMED}")


def summed_quality(
    metric: str,
    starts: np.ndarray,
    widths: np.ndarray,
    durations: np.ndarray,
    terms: tuple[int, int],
) -> Fraction | int | None:
    """``plan_quality`` of a metric in SUMMED, with the ``queue_terms`` of the jobs:
    the order's own part is one sum (of the starts, or of width x start). None if a
    job has no start (NEVER): ``plan_quality`` then leaves it out, which sums cannot."""
    if len(starts) == 0:
        return 0
    if metric == "artww":
        own, latest = sums.weighted_sum_and_max(widths, starts)
    else:
        own, latest = sums.sum_and_max(starts)
    if latest >= NEVER:
        return None
    if metric == "ms":
        return int((starts + durations).max())
    added, divisor = terms
    if metric in ("art", "artww", "awt"):
        return Fraction(int(own) + added, divisor)
    raise ValueError(f"{metric!r} needs each job's submit; these need sums only: {SUMMED}")
