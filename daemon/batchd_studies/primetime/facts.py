"""How a trace's requests sit against the calendar's windows (read once, no replay)."""

from __future__ import annotations

from typing import Any

from batchd_studies.framework.traces import TraceFile
from batchd_studies.primetime.replays import trace_calendar

DAY = 86400.0


def workload_facts(spec: TraceFile, first: int | None, nodes: int) -> dict[str, Any]:
    """Jobs, span, the shares of requests longer than the windows, the weekend demand."""
    calendar = trace_calendar(spec.path, nodes=nodes, first=first)
    jobs = calendar.requests
    slot = calendar.prime_slot
    weekday_non = 86400 - slot
    longest = calendar.longest_nonprime
    demand = sum(j.width * j.estimate for j in jobs) or 1
    used = sum(j.width * min(j.runtime, j.estimate) for j in jobs) or 1

    def share(limit: float) -> tuple[float, float]:
        big = [j for j in jobs if j.estimate > limit]
        node_time = sum(j.width * min(j.runtime, j.estimate) for j in big)
        return (len(big) / max(1, len(jobs)), node_time / used)

    span = max(j.submit for j in jobs) - min(j.submit for j in jobs) if jobs else 0
    weekend = longest / (7 * DAY)  # the share of the week the longest window takes
    weekend_only = share(weekday_non)[1] * used
    return {
        "jobs": len(jobs),
        "span_days": span / DAY,
        # node-time of requests longer than a weekday night over the weekend capacity
        "weekend_need": weekend_only / (nodes * max(1, span) * weekend) if weekend else None,
        "weekend_share": weekend,
        "slot": slot,
        "weekday_nonprime": weekday_non,
        "longest_nonprime": longest,
        "max_estimate": max((j.estimate for j in jobs), default=0),
        "over_30pct": share(0.3 * slot),
        "over_weekday": share(weekday_non),
        "over_longest": share(longest),
        "requested_node_seconds": demand,
        "timezone": spec.timezone or "UTC (the header names none)",
    }
