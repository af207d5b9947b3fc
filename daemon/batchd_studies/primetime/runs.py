"""One replay of the study (a trace, a machine size, a discipline, two limits) and its entry."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Any

from batchd_studies.framework.results import RESULTS_FILE, Entry, ResultsFile
from batchd_studies.framework.traces import TraceFile

POLICY = "primetime"


@dataclass(frozen=True)
class Run:
    """One replay: a trace at a machine size, a discipline and a pair of prime-time limits."""

    trace: str
    path: str
    digest: str
    first: int | None
    nodes: int
    discipline: str
    runtime: int  # prime-time runtime limit, % of the weekday prime slot
    jobsize: int  # prime-time jobsize limit, % of the machine
    must_fit: bool
    cost: float = 1.0

    @property
    def params(self) -> dict[str, str]:
        return {
            "prime_runtime": f"{self.runtime}%",
            "prime_nodes": f"{self.jobsize}%",
            "discipline": self.discipline,
            "must_fit": "true" if self.must_fit else "false",
        }

    def identity(self) -> dict[str, Any]:
        """What determines the result (``entry_identity`` of the entry it makes)."""
        return {
            "trace": self.trace,
            "trace_sha256": self.digest,
            "first": self.first,
            "nodes": self.nodes,
            "policy": POLICY,
            "params": self.params,
            "discipline": self.discipline,
            "runtime_limit": self.runtime,
            "jobsize_limit": self.jobsize,
            "must_fit": self.must_fit,
        }

    def label(self) -> str:
        return f"{self.trace} {self.nodes} {self.discipline} {self.runtime}/{self.jobsize}"


def entry_identity(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The identity of the run that made ``entry``."""
    return {
        "trace": entry["trace"],
        "trace_sha256": entry["trace_sha256"],
        "first": entry.get("first"),
        "nodes": entry["nodes"],
        "policy": POLICY,
        "params": entry["params"],
        "discipline": entry["discipline"],
        "runtime_limit": entry["runtime_limit"],
        "jobsize_limit": entry["jobsize_limit"],
        "must_fit": bool(entry["must_fit"]),
    }


def plan_runs(
    specs: Sequence[TraceFile],
    nodes: Mapping[str, Sequence[int]],
    disciplines: Sequence[str],
    limits: Sequence[int],
    *,
    first: int | None,
    must_fit: bool,
) -> list[Run]:
    """Every (trace, size, discipline, runtime limit, jobsize limit), the costliest first.

    A run costs more on a smaller machine (longer queues), with FCFS, and with lower
    limits (more jobs held for non-prime time); 100/100 is one plain queue.
    """
    runs = []
    for spec in specs:
        largest = max(nodes[spec.name])
        for n, d, rt, js in product(nodes[spec.name], disciplines, limits, limits):
            cost = (largest / n) ** 3 * (3.0 if d == "fcfs" else 1.0)
            cost *= 0.1 if (rt, js) == (100, 100) else 2.0 - min(rt, js) / 100
            runs.append(Run(spec.name, spec.path, spec.digest, first, n, d, rt, js, must_fit, cost))
    return sorted(runs, key=lambda r: r.cost, reverse=True)


def make_entry(
    run: Run, summary: Mapping[str, Any], extra: Mapping[str, Any], seconds: float
) -> Entry:
    """The results entry of a run: its identity's fields, summary, span metrics, wall time."""
    return {
        "trace": run.trace,
        "nodes": run.nodes,
        "discipline": run.discipline,
        "runtime_limit": run.runtime,
        "jobsize_limit": run.jobsize,
        "must_fit": run.must_fit,
        "first": run.first,
        "params": run.params,
        "summary": dict(summary),
        "extra": dict(extra),
        "trace_file": run.path,
        "trace_sha256": run.digest,
        "seconds": round(seconds, 3),
    }


def run_task(run: Run) -> Entry:
    """Replay one run (in a worker process) and return its results entry."""
    from batchd_studies.primetime.replays import replay

    began = time.perf_counter()
    summary, extra = replay(run.path, run.params, nodes=run.nodes, first=run.first)
    return make_entry(run, summary, extra, time.perf_counter() - began)


def order_entries(entries: Iterable[Entry]) -> list[Entry]:
    """By trace, machine size (largest first), discipline and limits."""

    def rank(e: Entry) -> tuple[Any, ...]:
        limits = (e["runtime_limit"], e["jobsize_limit"])
        return (
            e["trace"],
            -e["nodes"],
            e["discipline"],
            *limits,
            str(e.get("first")),
            bool(e["must_fit"]),
        )

    return sorted(entries, key=rank)


def results_file(out: Path) -> ResultsFile:
    """OUT/results.json, one run a line."""
    return ResultsFile(out / RESULTS_FILE, entry_identity, order=order_entries, one_per_line=True)
