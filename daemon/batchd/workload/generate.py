"""Job generator (paper sec. 4): synthetic job sets drawn from a :class:`TraceModel`.

Each job gets

* a **submit time**: Weibull inter-arrival times (the model's operational-time
  fit) are accumulated in operational time and mapped back to clock time
  through the trace's 168-hour weekly arrival profile, so nights and weekends
  receive fewer jobs. The first job is submitted at 0, which is Monday 00:00
  local time. ``shrink`` (paper sec. 5, "shrinking factor") multiplies every
  inter-arrival time; it acts in operational time, so the weekly pattern stays
  aligned with the clock while the load rises;
* a **width, estimate and runtime**: one occupied cell of the model's joint
  probability matrix is chosen by its probability, then one of the exact
  (width, estimate, runtime) triples stored in that cell.

``scale_to_nodes`` sizes a job set for a system of that many nodes (Hamscher et al.'s grid paper,
sec. 5.1: job sets "adapted" to each grid): the job shapes stay those of the
model and every inter-arrival time is multiplied by ``model nodes / target
nodes`` (on top of ``shrink``), so the arrival rate grows with the system and the
offered load per node stays that of the source trace. Jobs keep their widths, so
a job set for a grid keeps the widest job of the source machine.

``double`` applies Hamscher et al.'s grid paper's doubling (:mod:`batchd.workload.double`): every
drawn job twice, the copy at the same second, ids 1..2N in submit order.

``max_width`` applies sec. 4 item 3 ("large jobs are split up in width, so that
the maximum job width is only 64, but the total area of all jobs is not
changed"): a job of width ``w > max_width`` becomes a job of width
``max_width`` whose estimate and runtime are multiplied by ``w / max_width``
(rounded to seconds). The job count and each job's area are kept; the order of
runtime vs. estimate is kept too.

All randomness comes from ``numpy.random.default_rng(seed)``: the same model,
count, seed and options give the same jobs and the same SWF bytes.
"""

from __future__ import annotations

import gzip
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from batchd.workload.double import double_order
from batchd.workload.model_fit import basic_stats, from_operational
from batchd.workload.trace_model import (
    COMMON_ROWS,
    ArrivalModel,
    ShapeMatrix,
    TraceModel,
    format_table,
)

SWF_VERSION = "2.2"


@dataclass(frozen=True, slots=True)
class GeneratedJob:
    """One synthetic job; times in integer seconds."""

    id: int
    submit: int
    width: int
    estimate: int
    runtime: int

    @property
    def area(self) -> int:
        return self.width * self.runtime


def generate_jobs(
    model: TraceModel,
    count: int,
    *,
    seed: int,
    max_width: int | None = None,
    shrink: float = 1.0,
    match_mean: bool = False,
    scale_to_nodes: int | None = None,
    double: bool = False,
) -> list[GeneratedJob]:
    """Draw ``count`` jobs from ``model``; ids are 1..count in submit order.

    ``match_mean=True`` keeps the fitted Weibull shape but sets the scale so the
    expected inter-arrival equals the trace's mean (instead of the MLE scale).
    ``scale_to_nodes`` multiplies the gaps by ``model.machine_nodes / scale_to_nodes``;
    ``double`` returns 2 x count jobs (the draw itself is that of ``count``).
    """
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    if max_width is not None and max_width < 1:
        raise ValueError(f"max_width must be >= 1, got {max_width}")
    if not shrink > 0:
        raise ValueError(f"shrink must be > 0, got {shrink}")
    if scale_to_nodes is not None and scale_to_nodes < 1:
        raise ValueError(f"scale_to_nodes must be >= 1, got {scale_to_nodes}")
    rng = np.random.default_rng(seed)
    gap_factor = shrink * node_scale(model, scale_to_nodes)
    submit = draw_submits(model.arrivals, count, rng, shrink=gap_factor, match_mean=match_mean)
    width, estimate, runtime = draw_shapes(model.shapes, count, rng)
    if max_width is not None:
        width, estimate, runtime = fold_wide_jobs(width, estimate, runtime, max_width)
    columns = (submit.tolist(), width.tolist(), estimate.tolist(), runtime.tolist())
    jobs = [GeneratedJob(i, *row) for i, row in enumerate(zip(*columns, strict=True), start=1)]
    return double_generated(jobs) if double else jobs


