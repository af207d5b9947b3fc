"""One run of a sweep on a worker: its input files here, the replay, its record.

The record is plain JSON data: the run's key and coordinates, the replay summary
without its wall-clock fields (kept apart under ``timing``, so that the results are
the same wherever and however fast a run ran), and the checksums it ran on.
"""

from __future__ import annotations

import time
from typing import Any

from batchd.sweep.plan import Run
from batchd.sweep.store import Record

# Summary fields that measure this machine's wall clock, not the schedule (matched
# on the last part of a dotted name): kept in the record's timing, out of the results.
WALL_CLOCK_FIELDS = frozenset(
    {
        "wall_seconds",
        "tuning_seconds_mean",
        "tuning_seconds_max",
        "search_seconds_mean",
        "search_seconds_max",
    }
)


def split_timing(summary: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Remove the wall-clock fields from ``summary`` (nested too); return them, dotted."""
    timing: dict[str, Any] = {}
    for key in list(summary):
        value = summary[key]
        if key in WALL_CLOCK_FIELDS:
            timing[prefix + key] = summary.pop(key)
        elif isinstance(value, dict):
            timing.update(split_timing(value, f"{prefix}{key}."))
    return timing


def plain(data: Any) -> Any:
    """Summary values as JSON reads them back (numpy scalars, tuples, sets)."""
    if isinstance(data, dict):
        return {str(k): plain(v) for k, v in data.items()}
    if isinstance(data, list | tuple | set):
        return [plain(v) for v in data]
    if hasattr(data, "item") and not isinstance(data, str | bytes):
        return data.item()
    return data


def run_one(run: Run) -> Record:
    """Replay ``run`` here (a worker process, or this one) and return its record."""
    from batchd.replay import ReplayOptions, run_replay

    began = time.perf_counter()
    trace = run.trace if run.trace_ref is None else run.trace_ref.local_path()
    machine = None if run.machine_ref is None else run.machine_ref.local_path()
    grid = run.grid
    opts = ReplayOptions(
        trace=trace,
        policy=None if grid else run.policy,
        params={} if grid else dict(run.params),
        machine=machine,
        nodes=run.nodes,
        shrink=run.replay_shrink(),
        perfect_estimates=run.perfect_estimates,
        kill=run.kill,
        first=run.first,
        double=run.double,
        seed=run.seed,
        grid=grid,
        grid_params=dict(run.params) if grid else {},
        records=False,
    )
    summary = plain(run_replay(opts).summary)
    timing = split_timing(summary)
    timing["seconds"] = round(time.perf_counter() - began, 4)
    return {
        "key": run.key(),
        "coordinates": run.coordinates(),
        "summary": summary,
        "batchd": run.version,
        "trace_sha256": run.trace_sha256(),
        "timing": timing,
    }
