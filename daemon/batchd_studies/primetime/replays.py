"""Everything the prime-time study asks of the core, behind plain signatures.

The replay itself, the ``primetime`` policy built as a replay builds it (the
trace's clock and the machine, ``batchd.replay.trace_policy``) with its calendar
periods and its non-prime class, and the window metrics of
``batchd.metrics.primetime``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from batchd_studies.framework.results import as_plain

POLICY = "primetime"


def is_discipline(name: str) -> bool:
    """Whether the ``primetime`` policy accepts ``name`` as its discipline."""
    from batchd.replay import policy_error

    return policy_error(POLICY, {"discipline": name}) is None


def _gate(params: Mapping[str, str], workload: Any, nodes: int) -> Any:
    """A ``primetime`` policy set up like the replay's: the trace's clock and machine."""
    from batchd.replay import trace_policy

    return trace_policy(POLICY, params, workload, nodes)


def replay(
    trace: str, params: Mapping[str, str], *, nodes: int, first: int | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Replay ``trace`` with ``primetime``: the summary (plain JSON) and ``span_metrics``."""
    from batchd.replay import ReplayOptions, run_replay

    opts = ReplayOptions(trace=trace, policy=POLICY, params=dict(params), nodes=nodes, first=first)
    result = run_replay(opts)
    summary: dict[str, Any] = as_plain(result.summary)
    return summary, span_metrics(result.jobs, result.policy, nodes)


def span_metrics(jobs: Sequence[Any], gate: Any, nodes: int) -> dict[str, Any]:
    """What the summary's whole-schedule view hides when a queue does not keep up.

    The summary measures from the first submission to the last end. When large jobs
    pile up, the schedule runs on long after the last submission (the drain), with
    prime hours idle. Here: the offered load, the backlog at the last submission, the
    drain, and the prime/non-prime utilization over the submission span only.
    ``gate`` is the replay's ``primetime`` policy (its calendar on the trace's clock).
    """
    from batchd.metrics.primetime import period_utilization, periods_between

    if not jobs:
        return {}
    t0 = min(j.submit for j in jobs)
    t1 = max(j.submit for j in jobs)
    ran = [j for j in jobs if j.start >= 0 and j.end >= j.start]
    last_end = max((j.end for j in ran), default=t1)
    span = max(1, t1 - t0)
    util = period_utilization(ran, nodes, periods_between(gate, t0, t0 + span))
    by_window: dict[str, list[Any]] = {"prime": [], "nonprime": []}
    for job in ran:
        by_window[gate.period(job.submit)[0]].append(job)
    return {
        "submit_span": t1 - t0,
        "load": sum(j.width * j.runtime for j in jobs) / (nodes * span),
        "backlog_at_last_submit": sum(1 for j in jobs if j.start < 0 or j.start > t1),
        "drain": max(0, last_end - t1),
        "utilization_submit_span": util,
        "by_submit_window": {w: _response_stats(js) for w, js in by_window.items()},
    }


def _response_stats(jobs: Sequence[Any]) -> dict[str, float | int]:
    """Jobs, mean response time and mean slowdown (run time at least 1 s) of some jobs."""
    if not jobs:
        return {"jobs": 0, "art": 0.0, "slowdown": 0.0}
    resp = [j.end - j.submit for j in jobs]
    slowdown = sum(r / max(j.end - j.start, 1) for r, j in zip(resp, jobs, strict=True))
    return {"jobs": len(jobs), "art": sum(resp) / len(jobs), "slowdown": slowdown / len(jobs)}


@dataclass(frozen=True)
class Request:
    """A job of the trace as submitted: when, how wide, how long it ran and asked for."""

    submit: int
    width: int
    runtime: int
    estimate: int


@dataclass(frozen=True)
class TraceCalendar:
    """A trace's jobs and the calendar's windows on its clock (no replay)."""

    requests: list[Request]
    prime_slot: int  # seconds of a weekday's prime slot
    longest_nonprime: int  # seconds of the longest non-prime window (the weekend)


def trace_calendar(trace: str, *, nodes: int, first: int | None) -> TraceCalendar:
    """Read the jobs of ``trace`` as a replay at ``nodes`` would, and its calendar."""
    from batchd.workload.loader import load_swf

    workload = load_swf(trace, nodes=nodes, first=first)
    gate = _gate({}, workload, nodes)
    requests = [Request(j.submit, j.width, j.runtime, j.estimate) for j in workload.jobs]
    return TraceCalendar(requests, gate.calendar.prime_slot_seconds(), gate.longest(gate.large, 0))
