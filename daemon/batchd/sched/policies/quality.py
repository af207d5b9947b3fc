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


def summed_quality(
    metric: str,
    starts: np.ndarray,
    widths: np.ndarray,
    durations: np.ndarray,
    submits: int,
    weighted_submits: int,
) -> Fraction | int:
    """``plan_quality`` of a metric in SUMMED, from the sum of the jobs' submits and
    of width x submit: sums that are the same whatever order the plan has the jobs in.
    """
    if len(starts) == 0:
        return 0
    if metric == "ms":
        return int((starts + durations).max())
    if metric == "art":
        return Fraction(int(starts.sum()) + int(durations.sum()) - submits, len(starts))
    if metric == "artww":
        # Sums of products, each in one pass (no array of ends or of products).
        weighted_ends = int(np.dot(widths, starts)) + int(np.dot(widths, durations))
        return Fraction(weighted_ends - weighted_submits, int(widths.sum()))
    if metric == "awt":
        return Fraction(int(starts.sum()) - submits, len(starts))
    raise ValueError(f"{metric!r} needs each job's submit; these need sums only: {SUMMED}")
