"""One replay of the grid study (a job set, a configuration, a variant) and its entry."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from batchd_studies.framework.results import RESULTS_FILE, Entry, ResultsFile, as_plain
from batchd_studies.grid.jobsets import Config, JobSet
from batchd_studies.grid.variants import Variant


@dataclass(frozen=True)
class Run:
    """One replay: a variant on a job set drawn for a configuration."""

    trace: str
    config: str
    config_path: str
    config_digest: str
    jobset: str
    jobset_digest: str
    variant: str
    structure: str
    params: tuple[tuple[str, str], ...]
    doubled: bool
    seed: int
    cost: float = 1.0

    def identity(self) -> dict[str, Any]:
        return {
            "trace": self.trace,
            "config": self.config,
            "config_sha256": self.config_digest,
            "jobset_sha256": self.jobset_digest,
            "variant": self.variant,
            "structure": self.structure,
            "params": dict(self.params),
            "doubled": self.doubled,
            "seed": self.seed,
        }

    def label(self) -> str:
        return f"{self.trace} {self.config} {self.variant}"


def entry_identity(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The identity of the run that made ``entry``."""
    return {
        "trace": entry["trace"],
        "config": entry["config"],
        "config_sha256": entry["config_sha256"],
        "jobset_sha256": entry["jobset_sha256"],
        "variant": entry["variant"],
        "structure": entry["structure"],
        "params": entry["params"],
        "doubled": bool(entry["doubled"]),
        "seed": entry["seed"],
    }


def plan_runs(
    sets: Sequence[JobSet], configs: Sequence[Config], variants: Sequence[Variant], seed: int
) -> list[Run]:
    """Every variant on its job set (plain or doubled) of every trace and configuration."""
    by_name = {c.name: c for c in configs}
    runs = []
    for js in sets:
        config = by_name[js.config]
        for v in variants:
            if v.doubled != js.doubled:
                continue
            runs.append(
                Run(
                    js.trace,
                    config.name,
                    config.path,
                    config.digest,
                    js.path,
                    js.digest,
                    v.key,
                    v.structure,
                    v.params,
                    v.doubled,
                    seed,
                    v.cost * js.jobs,
                )
            )
    return sorted(runs, key=lambda r: r.cost, reverse=True)


# The summary keys the report uses (the rest of a replay's summary is left out).
SUMMARY_KEYS = ("jobs", "art", "awt", "makespan", "utilization", "sldww60", "killed")


def make_entry(run: Run, summary: Mapping[str, Any], seconds: float) -> Entry:
    grid = summary.get("grid", {})
    kept = {k: summary[k] for k in SUMMARY_KEYS if k in summary}
    kept["grid"] = {
        k: grid[k]
        for k in (
            "machines",
            "migrations",
            "pool_pushes",
            "pool_pulls",
            "multisite_jobs",
            "multisite_added_node_seconds",
            "rejected",
        )
        if k in grid
    }
    return {
        **run.identity(),
        "jobset": run.jobset,
        "summary": as_plain(kept),
        "seconds": round(seconds, 3),
    }


def replay_summary(run: Run) -> dict[str, Any]:
    """The replay summary of one run (the one call into the core's replay)."""
    from batchd.replay import ReplayOptions, run_replay

    opts = ReplayOptions(
        trace=run.jobset,
        machine=run.config_path,
        grid=run.structure,
        grid_params=dict(run.params),
        seed=run.seed,
    )
    return run_replay(opts).summary


def run_task(run: Run) -> Entry:
    """Replay one run (in a worker process) and return its results entry."""
    began = time.perf_counter()
    summary = replay_summary(run)
    return make_entry(run, summary, time.perf_counter() - began)


def order_entries(entries: Iterable[Entry], order: Sequence[str]) -> list[Entry]:
    """By trace, configuration, then the variants' order."""

    def rank(e: Entry) -> tuple[Any, ...]:
        v = order.index(e["variant"]) if e["variant"] in order else len(order)
        return (e["trace"], e["config"], v, e["variant"])

    return sorted(entries, key=rank)


def results_file(out: Path, order: Sequence[str]) -> ResultsFile:
    """OUT/results.json, one run a line."""
    return ResultsFile(
        out / RESULTS_FILE,
        entry_identity,
        order=lambda entries: order_entries(entries, order),
        one_per_line=True,
    )
