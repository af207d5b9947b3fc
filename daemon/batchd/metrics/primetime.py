"""The replay summary's ``primetime`` object (Lo and Mache's prime-time paper, sec. 4 "Performance metrics").

Jobs are prime jobs (small: within the prime limits, they may run at any time)
or non-prime jobs (large). For each class and for all jobs: average response
time, wait, slowdown (response / run time, as the paper defines it, run time at
least 1 s) and bounded slowdown (10 s). Utilization is by time: the share of
node-seconds used during prime hours, during non-prime hours, and overall.
The success rate is the share of jobs that complete (outcome ok) before the end
of the window they were queued for: the window in force at submission for a
prime job, the non-prime window in force then or next for a non-prime job.
The overflow rate is the share of non-prime jobs that were killed or requeued
at the end of non-prime time (also given as a share of all jobs).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from batchd.model.calendar import Period
from batchd.model.job import Job
from batchd.sched.policies.primetime import PrimeTime

CLASSES = ("prime", "nonprime")


def periods_between(gate: PrimeTime, t0: int, t1: int) -> list[tuple[int, int, Period]]:
    """The calendar's periods covering [t0, t1) as (start, end, period)."""
    out = []
    t = t0
    while t < t1:
        win, end = gate.period(t)
        stop = t1 if end is None else min(end, t1)
        out.append((t, stop, win))
        t = stop
    return out


def _class_stats(jobs: Sequence[Job]) -> dict[str, float | int]:
    if not jobs:
        return {"jobs": 0, "art": 0.0, "awt": 0.0, "slowdown": 0.0, "bounded_slowdown": 0.0}
    n = len(jobs)
    resp = [j.end - j.submit for j in jobs]
    wait = [j.start - j.submit for j in jobs]
    run = [j.end - j.start for j in jobs]
    return {
        "jobs": n,
        "art": sum(resp) / n,
        "awt": sum(wait) / n,
        "slowdown": sum(r / max(x, 1) for r, x in zip(resp, run, strict=True)) / n,
        "bounded_slowdown": sum(max(1.0, r / max(x, 10)) for r, x in zip(resp, run, strict=True))
        / n,
    }


def period_utilization(
    jobs: Sequence[Job], nodes: int, spans: Sequence[tuple[int, int, str]]
) -> dict[str, float]:
    """Node-time used in each period's hours over what they offer, within ``spans`` only."""
    starts = [a for a, _, _ in spans]
    busy = dict.fromkeys(CLASSES, 0)
    length = dict.fromkeys(CLASSES, 0)
    for a, b, win in spans:
        length[win] += b - a
    if not spans:
        return {**dict.fromkeys(CLASSES, 0.0), "all": 0.0}
    lo, hi = spans[0][0], spans[-1][1]
    for job in jobs:
        t, end = max(job.start, lo), min(job.end, hi)
        i = max(0, bisect_right(starts, t) - 1)
        while t < end and i < len(spans):
            _, b, win = spans[i]
            stop = min(b, end)
            if stop > t:
                busy[win] += job.width * (stop - t)
                t = stop
            i += 1
    total = sum(length.values())
    out = {w: busy[w] / (nodes * length[w]) if length[w] else 0.0 for w in CLASSES}
    out["all"] = sum(busy.values()) / (nodes * total) if total else 0.0
    return out


def _target_end(gate: PrimeTime, job: Job, cls: str) -> int | None:
    """The end of the window a job was queued for."""
    win, end = gate.period(job.submit)
    if cls == "prime" or win == "nonprime":
        return end
    if end is None:
        return None
    _, after = gate.period(end)  # the non-prime period that opens at ``end``
    return after


def primetime_summary(jobs: Sequence[Job], nodes: int, gate: PrimeTime) -> dict[str, Any]:
    ran = [j for j in jobs if j.start >= 0 and j.end >= j.start]
    by_class: dict[str, list[Job]] = {c: [] for c in CLASSES}
    for job in ran:
        by_class["nonprime" if gate.is_large(job) else "prime"].append(job)
    out: dict[str, Any] = {
        "limits": gate.limits(),
        "discipline": gate.params.discipline,
        "overflow_mode": gate.overflow,
    }
    if not ran:
        return out
    t0 = min(j.submit for j in ran)
    t1 = max(j.end for j in ran)
    spans = periods_between(gate, t0, max(t1, t0 + 1))
    util = period_utilization(ran, nodes, spans)
    for cls in CLASSES:
        out[cls] = {**_class_stats(by_class[cls]), "utilization": util[cls]}
    out["all"] = {**_class_stats(ran), "utilization": util["all"]}
    success: dict[str, list[int]] = {c: [0, 0] for c in CLASSES}
    for cls, members in by_class.items():
        for job in members:
            target = _target_end(gate, job, cls)
            window = "nonprime" if cls == "nonprime" else gate.period(job.submit)[0]
            success[window][1] += 1
            if job.result.outcome == "ok" and (target is None or job.end <= target):
                success[window][0] += 1
    done = sum(s[0] for s in success.values())
    out["success_rate"] = {
        **{w: (s[0] / s[1] if s[1] else 0.0) for w, s in success.items()},
        "all": done / len(ran),
    }
    killed = sum(1 for j in ran if j.result.outcome == "overflow")
    requeued = len(gate.requeues)
    overflowed = killed + sum(
        1 for j in by_class["nonprime"] if j.id in gate.requeues and j.result.outcome != "overflow"
    )
    large = len(by_class["nonprime"])
    out["overflow_rate"] = overflowed / large if large else 0.0
    out["overflow_share_all"] = overflowed / len(ran)
    out["overflow_killed"] = killed
    out["overflow_requeued"] = requeued
    out["jobs"] = {"prime": len(by_class["prime"]), "nonprime": large}
    return out
