"""What the web page draws (``GET /plan``): every unfinished job as a compact row, the
waiting jobs in each machine's policy order with their planned starts, and each
machine's nodes, utilization, reservations and closed queue windows.

A :class:`PlanState` holds only plain tuples and lists so that two of them compare
cheaply: ``planfeed`` compares the state of a request with the last one to tell
whether anything changed, and which rows. Nothing here depends on the clock's now
between two events, except the utilization of the last day, which moves in whole
steps (``DAY_STEP``), and the queue windows, drawn from the start of the day before.

A deep queue makes a state of many rows: ``plan_state_steps`` makes it in steps of
``STEP_ROWS`` rows (the daemon answers other requests between them, ``planfeed``), from
the plan and the records as they were when it began; a job that changes meanwhile
shows as it was then or as it is, and the next state shows it as it is.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, TypeVar

from batchd.model.job import Job
from batchd.model.machine import node_runs
from batchd.model.reservation import Reservation, ResvState
from batchd.model.states import JobState
from batchd.model.times import NEVER
from batchd.server.records import JobRecord
from batchd.server.service import BatchService
from batchd.server.views import comment_of, waiting_comment

DAY = 86_400
DAY_STEP = 900  # the last day's utilization in steps of 15 emulated minutes
WINDOW_DAYS = 35  # closed queue windows are listed from the day before now, this many days on
STEP_ROWS = 1000  # rows made between two steps of plan_state_steps (about 1.5 ms)

# A job row (batchd.ui.data: JOB_FIELDS), with its reason as text until it is sent.
Alloc = tuple[tuple[int, ...], ...]
Row = tuple[int, str, int | None, int, int, int | None, int | None, Alloc | None, str | None]
Info = tuple[str, str, str]

# Node states, one letter a node (the Machine view's colours).
IDLE, ALLOCATED, RESERVED = "i", "a", "r"
OUT_OF_SERVICE = {"offline": "o", "down": "d"}
_QUEUED = JobState.QUEUED
T = TypeVar("T")

LETTERS = {"idle": IDLE, "allocated": ALLOCATED, "reserved": RESERVED, **OUT_OF_SERVICE}


@dataclass(slots=True)
class PlanState:
    """The plan at one moment, without the clock's now."""

    rows: dict[int, Row]
    info: dict[int, Info]
    order: list[list[int]]  # each machine's waiting jobs in its policy's order
    machines: list[dict[str, Any]]
    reservations: list[dict[str, Any]]

    def same_as(self, other: PlanState) -> bool:
        return (
            self.machines == other.machines
            and self.reservations == other.reservations
            and self.order == other.order
            and self.rows == other.rows
            and self.info == other.info
        )


def plan_stamp(svc: BatchService) -> tuple[object, ...]:
    """What the plan state can change with, read in constant time: while it is the same,
    so is the state. Every change of jobs, nodes, reservations and policies moves the
    scheduler's version (a new service after a failed save has a new scheduler and
    engine), records leave when their end is saved, and the clock's now counts in whole
    utilization steps, which also mark each new day of the queue windows."""
    return (
        svc.scheduler,
        svc.scheduler.version,
        svc.engine,
        len(svc.records),
        len(svc.arrays),
        len(svc.reservations.items),
        svc.now // DAY_STEP,
    )


def plan_state(svc: BatchService) -> PlanState:
    """The plan state now, made at once."""
    return run_through(plan_state_steps(svc))


