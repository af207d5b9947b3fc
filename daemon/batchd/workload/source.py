"""Where a replay's jobs come from: an SWF trace file or the built-in synthetic workload.

``TRACE`` is a path to an SWF file (plain or gzip) or ``synthetic[:N]``. The same
function serves ``batchd replay`` and the daemon's ``--replay``, so both read a
trace the same way.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from pathlib import Path

from batchd.model.calendar import CalendarError, resolve_timezone
from batchd.workload.double import double_jobs
from batchd.workload.loader import SKIP_REASONS, Workload, load_swf, shrink_submits
from batchd.workload.synthetic import synthetic_header, synthetic_jobs

SYNTHETIC = "synthetic"


class TraceError(ValueError):
    """A trace argument or option that cannot be used."""


def synthetic_count(trace: str) -> int | None:
    """N of ``synthetic[:N]`` (1000 for plain ``synthetic``); None for a file."""
    if trace == SYNTHETIC:
        return 1000
    if trace.startswith(SYNTHETIC + ":"):
        text = trace.split(":", 1)[1]
        if not text.isdigit() or int(text) <= 0:
            raise TraceError(f"trace {trace!r}: expected synthetic:N with N a positive integer")
        return int(text)
    return None


def load_trace(
    trace: str,
    nodes: int,
    *,
    shrink: float = 1.0,
    first: int | None = None,
    perfect_estimates: bool = False,
    seed: int = 0,
    double: bool = False,
    records: bool = True,
) -> Workload:
    """The jobs of ``trace`` for a machine of ``nodes`` nodes.

    ``double``: every job twice (:mod:`batchd.workload.double`), after ``first`` and
    ``shrink``; the skip counts double too (each skipped record stands for two jobs).
    ``records``: jobs of an SWF file carry their fields for ``write_swf`` (see
    :func:`~batchd.workload.loader.load_swf`).
    """
    workload = _load(trace, nodes, shrink, first, perfect_estimates, seed, records)
    if double:
        workload.jobs = double_jobs(workload.jobs)
        workload.skipped = {reason: 2 * n for reason, n in workload.skipped.items()}
    return workload


def _load(
    trace: str,
    nodes: int,
    shrink: float,
    first: int | None,
    perfect_estimates: bool,
    seed: int,
    records: bool,
) -> Workload:
    if shrink <= 0:
        raise TraceError(f"--shrink must be > 0, got {shrink}")
    if first is not None and first <= 0:
        raise TraceError(f"--first must be a positive integer, got {first}")
    count = synthetic_count(trace)
    if count is not None:
        if first is not None:
            count = min(count, first)
        jobs = synthetic_jobs(count, nodes=nodes, seed=seed)
        if perfect_estimates:
            for j in jobs:
                j.estimate = j.runtime
        if shrink != 1.0:
            shrink_submits(jobs, shrink)
        return Workload(
            jobs=jobs,
            skipped=dict.fromkeys(SKIP_REASONS, 0),
            header=synthetic_header(count, nodes, seed),
            source=trace,
        )
    if not Path(trace).exists():
        raise TraceError(f"{trace}: no such trace file")
    return load_swf(
        trace,
        nodes=nodes,
        first=first,
        perfect_estimates=perfect_estimates,
        shrink=shrink,
        records=records,
    )


def trace_clock(workload: Workload) -> tuple[int, dt.tzinfo | None]:
    """When the trace's time 0 was (UnixStartTime) and its time zone (TimeZoneString).

    A zone the header names but this system does not know counts as none. A start that
    is not a time on the clock raises SWFError (the loader refuses such a trace).
    """
    header = workload.header
    origin = (header.unix_start if header is not None else None) or 0
    zone = header.value("TimeZoneString") if header is not None else None
    tz = None
    if zone:
        with contextlib.suppress(CalendarError):
            tz = resolve_timezone(zone)
    return origin, tz