def node_scale(model: TraceModel, scale_to_nodes: int | None) -> float:
    """The factor on inter-arrival times that sizes the model's load to ``scale_to_nodes``."""
    if scale_to_nodes is None or scale_to_nodes == model.machine_nodes:
        return 1.0
    return model.machine_nodes / scale_to_nodes


def double_generated(jobs: Sequence[GeneratedJob]) -> list[GeneratedJob]:
    """Hamscher et al.'s grid paper's doubling of a generated set: each job twice in a row, ids 1..2N."""
    doubled = double_order(jobs, [job.submit for job in jobs])
    return [replace(job, id=new_id) for new_id, job in enumerate(doubled, start=1)]


def draw_submits(
    arrivals: ArrivalModel,
    count: int,
    rng: np.random.Generator,
    *,
    shrink: float = 1.0,
    match_mean: bool = False,
) -> np.ndarray:
    """Integer submit times: first at 0 (Monday 00:00), then modulated Weibull gaps."""
    if count == 0:
        return np.zeros(0, dtype=np.int64)
    scale = arrivals.beta
    if match_mean:
        scale = arrivals.mean_interarrival / math.gamma(1.0 + 1.0 / arrivals.alpha)
    gaps = rng.weibull(arrivals.alpha, count - 1) * (scale * shrink)
    op = np.concatenate(([0.0], np.cumsum(gaps)))
    submits: np.ndarray = np.rint(from_operational(op, arrivals.weekly_rate)).astype(np.int64)
    return submits


