"""The jobs a Slurm command sees, read from the daemon: every unfinished job, and the
finished ones for as long as Slurm's controller keeps them (``MinJobAge``, 300 s of the
daemon's clock), each array task as a job of its own.

squeue, scancel and scontrol share this view; :func:`rows` folds an array's pending
tasks into one row (``12_[4-10]``) as squeue prints them without ``-r``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ..hints import Any
from ..transport import Client
from .ids import JobSelector
from .states import ENDED_STATES, slurm_state

MIN_JOB_AGE = 300  # seconds a finished job stays visible (Slurm's MinJobAge default)
PAGE = 1000


@dataclass
class Listing:
    """The daemon's clock at the listing, and the jobs (array tasks, not arrays)."""

    now: int
    server: str
    jobs: list[dict[str, Any]] = field(default_factory=list)


def _pages(client: Client, query: dict[str, str]) -> Iterator[dict[str, Any]]:
    query = dict(query, limit=str(PAGE))
    while True:
        page: dict[str, Any] = client.get("/jobs", query)
        yield page
        cursor = page.get("next")
        if cursor is None:
            return
        query["after"] = str(cursor)


def _visible(job: dict[str, Any], now: int) -> bool:
    """Arrays are shown by their tasks; finished jobs only for MIN_JOB_AGE."""
    if job.get("array"):
        return False
    if slurm_state(job) in ENDED_STATES:
        ended = job.get("end_time")
        return ended is not None and now - int(ended) <= MIN_JOB_AGE
    return True


def list_jobs(
    client: Client,
    *,
    history: bool,
    user: str | None = None,
    queue: str | None = None,
) -> Listing:
    """Every job the daemon lists (finished ones too with ``history``), array tasks one
    by one; a single ``user`` or ``queue`` is filtered by the daemon."""
    query = {"subjobs": "true"}
    if history:
        query["history"] = "true"
    if user:
        query["user"] = user
    if queue:
        query["queue"] = queue
    out: Listing | None = None
    for page in _pages(client, query):
        if out is None:
            out = Listing(int(page["now"]), str(page["server"]))
        out.jobs.extend(j for j in page["jobs"] if _visible(j, out.now))
    assert out is not None
    return out


def find_jobs(client: Client, selectors: Iterable[JobSelector]) -> Listing:
    """The jobs (or array tasks) the selectors name, each job read once by its number."""
    out: Listing | None = None
    seen: set[int] = set()
    wanted = list(selectors)
    for sel in wanted:
        if sel.seq in seen:
            continue
        seen.add(sel.seq)
        query = {"subjobs": "true", "history": "true", "after": str(sel.seq - 1), "limit": "1"}
        page: dict[str, Any] = client.get("/jobs", query)
        if out is None:
            out = Listing(int(page["now"]), str(page["server"]))
        for job in page["jobs"]:
            if job.get("seq") == sel.seq and _visible(job, out.now):
                out.jobs.append(job)
    if out is None:
        info: dict[str, Any] = client.get("/server")
        out = Listing(int(info["now"]), str(info["name"]))
    out.jobs = [j for j in out.jobs if any(s.matches(j) for s in wanted)]
    return out


@dataclass
class Row:
    """One line of squeue: a job, an array task, or an array's pending tasks folded
    (``folded`` holds their indices, ``job`` the first of them)."""

    job: dict[str, Any]
    folded: list[int] | None = None


def rows(jobs: list[dict[str, Any]], one_per_task: bool) -> list[Row]:
    """The jobs as squeue's rows: each array's pending tasks on one row unless
    ``one_per_task`` (squeue -r); a row that would fold a single task shows it alone."""
    out: list[Row] = []
    pending_of: dict[int, Row] = {}
    for job in jobs:
        index = job.get("array_index")
        if one_per_task or index is None or slurm_state(job) != "PENDING":
            out.append(Row(job))
            continue
        row = pending_of.get(job["seq"])
        if row is None:
            row = pending_of[job["seq"]] = Row(job, [])
            out.append(row)
        assert row.folded is not None
        row.folded.append(int(index))
    for row in out:
        if row.folded is not None and len(row.folded) == 1:
            row.folded = None
    return out


def ranges(indices: list[int]) -> str:
    """Slurm's array task string: ``1-3,5``."""
    parts: list[str] = []
    ordered = sorted(indices)
    start = prev = ordered[0]
    for n in [*ordered[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ",".join(parts)
