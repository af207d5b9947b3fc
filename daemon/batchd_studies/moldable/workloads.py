"""The study's workloads: the trace (or its slice) made moldable per scenario and load.

Each file is written to OUT/workloads/ as ``batchd moldable SOURCE --a A --seed S
--load L --nodes N`` writes it; the same source, scenario, seed and load give the
same bytes, and the file's digest keys the runs. The files are not kept in git.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from batchd_studies.framework import StudyError
from batchd_studies.framework.traces import existing, file_digest, trace_base_name
from batchd_studies.moldable.plan import Workload

WORKLOADS_DIR = "workloads"


@dataclass(frozen=True)
class Source:
    """The rigid jobs the workloads are made from."""

    trace: str  # short name
    path: str  # the trace, or the slice written from it
    nodes: int


def system_size(trace: Path, nodes: int | None) -> int:
    """``nodes``, else the header's MaxNodes, else its MaxProcs."""
    from batchd.workload.swf import read_header

    if nodes is not None:
        return nodes
    header = read_header(trace)
    size = header.max_nodes or header.max_procs
    if not size:
        raise StudyError(f"{trace}: the header names no machine size; give --nodes N")
    return size


def make_source(
    trace_text: str, jobs: tuple[int, int] | None, nodes: int | None, out: Path
) -> Source:
    """The trace itself, or OUT/workloads/slice-FIRST-LAST.swf cut from it."""
    from batchd.workload.job_range import slice_jobs

    trace = existing(Path(trace_text))
    size = system_size(trace, nodes)
    if jobs is None:
        return Source(trace_base_name(trace), str(trace), size)
    folder = out / WORKLOADS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"slice-{jobs[0]}-{jobs[1]}.swf"
    try:
        slice_jobs(trace, path, *jobs)
    except ValueError as exc:
        raise StudyError(str(exc)) from None
    return Source(trace_base_name(trace), str(path), size)


def make_workloads(
    source: Source, scenarios: Sequence[str], loads: Sequence[float], seed: int, out: Path
) -> tuple[list[Workload], dict[str, Any]]:
    """Every (scenario, load) workload, and what ``batchd moldable`` reported of each."""
    from batchd.workload.moldable_gen import MoldParams, augment_moldable

    folder = out / WORKLOADS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    made: list[Workload] = []
    facts: dict[str, Any] = {}
    for a in scenarios:
        for load in loads:
            path = folder / f"a-{a}-load-{load:g}-s{seed}.swf"
            params = MoldParams(nodes=source.nodes, a=a, load=load, seed=seed)  # type: ignore[arg-type]
            comments = [
                f"Moldable jobs: batchd moldable --a {a} --seed {seed} --load {load:g} "
                f"--nodes {source.nodes} (seed 004, sec. 3.1 and 5.2)"
            ]
            try:
                stats = augment_moldable(source.path, path, params, comments)
            except ValueError as exc:
                raise StudyError(str(exc)) from None
            made.append(Workload(a, load, seed, str(path), file_digest(path)))
            facts[path.name] = {
                "a": a,
                "load": load,
                "jobs": stats.jobs,
                "moldable": stats.moldable,
                "rigid": stats.rigid,
                "factor": stats.factor,
                "offered_before": stats.offered_before,
                "offered": stats.offered,
                "effective": stats.effective,
            }
    return made, facts
