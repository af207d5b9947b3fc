"""The study's workloads: the slice of the trace and its utility augmentations.

The jobs numbered ``FIRST..LAST`` (``batchd.workload.job_range``) are written once to
OUT/workloads/, then given utility functions once per augmentation seed and deadline
factor, as ``batchd utility SLICE --seed S --deadline-factor D`` gives them (the
queue-to-priority map: the trace's built-in one, or ``--map``). The files are not
kept in git: the same command writes the same bytes, and their digests key the runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from batchd_studies.framework import StudyError
from batchd_studies.framework.files import write_in_place
from batchd_studies.framework.traces import existing, file_digest
from batchd_studies.utility.plan import SUBMIT, Workload

WORKLOADS_DIR = "workloads"


@dataclass(frozen=True)
class Slice:
    """The replayed jobs: where they came from and what they offer the machine."""

    trace: str  # short name
    path: str  # the slice's file
    lines: int  # job lines kept
    jobs: int  # jobs a replay on ``nodes`` keeps
    skipped: Mapping[str, int]
    nodes: int
    first_submit: int  # seconds after the log's start
    span: int  # last submit - first submit
    load: float  # node-seconds of runtime / (nodes x span)


def machine_size(trace: Path, nodes: int | None) -> int:
    """``nodes``, else the header's processors (SWF jobs count processors), else its nodes."""
    from batchd.workload.swf import read_header

    if nodes is not None:
        return nodes
    header = read_header(trace)
    size = header.max_procs or header.max_nodes
    if not size:
        raise StudyError(f"{trace}: the header names no machine size; give --nodes N")
    return size


def queue_map(trace: Path, map_file: str | None) -> dict[int, int]:
    from batchd.workload.swf import read_header
    from batchd.workload.utility_gen import load_queue_map, queue_map_for

    if map_file is not None:
        try:
            return load_queue_map(map_file)
        except OSError as exc:
            raise StudyError(f"--map {map_file}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise StudyError(f"--map: {exc}") from None
    found = queue_map_for(read_header(trace))
    if found is None:
        raise StudyError(
            f"{trace}: no built-in queue-to-priority map for this trace (there is one for "
            "SDSC Blue Horizon); give --map FILE (lines QUEUE PRIORITY, 0 highest)"
        )
    return found


def make_slice(trace_text: str, jobs: tuple[int, int], nodes: int | None, out: Path) -> Slice:
    """Write OUT/workloads/slice-FIRST-LAST.swf and read what it offers."""
    from batchd.workload.job_range import slice_jobs
    from batchd.workload.loader import load_swf
    from batchd_studies.framework.traces import trace_base_name

    trace = existing(Path(trace_text))
    size = machine_size(trace, nodes)
    folder = out / WORKLOADS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"slice-{jobs[0]}-{jobs[1]}.swf"
    try:
        lines = write_in_place(path, partial(slice_jobs, trace, first=jobs[0], last=jobs[1]))
        loaded = load_swf(path, nodes=size)
    except ValueError as exc:
        raise StudyError(str(exc)) from None
    replayed = loaded.jobs
    if not replayed:
        raise StudyError(f"{trace}: no job numbered {jobs[0]}-{jobs[1]} fits {size} processors")
    first = min(j.submit for j in replayed)
    span = max(1, max(j.submit for j in replayed) - first)
    work = sum(j.width * j.runtime for j in replayed)
    return Slice(
        trace_base_name(trace),
        str(path),
        lines,
        len(replayed),
        dict(loaded.skipped),
        size,
        first,
        span,
        work / (size * span),
    )


def workload_facts(path: Path, nodes: int) -> dict[str, Any]:
    """What the jobs would earn if each started at its submission (no schedule earns
    more), the share of jobs that would earn anything then (a job earns its function at
    its response time, so one that runs past its deadline earns nothing however soon it
    starts), and the same with the mean start value per processor-minute by priority."""
    from batchd.workload.loader import load_swf

    jobs = [j for j in load_swf(path, nodes=nodes).jobs if j.utility is not None]
    classes: dict[int, list[Any]] = {}
    for job in jobs:
        classes.setdefault(job.priority_class, []).append(job)

    def facts(group: Sequence[Any]) -> dict[str, float]:
        earned = [j.utility.value_at(j.runtime) for j in group]
        minutes = [j.width * max(j.estimate, 1) / 60 for j in group]
        return {
            "jobs": len(group),
            "start_values": sum(j.utility.start_value for j in group),
            "per_minute": sum(
                j.utility.start_value / m for j, m in zip(group, minutes, strict=True)
            )
            / max(1, len(group)),
            "at_once": sum(earned),
            "can_earn": sum(1 for v in earned if v > 0) / max(1, len(group)),
        }

    return {**facts(jobs), "by_class": {str(c): facts(g) for c, g in sorted(classes.items())}}


def augment(
    piece: Slice,
    seeds: Sequence[int],
    kinds: Sequence[tuple[float, str, str]],
    qmap: Mapping[int, int],
) -> tuple[list[Workload], dict[str, Any]]:
    """Every augmentation: each seed for each (deadline factor, value order, deadline
    origin); and what each made, by file name."""
    from batchd.workload.utility_gen import UtilityParams, augment_trace

    folder = Path(piece.path).parent
    made: list[Workload] = []
    stats: dict[str, Any] = {}
    pairs = ", ".join(f"{q}->{p}" for q, p in sorted(qmap.items()))
    for deadline, values, origin in kinds:
        for seed in seeds:
            params = UtilityParams(
                seed=seed, deadline_factor=deadline, value_order=values, deadline_from=origin
            )
            suffix = "" if values == "formula" else f"-{values}"
            suffix += "" if origin == SUBMIT else f"-from-{origin}"
            option = "" if origin == SUBMIT else f" --deadline-from {origin}"
            path = folder / f"u{seed}-d{deadline:g}{suffix}.swf"
            comments = [
                f"Utility functions: batchd utility --seed {seed} --deadline-factor "
                f"{deadline:g} --value-order {values}{option} (seed 003, sec. 4); "
                f"queue->priority {pairs}, other queues lowest"
            ]
            write = partial(augment_trace, piece.path, params=params, qmap=qmap, comments=comments)
            done = write_in_place(path, write)
            made.append(Workload(seed, deadline, values, str(path), file_digest(path), origin))
            stats[path.name] = {
                **workload_facts(path, piece.nodes),
                "seed": seed,
                "deadline": deadline,
                "values": values,
                "deadline_from": origin,
                "by_decay": dict(done.by_decay),
                "by_priority": {str(k): v for k, v in done.by_priority.items()},
                "unmapped": done.unmapped,
            }
    return made, stats
