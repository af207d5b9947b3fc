"""The job sets of the grid study: drawn from a trace's model, sized to each grid.

For a trace and a grid configuration of N nodes in all: ``jobs_per_node x N`` jobs
drawn from the trace's model (``batchd analyze``), with inter-arrival times
multiplied by ``model nodes / N`` (``batchd generate --scale-to-nodes N``), so the
offered load per node is the trace's. The doubled set draws half as many jobs and
doubles them (``--double``): the same number of jobs at twice the load.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from batchd_studies.framework.files import write_in_place
from batchd_studies.framework.traces import existing, file_digest

JOBSETS_DIR = "jobsets"


@dataclass(frozen=True)
class Config:
    """A grid site file: its short name, path, digest and machines."""

    name: str
    path: str
    digest: str
    machines: tuple[tuple[str, int], ...]

    @property
    def nodes(self) -> int:
        return sum(n for _, n in self.machines)

    @property
    def widest(self) -> int:
        return max(n for _, n in self.machines)


def read_config(path_text: str) -> Config:
    """A site file with several machines; its name is the file name without ``grid-``."""
    from batchd.site.config import load_site
    from batchd_studies.framework import StudyError

    path = Path(path_text)
    if not path.is_file():
        raise StudyError(f"--config {path_text}: no such site file")
    site = load_site(path)
    grid = site.grid()
    machines = tuple((m.name, m.nodes) for m in grid.machines)
    if len(machines) < 2:
        raise StudyError(f"--config {path_text}: a grid needs two machines or more")
    name = path.stem.removeprefix("grid-")
    return Config(name, str(path), file_digest(path), machines)


@dataclass(frozen=True)
class JobSet:
    """One job set: trace name, configuration, doubled or not, the file and its facts."""

    trace: str
    config: str
    doubled: bool
    path: str
    digest: str
    jobs: int
    stats: Mapping[str, Any]


def jobset_facts(jobs: Sequence[Any], nodes: int, widest: int) -> dict[str, Any]:
    """Offered load per node, submit span, widest job and jobs wider than every machine."""
    if not jobs:
        return {"jobs": 0, "load": 0.0, "span_days": 0.0, "widest_job": 0, "too_wide": 0}
    span = max(1, max(j.submit for j in jobs) - min(j.submit for j in jobs))
    area = sum(j.width * j.runtime for j in jobs)
    return {
        "jobs": len(jobs),
        "load": area / (span * nodes),
        "span_days": span / 86400,
        "widest_job": max(j.width for j in jobs),
        "too_wide": sum(1 for j in jobs if j.width > widest),
        "mean_runtime": sum(j.runtime for j in jobs) / len(jobs),
        "mean_width": sum(j.width for j in jobs) / len(jobs),
    }


def make_jobsets(
    traces: Sequence[tuple[str, str]],
    configs: Sequence[Config],
    out: Path,
    *,
    jobs_per_node: int,
    seed: int,
) -> tuple[list[JobSet], dict[str, dict[str, Any]]]:
    """Write every job set into OUT/jobsets; also each trace's model facts by name."""
    from batchd.workload.generate import generate_jobs, write_generated_swf
    from batchd.workload.model_fit import analyze_trace

    folder = out / JOBSETS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    sets: list[JobSet] = []
    models: dict[str, dict[str, Any]] = {}
    for name, path_text in traces:
        path = existing(Path(path_text))
        model = analyze_trace(path)
        models[name] = {
            "trace": path.name,
            "nodes": model.machine_nodes,
            "jobs": model.stats.jobs,
            "estimates": model.shapes.overrun_fraction > 0
            or model.stats.estimate_avg != model.stats.runtime_avg,
            "digest": file_digest(path),
        }
        for config in configs:
            for double in (False, True):
                count = jobs_per_node * config.nodes
                if double:
                    count = max(1, count // 2)
                jobs = generate_jobs(
                    model, count, seed=seed, scale_to_nodes=config.nodes, double=double
                )
                file = folder / f"{name}_{config.name}{'_x2' if double else ''}.swf"
                write = partial(
                    write_generated_swf,
                    jobs=jobs,
                    model=model,
                    seed=seed,
                    scale_to_nodes=config.nodes,
                    double=double,
                )
                write_in_place(file, write)
                facts = jobset_facts(jobs, config.nodes, config.widest)
                sets.append(
                    JobSet(
                        name, config.name, double, str(file), file_digest(file), len(jobs), facts
                    )
                )
    return sets, models
