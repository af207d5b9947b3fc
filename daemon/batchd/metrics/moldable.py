"""What a schedule of moldable jobs achieved (Sabin et al.'s moldable paper, sec. 3.1 and 5.2).

Over the finished jobs, moldable or not: the average turnaround (end - submit)
overall and by job size, the utilization and the effective utilization, and the
widths chosen beside those requested.

- Size is the job's processor-seconds as the trace gives it (requested width x the
  runtime on it), so every policy sorts the same job into the same category: the
  paper's 200-3,200, 3,200-100,000, 100,000-2,000,000 and above, and below 200.
- Utilization is sum(width x run) / (nodes x (last end - first submit)), as in the
  schedule metrics; effective utilization counts each job's useful work instead,
  run x S(width) (its efficiency times its node-seconds: what it would have been at
  ideal efficiency); a job without a model counts width x run.
- Widths: how many moldable jobs ran narrower than, as wide as, and wider than they
  asked, the mean of chosen / requested, and both widths' counts in power-of-two bins
  (1, 2, 3-4, 5-8, ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from batchd.model.job import UNSET, Job

# (name, lowest processor-seconds) of the categories, each up to the next one's lowest.
CATEGORIES: tuple[tuple[str, int], ...] = (
    ("<200", 0),
    ("200-3200", 200),
    ("3200-100000", 3_200),
    ("100000-2000000", 100_000),
    (">2000000", 2_000_000),
)


def size_category(job: Job) -> str:
    """The category of the job's processor-seconds on its requested width."""
    mold = job.mold
    area = mold.width * mold.runtime if mold is not None else job.width * job.runtime
    name = CATEGORIES[0][0]
    for label, low in CATEGORIES:
        if area >= low:
            name = label
    return name


def width_bin(width: int) -> str:
    """1, 2, 3-4, 5-8, 9-16, ...: the power-of-two bin of a width."""
    if width <= 2:
        return str(width)
    high = 1 << (width - 1).bit_length()
    return f"{high // 2 + 1}-{high}"


def _useful(job: Job, run: int) -> float:
    mold = job.mold
    if mold is None:
        return float(job.width * run)
    return run * mold.speedup.at(job.width)


def moldable_summary(jobs: Sequence[Job], nodes: int) -> dict[str, Any] | None:
    """The summary's ``moldable`` object, or None when no finished job is moldable."""
    done = [j for j in jobs if j.start != UNSET and j.end != UNSET]
    molded = [j for j in done if j.mold is not None]
    if not molded:
        return None
    span = max(j.end for j in done) - min(j.submit for j in done)
    capacity = nodes * span
    used = sum(j.width * (j.end - j.start) for j in done)
    useful = sum(_useful(j, j.end - j.start) for j in done)
    groups: dict[str, list[int]] = {name: [] for name, _ in CATEGORIES}
    for job in done:
        groups[size_category(job)].append(job.end - job.submit)
    chosen: dict[str, int] = {}
    requested: dict[str, int] = {}
    narrower = same = wider = 0
    ratio = 0.0
    for job in molded:
        assert job.mold is not None
        asked = job.mold.width
        narrower += job.width < asked
        same += job.width == asked
        wider += job.width > asked
        ratio += job.width / asked
        chosen[width_bin(job.width)] = chosen.get(width_bin(job.width), 0) + 1
        requested[width_bin(asked)] = requested.get(width_bin(asked), 0) + 1
    return {
        "jobs": len(molded),
        "turnaround": round(sum(j.end - j.submit for j in done) / len(done), 4),
        "turnaround_by_size": {
            name: {
                "jobs": len(tats),
                "turnaround": round(sum(tats) / len(tats), 4) if tats else None,
            }
            for name, tats in groups.items()
        },
        "utilization": round(used / capacity, 6) if capacity > 0 else 0.0,
        "effective_utilization": round(useful / capacity, 6) if capacity > 0 else 0.0,
        "widths": {
            "narrower": narrower,
            "as_requested": same,
            "wider": wider,
            "mean_ratio": round(ratio / len(molded), 4),
            "requested": _by_width(requested),
            "chosen": _by_width(chosen),
        },
    }


def _by_width(counts: dict[str, int]) -> dict[str, int]:
    return dict(sorted(counts.items(), key=lambda kv: int(kv[0].split("-")[0])))
