"""Turning an SWF trace into the jobs of one machine."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from batchd.model.job import Job
from batchd.workload.swf import PathLike, SWFHeader, iter_swf, read_header

__all__ = ["SKIP_REASONS", "Workload", "load_swf", "shrink_submits"]

SKIP_REASONS: tuple[str, ...] = ("width<=0", "runtime<0", "wider_than_machine")


@dataclass
class Workload:
    """Jobs ready for replay, the count of records left out by reason, and where they came from."""

    jobs: list[Job]
    skipped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SKIP_REASONS, 0))
    header: SWFHeader | None = None
    source: str = ""


def load_swf(
    path: PathLike,
    *,
    nodes: int,
    first: int | None = None,
    perfect_estimates: bool = False,
    shrink: float = 1.0,
) -> Workload:
    """Read an SWF trace into jobs for a machine of ``nodes`` nodes.

    Width is the requested processors (field 8), or the allocated ones (field 5) when the
    request is missing; runtime is field 4; the estimate is the requested time (field 9)
    when given, else the runtime (always the runtime with ``perfect_estimates``). Records
    with width <= 0, runtime < 0 or wider than the machine are skipped and counted, in that
    order of checks. ``first`` keeps only the first N job lines of the file (counted before
    skipping). Jobs come sorted by submit time, ties in file order, and ``shrink`` then
    scales the submit gaps (see :func:`shrink_submits`).
    """
    if nodes <= 0:
        raise ValueError(f"a machine needs at least one node, got {nodes}")
    if first is not None and first < 0:
        raise ValueError(f"first must be >= 0, got {first}")
    if not (shrink > 0 and math.isfinite(shrink)):
        raise ValueError(f"shrink factor must be a finite number > 0, got {shrink}")

    n_width = n_runtime = n_wide = 0
    jobs: list[Job] = []
    append = jobs.append
    new_job = Job
    count = 0
    records = iter_swf(path)
    try:
        for _line_no, rec in records:
            if first is not None and count >= first:
                break
            count += 1
            jid, submit, _, runtime, alloc, _, _, req_procs, req_time = rec[:9]
            width = round(req_procs) if req_procs > 0 else round(alloc)
            if width <= 0:
                n_width += 1
                continue
            runtime = round(runtime)
            if runtime < 0:
                n_runtime += 1
                continue
            if width > nodes:
                n_wide += 1
                continue
            estimate = runtime if perfect_estimates or req_time <= 0 else round(req_time)
            queue = round(rec[14])
            append(
                new_job(
                    id=round(jid),
                    submit=round(submit),
                    width=width,
                    estimate=estimate,
                    runtime=runtime,
                    user=str(round(rec[11])),
                    queue=str(queue) if queue >= 0 else "",
                    record=rec,
                )
            )
    finally:
        records.close()

    jobs.sort(key=_submit_key)  # stable: equal submits keep file order
    if shrink != 1.0:
        shrink_submits(jobs, shrink)
    skipped = {"width<=0": n_width, "runtime<0": n_runtime, "wider_than_machine": n_wide}
    return Workload(jobs=jobs, skipped=skipped, header=read_header(path), source=str(path))


def _submit_key(job: Job) -> int:
    return job.submit


def shrink_submits(jobs: list[Job], factor: float) -> None:
    """Scale the gaps between submits in place, keeping the first submit where it is.

    ``submit' = first + floor((submit - first) * factor)`` computed exactly (the factor is
    taken by its decimal text, so 0.7 means 7/10), so 1.0 leaves every time unchanged.
    """
    if not (factor > 0 and math.isfinite(factor)):
        raise ValueError(f"shrink factor must be a finite number > 0, got {factor}")
    if not jobs:
        return
    ratio = Fraction(str(factor))
    num, den = ratio.numerator, ratio.denominator
    if num == den:
        return
    first = min(job.submit for job in jobs)
    for job in jobs:
        job.submit = first + (job.submit - first) * num // den