def draw_shapes(
    shapes: ShapeMatrix, count: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(width, estimate, runtime) arrays: a cell by probability, then a stored triple."""
    probs = np.array([row[3] for row in shapes.matrix], dtype=np.float64)
    sizes = np.array([len(cell) for cell in shapes.samples], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    flat = np.array([t for cell in shapes.samples for t in cell], dtype=np.int64).reshape(-1, 3)
    cells = rng.choice(probs.size, size=count, p=probs / probs.sum())
    within = np.minimum((rng.random(count) * sizes[cells]).astype(np.int64), sizes[cells] - 1)
    triples = flat[offsets[cells] + within]
    return triples[:, 0].copy(), triples[:, 1].copy(), triples[:, 2].copy()


def fold_wide_jobs(
    width: np.ndarray, estimate: np.ndarray, runtime: np.ndarray, max_width: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Width ``w > max_width`` -> ``max_width``, times scaled by ``w / max_width``."""
    factor = np.maximum(width / max_width, 1.0)
    wide = width > max_width
    estimate = np.where(wide, np.rint(estimate * factor), estimate).astype(np.int64)
    runtime = np.where(wide, np.rint(runtime * factor), runtime).astype(np.int64)
    return np.minimum(width, max_width).astype(np.int64), estimate, runtime


# --------------------------------------------------------------------------- statistics


def job_set_stats(
    jobs: Sequence[GeneratedJob], machine_nodes: int, *, name: str = "synthetic"
) -> dict[str, Any]:
    """Paper Table 3 rows of a generated job set (same keys as Table 2 minus the fit)."""
    if not jobs:
        raise ValueError("job_set_stats needs at least one job")
    arrays = {
        key: np.array([getattr(job, key) for job in jobs], dtype=np.int64)
        for key in ("submit", "width", "estimate", "runtime")
    }
    return {"name": name, **basic_stats(**arrays, machine_width=machine_nodes)}


def format_table3(
    stats: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    names: Sequence[str] | None = None,
) -> str:
    """Paper Table 3 ("Properties of the synthetic job sets") for one or more sets."""
    return format_table(stats, COMMON_ROWS, names)


# --------------------------------------------------------------------------- SWF output


def swf_header(
    jobs: Sequence[GeneratedJob],
    model: TraceModel,
    seed: int,
    *,
    max_width: int | None = None,
    shrink: float = 1.0,
    scale_to_nodes: int | None = None,
    double: bool = False,
) -> list[str]:
    """Header comment lines (with the leading '; ') of a generated SWF file.

    ``MaxNodes`` is ``scale_to_nodes`` when given (the system the set is sized for).
    """
    nodes = model.machine_nodes if scale_to_nodes is None else scale_to_nodes
    lines = [
        f"Version: {SWF_VERSION}",
        "Computer: batchd synthetic job set",
        "Generator: batchd generate",
        f"Model: {model.source}",
        f"Seed: {seed}",
        f"MaxNodes: {nodes}",
        f"MaxProcs: {nodes}",
        f"MaxJobs: {len(jobs)}",
        f"MaxRecords: {len(jobs)}",
        "Note: submit time 0 is Monday 00:00 local time of the source trace",
    ]
    if max_width is not None:
        lines.append(f"Note: jobs wider than {max_width} folded to width {max_width}, area kept")
    if shrink != 1.0:
        lines.append(f"Note: inter-arrival times shrunk by factor {shrink:g}")
    if scale_to_nodes is not None:
        lines.append(
            f"Note: sized for {scale_to_nodes} nodes: inter-arrival times multiplied by "
            f"{model.machine_nodes}/{scale_to_nodes} (the model's machine has "
            f"{model.machine_nodes} nodes), offered load per node kept"
        )
    if double:
        lines.append(
            "Note: doubled: every job twice, the copy at the same second, "
            "ids renumbered in submit order"
        )
    if model.provenance:
        lines.append("Note: job shapes are resampled from the source trace; its header said:")
        lines.extend(f"  | {line}" for line in model.provenance)
    return [f"; {line}" for line in lines]


def _record(job: GeneratedJob) -> str:
    fields: tuple[int, ...] = (job.id, job.submit, -1, job.runtime, job.width, -1, -1)
    fields += (job.width, job.estimate)
    fields += (-1, 1, -1, -1, -1, -1, -1, -1, -1)
    return (
        "{:>7d} {:>10d} {:>3d} {:>8d} {:>5d} {:>3d} {:>3d} {:>5d} {:>8d} "
        "{:>3d} {:>2d} {:>3d} {:>3d} {:>3d} {:>3d} {:>3d} {:>3d} {:>3d}"
    ).format(*fields)


def write_generated_swf(
    path: str | Path,
    jobs: Sequence[GeneratedJob],
    model: TraceModel,
    seed: int,
    *,
    max_width: int | None = None,
    shrink: float = 1.0,
    scale_to_nodes: int | None = None,
    double: bool = False,
) -> None:
    """Write ``jobs`` as SWF (gzipped if ``path`` ends in .gz, reproducibly: mtime 0).

    Fields: 1 id, 2 submit, 3 wait -1, 4 runtime, 5 width, 8 width, 9 estimate,
    11 status 1, all others -1. ``max_width``, ``shrink``, ``scale_to_nodes`` and
    ``double`` only add header notes (and ``scale_to_nodes`` sets MaxNodes).
    """
    header = swf_header(
        jobs,
        model,
        seed,
        max_width=max_width,
        shrink=shrink,
        scale_to_nodes=scale_to_nodes,
        double=double,
    )
    text = "\n".join([*header, *(_record(job) for job in jobs)]) + "\n"
    data = text.encode("utf-8")
    path = Path(path)
    if path.name.endswith(".gz"):
        buffer = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0) as gz:
            gz.write(data)
        data = buffer.getvalue()
    path.write_bytes(data)


# --------------------------------------------------------------------------- command line
