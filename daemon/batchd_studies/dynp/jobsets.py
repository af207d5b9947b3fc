"""The job sets of the study: a trace used as is, or one generated from a trace's model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from batchd_studies.framework import StudyError
from batchd_studies.framework.files import write_in_place
from batchd_studies.framework.traces import (
    check_unique,
    existing,
    file_digest,
    read_trace,
    trace_base_name,
)

SYNTHETIC_PREFIX = "synthetic-from:"
JOBSETS_DIR = "jobsets"
# Batch-partition widths the paper (Table 2) used; SDSC: the cleaned SP2 log's 128
# (the paper's 352 belongs to another log of that machine).
PAPER_WIDTHS = {"CTC": 430, "KTH": 100, "SDSC": 128, "PC2": 96}


@dataclass(frozen=True)
class TraceSpec:
    """A job set of the study: its name in tables, the file replayed, the machine width."""

    name: str
    source: str
    jobset: str
    nodes: int
    digest: str
    work: float  # rough number of jobs, for ordering runs
    generated: int | None = None  # number of jobs generated (synthetic sets)
    stats: Mapping[str, Any] | None = None  # Table 3 statistics (synthetic sets)


def machine_width(base: str, nodes_for: Mapping[str, int], fallback: int | None) -> int | None:
    """``--nodes-for`` first, then the paper's width for a known name, then ``fallback``."""
    key = base.upper()
    if key in nodes_for:
        return nodes_for[key]
    return PAPER_WIDTHS.get(key, fallback)


def prepare_trace(
    arg: str, out: Path, *, jobs: int, seed: int, nodes_for: Mapping[str, int]
) -> TraceSpec:
    """Resolve one ``--trace`` argument; a ``synthetic-from:`` set is generated into OUT."""
    if arg.startswith(SYNTHETIC_PREFIX):
        return _synthetic_trace(arg, out, jobs=jobs, seed=seed, nodes_for=nodes_for)
    return _plain_trace(arg, nodes_for)


def _synthetic_trace(
    arg: str, out: Path, *, jobs: int, seed: int, nodes_for: Mapping[str, int]
) -> TraceSpec:
    from batchd.workload.generate import generate_jobs, job_set_stats, write_generated_swf
    from batchd.workload.model_fit import analyze_trace

    path = existing(Path(arg.removeprefix(SYNTHETIC_PREFIX)))
    base = trace_base_name(path)
    model = analyze_trace(path)
    nodes = machine_width(base, nodes_for, model.machine_nodes) or model.machine_nodes
    if nodes != model.machine_nodes:
        model = replace(model, machine_nodes=nodes)
    generated = generate_jobs(model, jobs, seed=seed)
    jobset = out / JOBSETS_DIR / f"{base}_syn.swf"
    jobset.parent.mkdir(parents=True, exist_ok=True)
    write_in_place(jobset, partial(write_generated_swf, jobs=generated, model=model, seed=seed))
    name = f"{base}_syn"
    return TraceSpec(
        name=name,
        source=arg,
        jobset=str(jobset),
        nodes=nodes,
        digest=file_digest(jobset),
        work=float(jobs),
        generated=jobs,
        stats=job_set_stats(generated, nodes, name=name),
    )


def _plain_trace(arg: str, nodes_for: Mapping[str, int]) -> TraceSpec:
    trace = read_trace(arg)
    nodes = machine_width(trace.name, nodes_for, trace.machine)
    if not nodes:
        raise StudyError(
            f"{trace.path}: the header names no machine size; give --nodes-for {trace.name}=N"
        )
    path = Path(trace.path)
    size = path.stat().st_size * (5 if path.name.endswith(".gz") else 1)
    return TraceSpec(trace.name, arg, trace.path, nodes, trace.digest, work=size / 100.0)


def prepare_traces(
    args: Sequence[str], out: Path, *, jobs: int, seed: int, nodes_for: Mapping[str, int]
) -> list[TraceSpec]:
    specs = [prepare_trace(a, out, jobs=jobs, seed=seed, nodes_for=nodes_for) for a in args]
    check_unique([s.name for s in specs], "job sets")
    return specs
