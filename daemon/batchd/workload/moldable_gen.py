"""Moldable workloads from a rigid trace (Sabin et al.'s moldable paper, sec. 3.1 and 5.2).

Each job line gets ``nodes=MIN-MAX`` and ``speedup=downey:A:SIGMA`` after its 18
fields; the rest of the line is written as read, but for the runtime and estimate
when the load is changed.

- A: the system size (``--a system``), or drawn uniformly between 1 and 2 times the
  job's requested width (field 8, else field 5) (``--a random``); sigma uniform in
  0..2. Both are rounded to thousandths. The draws go in file order, A before sigma.
- The range: 1 to the system size unless given, widened where needed to hold the
  job's requested width. A job wider than the system, or without a width, stays rigid
  (no tokens).
- ``--load F``: the runtime (field 4) and the estimate (field 9) of every job are
  multiplied by F / the trace's offered load, and rounded (at least 1 second where
  they were positive), so the offered load becomes F without touching inter-arrival
  times. The offered load is sum(width x runtime) / (system size x (last submit -
  first submit)); the effective load counts each job's work ``runtime x S(width)``
  instead (what it would be at ideal efficiency).

The same trace, parameters and seed give the same bytes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from batchd.model.moldable import Speedup
from batchd.model.utility import format_number
from batchd.workload.swf import (
    N_FIELDS,
    NODES_KEY,
    SPEEDUP_KEY,
    PathLike,
    _open_write,
    iter_swf_tokens,
    open_text,
    read_header,
)

__all__ = ["MoldParams", "MoldStats", "augment_moldable", "format_mold_stats", "trace_load"]

AChoice = Literal["system", "random"]
SIGMA_MAX = 2.0


@dataclass(frozen=True)
class MoldParams:
    nodes: int  # the system size
    a: AChoice = "system"
    low: int = 1
    high: int | None = None  # None: the system size
    load: float | None = None  # the offered load to reach; None: as the trace has it
    seed: int = 0


@dataclass
class MoldStats:
    jobs: int = 0
    moldable: int = 0
    rigid: int = 0  # too wide for the system, or no width
    factor: float = 1.0
    offered_before: float = 0.0
    offered: float = 0.0
    effective: float = 0.0


def _width(fields: Sequence[int | float]) -> int:
    return round(fields[7]) if fields[7] > 0 else round(fields[4])


def trace_load(src: PathLike, nodes: int) -> float:
    """The offered load: sum(width x runtime) / (nodes x (last submit - first submit)),
    over the jobs that fit the system."""
    area = 0.0
    first = last = None
    for _, fields, _ in iter_swf_tokens(src):
        submit = fields[1]
        first = submit if first is None else min(first, submit)
        last = submit if last is None else max(last, submit)
        width = _width(fields)
        if 0 < width <= nodes and fields[3] > 0:
            area += width * fields[3]
    span = 0 if first is None or last is None else last - first
    return area / (nodes * span) if span > 0 else 0.0


def _scale(value: int | float, factor: float) -> int | float:
    if value <= 0 or factor == 1.0:
        return value
    return max(1, round(value * factor))


def augment_moldable(
    src: PathLike, dst: PathLike, params: MoldParams, comments: Sequence[str] = ()
) -> MoldStats:
    """Write ``src`` to ``dst`` with a width range and Downey's speedup on every job."""
    nodes = params.nodes
    high = nodes if params.high is None else params.high
    stats = MoldStats()
    stats.offered_before = trace_load(src, nodes)
    if params.load is not None:
        if stats.offered_before <= 0:
            raise ValueError(f"{src}: the trace has no load to scale (no work, or one submit)")
        stats.factor = params.load / stats.offered_before
    rng = random.Random(params.seed)
    header = read_header(src)
    area = useful = 0.0
    first = last = None
    with open_text(src) as fin, _open_write(dst) as out:
        for line in header.lines:
            out.write(line + "\n")
        for text in comments:
            out.write(f"; {text}\n")
        numbered = enumerate(fin, 1)
        for line_no, fields, tokens in iter_swf_tokens(src):
            line = next(text for n, text in numbered if n == line_no)
            parts = line.split()[:N_FIELDS]
            stats.jobs += 1
            submit = fields[1]
            first = submit if first is None else min(first, submit)
            last = submit if last is None else max(last, submit)
            runtime = _scale(fields[3], stats.factor)
            estimate = _scale(fields[8], stats.factor)
            if stats.factor != 1.0:
                parts[3], parts[8] = str(runtime), str(estimate)
            width = _width(fields)
            kept = [t for t in tokens if t.partition("=")[0] not in (NODES_KEY, SPEEDUP_KEY)]
            if not 0 < width <= nodes:
                stats.rigid += 1
                out.write(" ".join([*parts, *kept]) + "\n")
                continue
            a = float(nodes) if params.a == "system" else round(rng.uniform(width, 2 * width), 3)
            sigma = round(rng.uniform(0.0, SIGMA_MAX), 3)
            speedup = Speedup("downey", a, sigma)
            if runtime > 0:
                area += width * runtime
                useful += runtime * speedup.at(width)
            stats.moldable += 1
            new = [
                f"{NODES_KEY}={min(params.low, width)}-{max(high, width)}",
                f"{SPEEDUP_KEY}={speedup.format()}",
            ]
            out.write(" ".join([*parts, *new, *kept]) + "\n")
    span = 0 if first is None or last is None else last - first
    if span > 0:
        stats.offered = area / (nodes * span)
        stats.effective = useful / (nodes * span)
    return stats


def format_mold_stats(stats: MoldStats, params: MoldParams) -> str:
    a = "the system size" if params.a == "system" else "uniform in 1..2 x the requested width"
    lines = [
        f"{stats.moldable} moldable jobs of {stats.jobs} (seed {params.seed}; A {a}, "
        f"sigma uniform in 0..{format_number(SIGMA_MAX)}); {stats.rigid} left rigid",
        f"offered load {stats.offered_before:.4f} in the trace"
        + (f", runtimes and estimates x {stats.factor:.6f}" if params.load is not None else ""),
        f"offered load {stats.offered:.4f}, effective load {stats.effective:.4f} "
        f"(after speedup) on {params.nodes} nodes",
    ]
    return "\n".join(lines)
