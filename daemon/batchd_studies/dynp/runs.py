"""One replay of the study (a job set, a shrink factor, a configuration) and its entry."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from batchd_studies.dynp.configs import Config
from batchd_studies.dynp.jobsets import TraceSpec
from batchd_studies.framework.results import RESULTS_FILE, Entry, ResultsFile


@dataclass(frozen=True)
class Task:
    """One replay: a job set, a shrink factor, a configuration."""

    trace: str
    jobset: str
    digest: str
    nodes: int
    shrink: float
    config: Config
    perfect_estimates: bool
    cost: float

    def identity(self) -> dict[str, Any]:
        """What determines the result (``entry_identity`` of the entry it makes)."""
        return {
            "trace": self.trace,
            "shrink": round(self.shrink, 6),
            "config": self.config.name,
            "policy": self.config.policy,
            "params": self.config.param_dict,
            "nodes": self.nodes,
            "jobset_sha256": self.digest,
            "perfect_estimates": self.perfect_estimates,
        }

    def label(self) -> str:
        return f"{self.trace} {self.shrink:.2f} {self.config.name}"


def entry_identity(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The identity of the task that made ``entry`` (fields as every version wrote them)."""
    return {
        "trace": entry["trace"],
        "shrink": round(float(entry["shrink"]), 6),
        "config": entry["config"],
        "policy": entry.get("policy"),
        "params": entry.get("params"),
        "nodes": entry.get("nodes"),
        "jobset_sha256": entry.get("jobset_sha256"),
        "perfect_estimates": bool(entry.get("perfect_estimates")),
    }


def plan_tasks(
    specs: Sequence[TraceSpec],
    shrinks: Sequence[float],
    configs: Sequence[Config],
    *,
    perfect_estimates: bool = False,
) -> list[Task]:
    """Every (trace, shrink, configuration), longest first (dynP at small shrink leads)."""
    tasks = [
        Task(
            trace=spec.name,
            jobset=spec.jobset,
            digest=spec.digest,
            nodes=spec.nodes,
            shrink=shrink,
            config=config,
            perfect_estimates=perfect_estimates,
            cost=spec.work * config.weight / shrink**2,
        )
        for spec in specs
        for shrink in shrinks
        for config in configs
    ]
    return sorted(tasks, key=lambda t: t.cost, reverse=True)


def make_entry(task: Task, summary: Mapping[str, Any], seconds: float) -> Entry:
    """The results entry of a task: its identity's fields, the summary, the wall time."""
    return {
        "trace": task.trace,
        "shrink": task.shrink,
        "config": task.config.name,
        "policy": task.config.policy,
        "params": task.config.param_dict,
        "summary": dict(summary),
        "nodes": task.nodes,
        "jobset": task.jobset,
        "jobset_sha256": task.digest,
        "perfect_estimates": task.perfect_estimates,
        "seconds": round(seconds, 3),
    }


def run_task(task: Task) -> Entry:
    """Replay one task (in a worker process) and return its results entry."""
    from batchd_studies.dynp.replays import replay_summary

    began = time.perf_counter()
    summary = replay_summary(
        task.jobset,
        task.config.policy,
        task.config.param_dict,
        nodes=task.nodes,
        shrink=task.shrink,
        perfect_estimates=task.perfect_estimates,
    )
    return make_entry(task, summary, time.perf_counter() - began)


def order_entries(
    entries: Iterable[Entry], traces: Sequence[str], configs: Sequence[str]
) -> list[Entry]:
    """By job set and configuration in the study's order, shrink factors largest first."""

    def rank(e: Entry) -> tuple[int, float, int]:
        t = traces.index(e["trace"]) if e["trace"] in traces else len(traces)
        c = configs.index(e["config"]) if e["config"] in configs else len(configs)
        return (t, -float(e["shrink"]), c)

    return sorted(entries, key=rank)


def results_file(out: Path, traces: Sequence[str], configs: Sequence[str]) -> ResultsFile:
    """OUT/results.json, indented, in the study's order."""
    return ResultsFile(
        out / RESULTS_FILE,
        entry_identity,
        order=lambda entries: order_entries(entries, traces, configs),
    )
