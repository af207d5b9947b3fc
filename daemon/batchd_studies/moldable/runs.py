"""One replay of the moldable study and its results entry."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from batchd_studies.framework.results import RESULTS_FILE, Entry, ResultsFile, as_plain
from batchd_studies.moldable.plan import Run, entry_identity

# The summary keys the report uses beside the ``moldable`` object.
SUMMARY_KEYS = ("jobs", "killed", "utilization", "makespan", "awt", "art", "bsld10", "moldable")


def make_entry(run: Run, summary: Mapping[str, Any], seconds: float) -> Entry:
    kept = {k: summary[k] for k in SUMMARY_KEYS if k in summary}
    return {
        **run.identity(),
        "scheduler": run.scheduler.key,
        "workload": Path(run.workload.path).name,
        "summary": as_plain(kept),
        "seconds": round(seconds, 3),
    }


def run_task(run: Run) -> Entry:
    """Replay one run (in a worker process) and return its results entry."""
    from batchd.replay import ReplayOptions, run_replay

    began = time.perf_counter()
    opts = ReplayOptions(
        trace=run.workload.path,
        policy=run.scheduler.policy,
        params=dict(run.scheduler.params),
        nodes=run.nodes,
        records=False,
    )
    result = run_replay(opts)
    return make_entry(run, result.summary, time.perf_counter() - began)


def order_entries(entries: Iterable[Entry]) -> list[Entry]:
    """By scenario, load, policy and parameters: one order whatever order runs finished."""

    def rank(e: Entry) -> tuple[Any, ...]:
        params = sorted((str(k), str(v)) for k, v in e["params"].items())
        return (e["a"] != "system", float(e["load"]), e["policy"], params, e["workload_sha256"])

    return sorted(entries, key=rank)


def results_file(out: Path) -> ResultsFile:
    """OUT/results.json, one run a line."""
    return ResultsFile(out / RESULTS_FILE, entry_identity, order=order_entries, one_per_line=True)
