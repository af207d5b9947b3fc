"""What must hold after a crash and a restart, read through the API (``GET /jobs?history=true``).

:class:`Seen` gathers what clients were told before the crash: acknowledged job ids,
submissions whose answer was lost, starts, ends and the latest emulated time.
:func:`violations` compares a listing after the restart with it and returns one line
per broken rule (empty when all hold); :meth:`Seen.learn` then takes the listing in.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

Job = dict[str, Any]


@dataclass
class Seen:
    acked: dict[str, str] = field(default_factory=dict)  # job id -> the name it was given
    unacked: set[str] = field(default_factory=set)  # names of submissions without an answer
    started: dict[str, tuple[int, list[str]]] = field(default_factory=dict)  # id -> stime, nodes
    ended: dict[str, tuple[int, str]] = field(default_factory=dict)  # id -> end_time, outcome
    now: int = 0  # the latest emulated time an answer carried

    def learn(self, jobs: list[Job], now: int) -> None:
        """Take in a listing (before a crash, or checked after a restart)."""
        self.now = max(self.now, now)
        for j in jobs:
            if j["stime"] is not None:
                self.started.setdefault(j["id"], (j["stime"], j["exec_host"]))
            if j["state"] == "F" and j["end_time"] is not None:
                self.ended.setdefault(j["id"], (j["end_time"], j["outcome"]))


def due(job: Job) -> int:
    """When a started job ends: at its runtime, or killed at its walltime."""
    walltime = int(job["walltime"])
    runtime = walltime if job["runtime"] is None else int(job["runtime"])
    return int(job["stime"]) + min(runtime, walltime)


def node_overlaps(jobs: list[Job], now: int) -> list[str]:
    """Nodes held by two jobs at once, over the whole history (running jobs until ``now``)."""
    spans: dict[str, list[tuple[int, int, str]]] = {}
    for j in jobs:
        if j["stime"] is None:
            continue
        end = j["end_time"] if j["end_time"] is not None else now
        for node in j["exec_host"]:
            spans.setdefault(node, []).append((j["stime"], end, j["id"]))
    out = []
    for node, items in spans.items():
        items.sort()
        for (_s1, e1, a), (s2, _e2, b) in zip(items, items[1:], strict=False):
            if s2 < e1:
                out.append(f"{node} holds {a} until {e1} and {b} from {s2}")
    return out


def violations(
    jobs: list[Job], now: int, seen: Seen, trace: list[str], cursors: tuple[int, int]
) -> list[str]:
    """Broken rules in a listing at emulated time ``now`` after a restart.

    ``trace`` is the replayed trace's job names in order, ``cursors`` how many jobs the
    daemon said it had injected just before and just after the listing (the feed goes
    on meanwhile); every job whose name the clients did not give is a trace job.
    """
    out: list[str] = []
    ids = Counter(j["id"] for j in jobs)
    out += [f"{jid} listed {n} times" for jid, n in ids.items() if n > 1]
    seqs = sorted(j["seq"] for j in jobs)
    if seqs != list(range(1, len(seqs) + 1)):
        out.append(f"job numbers are not 1..{len(seqs)}: a job was lost or numbered twice")
    by_id = {j["id"]: j for j in jobs}
    for jid, name in seen.acked.items():
        job = by_id.get(jid)
        if job is None:
            out.append(f"acknowledged job {jid} ({name}) is lost")
        elif job["name"] != name:
            out.append(f"acknowledged job {jid} is {job['name']!r}, not {name!r}")
    mine = set(seen.acked.values()) | seen.unacked
    names = Counter(j["name"] for j in jobs if j["name"] in mine)
    out += [f"submission {name} saved {n} times" for name, n in names.items() if n > 1]
    injected = [j["name"] for j in sorted(jobs, key=lambda j: j["seq"]) if j["name"] not in mine]
    if injected != trace[: len(injected)] or not cursors[0] <= len(injected) <= cursors[1]:
        dup = [name for name, n in Counter(injected).items() if n > 1]
        out.append(
            f"trace jobs: {len(injected)} saved, not the trace's first {cursors[0]}"
            f"..{cursors[1]} in order" + (f"; injected twice: {dup[:5]}" if dup else "")
        )
    if now < seen.now:
        out.append(f"the clock went back from {seen.now} to {now}")
    for j in jobs:
        out += job_violations(j, now, seen)
    out += node_overlaps(jobs, now)
    return out


def job_violations(j: Job, now: int, seen: Seen) -> list[str]:
    jid, stime, end = j["id"], j["stime"], j["end_time"]
    out = []
    if j["ctime"] > now:
        out.append(f"{jid} submitted at {j['ctime']}, after now {now}")
    if stime is not None:
        if stime < j["ctime"]:
            out.append(f"{jid} started at {stime}, before its submission at {j['ctime']}")
        if len(j["exec_host"]) != j["nodes"]:
            out.append(f"{jid} asked for {j['nodes']} nodes and holds {j['exec_host']}")
    if j["state"] == "R":
        if stime is None:
            out.append(f"{jid} runs without a start time")
        elif due(j) <= now:
            out.append(f"{jid} runs at {now}, past its end at {due(j)}")
    if j["state"] == "F" and stime is not None and end != due(j):
        out.append(f"{jid} ended at {end}, not at {due(j)} ({j['outcome']})")
    before = seen.started.get(jid)
    if before is not None and before != (stime, j["exec_host"]):
        out.append(f"{jid} started at {before[0]} on {before[1]}, now {stime} on {j['exec_host']}")
    ended = seen.ended.get(jid)
    if ended is not None and ended != (end, j["outcome"]):
        out.append(f"{jid} ended at {ended[0]} ({ended[1]}), now {end} ({j['outcome']})")
    return out