def run_through(steps: Generator[None, None, T]) -> T:
    """The value of a generator of steps, run through without a pause."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            value: T = done.value
            return value


def plan_state_steps(svc: BatchService) -> Generator[None, None, PlanState]:
    """The plan state, made in steps of ``STEP_ROWS`` rows (a yield between two), of the
    machines' plans and the records as they are when it begins; each row shows its job as
    it is when the row is made (a job whose record left meanwhile as it was then, a job
    that left the queue meanwhile in its state now, in no order)."""
    rows: dict[int, Row] = {}
    info: dict[int, Info] = {}
    order: list[list[int]] = []
    records = svc.records
    plans = [svc.scheduler.plan_columns(m.index) for m in svc.engine.machines]
    recs = list(records.values())
    machines, reservations = machine_sections(svc), reservation_rows(svc)
    policies = [m.policy for m in svc.engine.machines]  # the widths they plan with
    left = STEP_ROWS
    for index, plan in enumerate(plans):
        waiting: list[int] = []
        for job, start in zip(*plan, strict=True):
            left -= 1
            if not left:
                left = STEP_ROWS
                yield
            seq = job.id
            rec = records.get(seq)
            if rec is None or seq in rows or job.state is not _QUEUED:
                continue  # a job that left the queue since has the row of its state now
            est = None if start == NEVER else start
            policy = policies[job.machine]
            shared = svc.site.machine[job.machine].shared
            reason = waiting_comment(svc.explain(job), rec.comment, est, shared)
            width, walltime = planned_shape(job, policy.planned_width(job))
            rows[seq] = (seq, "Q", index, width, walltime, est, None, None, reason)
            waiting.append(seq)
        order.append(waiting)
    for rec in recs:
        left -= 1
        if not left:
            left = STEP_ROWS
            yield
        seq = rec.seq
        if seq not in rows:
            rows[seq] = _other_row(svc, rec)
        job = rec.job
        info[seq] = (job.name, rec.owner, job.queue)
    return PlanState(rows, info, order, machines, reservations)


def planned_shape(job: Job, width: int) -> tuple[int, int]:
    """A waiting job's width and walltime in its policy's plan (a moldable policy may plan
    it on another width than it asked for, for the estimate its model gives there)."""
    if width == job.width or job.mold is None:
        return job.width, job.estimate
    return width, job.mold.estimate_on(width)


def _other_row(svc: BatchService, rec: JobRecord) -> Row:
    """A job not in any plan: running (its nodes), held, waiting for its time, or queued
    where no policy lists it."""
    job = rec.job
    state = job.state
    if state is JobState.RUNNING or state is JobState.EXITING:
        parts = rec.parts or [job]
        alloc = tuple((p.machine, *node_runs(p.units)) for p in parts)
        return (
            job.id,
            state.value,
            job.machine,
            job.width,
            job.estimate,
            job.start,
            None,
            alloc,
            None,
        )
    machine = svc.scheduler.assigned(job) if svc.scheduler.grid is not None else job.machine
    reason = comment_of(svc, rec, None)
    return (job.id, state.value, machine, job.width, job.estimate, None, None, None, reason)


def machine_sections(svc: BatchService) -> list[dict[str, Any]]:
    out = []
    now = svc.now
    for m, conf in zip(svc.engine.machines, svc.site.machine, strict=True):
        # The chart's rows are the engine's units: nodes, or cores when nodes are shared.
        units = svc.nodes.unit_states(svc.engine, m.index)
        states = "".join(LETTERS.get(state, "o") for state in units)
        busy = svc.metrics.busy[m.index]
        start, means = busy.series(now, DAY_STEP, DAY // DAY_STEP)
        out.append(
            {
                "name": conf.name,
                "nodes": conf.slots,
                "policy": svc.scheduler.choices[m.index].name,
                "params": dict(svc.scheduler.choices[m.index].params),
                "order": m.policy.order(),
                "states": states,
                "allocated": states.count(ALLOCATED),
                "day": {
                    "start": start,
                    "step": DAY_STEP,
                    "values": [round(v / conf.slots, 4) for v in means],
                },
                "windows": _closed_windows(svc, m.index, now),
                "decisions": [list(d) for d in svc.decisions[m.index].entries],
            }
        )
    return out


def _closed_windows(svc: BatchService, machine: int, now: int) -> list[dict[str, Any]]:
    """When each queue of the machine starts no job: the closed spans of its window, or
    all of the time for a stopped queue; from the start of the day before now on."""
    lo = now // DAY * DAY - DAY
    hi = lo + WINDOW_DAYS * DAY
    site = svc.site
    out: list[dict[str, Any]] = []
    for q in site.queues():
        if site.machine_index(q.machine) != machine:
            continue
        if not q.started:
            out.append({"queue": q.name, "why": "stopped", "closed": [[lo, hi]]})
            continue
        window = svc.scheduler.windows.get(q.name)
        if window is None:
            continue
        closed: list[list[int]] = []
        t: int | None = lo
        while t is not None and t < hi:
            change = window.next_change(t)
            stop = hi if change is None else min(change, hi)
            if not window.is_open(t):
                closed.append([t, stop])
            t = change
        out.append({"queue": q.name, "why": q.window_text(), "closed": closed})
    return out


def reservation_rows(svc: BatchService) -> list[dict[str, Any]]:
    return [
        _reservation_row(svc, r)
        for r in svc.reservations.items.values()
        if r.state is not ResvState.FINISHED
    ]


def _reservation_row(svc: BatchService, resv: Reservation) -> dict[str, Any]:
    return {
        "id": svc.resv_id(resv.id),
        "name": resv.name,
        "owner": resv.owner,
        "machine": resv.machine,
        "state": resv.state.value,
        "start": resv.start,
        "end": resv.end,
        "nodes": resv.width // svc.nodes.per_node[resv.machine],
        "runs": list(node_runs(resv.units)),
    }
