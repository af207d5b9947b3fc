"""The chart of a finished replay (``batchd replay --gantt FILE.html``): every job on
the nodes it ran on, from its start to its end, in one self-contained page."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from batchd.model.job import Job
from batchd.ui.data import INFO_FIELDS, JOB_FIELDS
from batchd.ui.page import standalone_page

# Figures of the replay summary shown in the page's header.
SUMMARY_KEYS = ("jobs", "policy", "nodes", "utilization", "makespan", "awt", "art")


def _owner(job: Job) -> str:
    """A trace's user number as the daemon names it (user7), else the name given."""
    return f"user{job.user}" if job.user.isdigit() else job.user


def replay_chart(
    runs: Sequence[Job],
    machines: Sequence[tuple[str, int]],
    summary: dict[str, Any],
    *,
    title: str,
    origin: int = 0,
    timezone: str = "UTC",
) -> dict[str, Any]:
    """The page's data for finished jobs (each run of a multi-site job a part of it).

    ``origin`` is the trace's start date (seconds since the epoch; 0 when it has none,
    and times are then shown as offsets from the trace's start)."""
    parts: dict[int, list[Job]] = {}
    for run in runs:
        if run.start >= 0 and run.end >= 0:
            parts.setdefault(run.id, []).append(run)
    rows: list[list[Any]] = []
    info: list[list[Any]] = []
    last = origin
    for seq in sorted(parts):
        pieces = parts[seq]
        first = pieces[0]
        start = min(p.start for p in pieces) + origin
        end = max(p.end for p in pieces) + origin
        last = max(last, end)
        alloc = [[p.machine, *held] for p in pieces if (held := p.unit_runs())]
        width = sum(p.width for p in pieces)
        rows.append([seq, "F", first.machine, width, first.estimate, start, end, alloc, None])
        info.append([seq, first.name, _owner(first), first.queue])
    return {
        "mode": "replay",
        "server": title,
        "now": last,
        "version": "replay",
        "base": None,
        "caller": None,
        "clock": "replay",
        "speed": 0,
        "timezone": timezone,
        "utc_offset": 0,
        "relative": origin == 0,
        "fields": JOB_FIELDS,
        "info_fields": INFO_FIELDS,
        "machines": [_machine(name, nodes, summary.get("policy", "")) for name, nodes in machines],
        "node_names": [[str(i) for i in range(nodes)] for _, nodes in machines],
        "reservations": [],
        "reasons": [],
        "jobs": rows,
        "info": info,
        "gone": [],
        "order": [[] for _ in machines],
        "summary": {k: summary[k] for k in SUMMARY_KEYS if k in summary},
    }


def _machine(name: str, nodes: int, policy: str) -> dict[str, Any]:
    return {
        "name": name,
        "nodes": nodes,
        "policy": policy,
        "params": {},
        "order": "",
        "states": "i" * nodes,
        "allocated": 0,
        "day": {"start": 0, "step": 900, "values": []},
        "windows": [],
        "decisions": [],
    }


def write_gantt(path: str | Path, data: dict[str, Any]) -> None:
    Path(path).write_text(standalone_page(data), encoding="utf-8")
