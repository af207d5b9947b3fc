"""One replay of the utility study and its results entry."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from batchd_studies.framework.results import RESULTS_FILE, Entry, ResultsFile, as_plain
from batchd_studies.utility.options import SCHEDULERS
from batchd_studies.utility.plan import EXACT, Run, entry_identity

# The summary keys the report uses (the rest of a replay's summary is left out).
SUMMARY_KEYS = (
    "jobs",
    "killed",
    "utilization",
    "makespan",
    "awt",
    "art",
    "bsld10",
    "utility",
    "ga",
)


def make_entry(
    run: Run, summary: Mapping[str, Any], columns: Mapping[str, Any], seconds: float
) -> Entry:
    kept = {k: summary[k] for k in SUMMARY_KEYS if k in summary}
    return {
        **run.identity(),
        "ga_seed": run.ga_seed,
        "workload": Path(run.workload.path).name,
        "summary": as_plain(kept),
        "columns": as_plain(dict(columns)),
        "seconds": round(seconds, 3),
    }


def run_task(run: Run) -> Entry:
    """Replay one run (in a worker process) and return its results entry."""
    from batchd.replay import ReplayOptions, run_replay
    from batchd_studies.utility.measures import seed_columns

    began = time.perf_counter()
    opts = ReplayOptions(
        trace=run.workload.path,
        policy=run.policy,
        params=run.params,
        nodes=run.nodes,
        shrink=run.scenario.factor,
        perfect_estimates=run.scenario.estimates == EXACT,
    )
    result = run_replay(opts)
    columns = seed_columns(result.jobs)
    return make_entry(run, result.summary, columns, time.perf_counter() - began)


def order_entries(entries: Iterable[Entry]) -> list[Entry]:
    """By scenario, scheduler (the tables' order), augmentation and GA seed; the runs with
    deadlines from the start after the others of their scenario."""

    def rank(e: Entry) -> tuple[Any, ...]:
        policy = SCHEDULERS.index(e["policy"]) if e["policy"] in SCHEDULERS else len(SCHEDULERS)
        return (
            e["estimates"] != "users",
            -float(e["factor"]),
            float(e["deadline"]),
            e.get("deadline_from", "submit") != "submit",
            policy,
            e["seed"],
            e.get("ga_seed") or 0,
            e["workload_sha256"],
        )

    return sorted(entries, key=rank)


def results_file(out: Path) -> ResultsFile:
    """OUT/results.json, one run a line."""
    return ResultsFile(out / RESULTS_FILE, entry_identity, order=order_entries, one_per_line=True)
