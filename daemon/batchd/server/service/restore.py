"""Starting again from the state file: every job, reservation and node state back in place.

Only unfinished jobs come back into memory; finished ones stay in the history.

While the daemon was down (real-time clock) running jobs went on and ended at their
times, but nothing could start: the scheduler was down. Jobs whose window closed
while they ran overflowed then. Every change goes through the engine's transitions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import structlog

from batchd.engine import transitions
from batchd.execution.local import NEVER, RUNNING, Ended
from batchd.model.states import ACTIVE_STATES, JobState
from batchd.server.errors import ApiError
from batchd.server.records import JobRecord, resv_from_row
from batchd.server.service.queue_admin import effective_site, usable_changes
from batchd.server.service.run_rules import ended_outcome
from batchd.server.service.scheduler import GridChoice
from batchd.server.store import Saved

if TYPE_CHECKING:
    from batchd.server.service.facade import BatchService

log = structlog.get_logger("batchd")
DAMAGED = "the state file is damaged: restore it from a backup, or start with another --state"
# What reading a damaged row raises (a key missing, a value of the wrong type...).
ROW_FAULTS = (KeyError, TypeError, ValueError, AttributeError, IndexError)
REPLAY_KEYS = ("trace", "shrink", "seed", "origin", "cursor", "jobs")


def _fault(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"it has no {exc.args[0]!r}"
    return f"{type(exc).__name__}: {exc}"


def _records(rows: list[dict[str, Any]]) -> list[JobRecord]:
    """The saved unfinished jobs; a row that is not a job's is refused by its seq."""
    records = []
    for row in rows:
        try:
            records.append(JobRecord.from_row(row))
        except ROW_FAULTS as exc:
            raise ValueError(
                f"table jobs, row seq {row.get('seq')}: {_fault(exc)}; {DAMAGED}"
            ) from None
    return records


def check_rows(saved: Saved) -> None:
    """Refuse a saved reservation or trace replay that cannot be read, by where it is."""
    for row in saved.reservations:
        try:
            resv_from_row(row)
        except ROW_FAULTS as exc:
            raise ValueError(
                f"table reservations, row seq {row.get('seq')}: {_fault(exc)}; {DAMAGED}"
            ) from None
    replay = saved.meta.get("replay")
    if replay is not None and not (isinstance(replay, dict) and set(REPLAY_KEYS) <= set(replay)):
        raise ValueError(f"table meta, key replay: {replay!r} is not a trace replay; {DAMAGED}")


def check_identity(svc: BatchService, meta: dict[str, Any]) -> None:
    identity = meta.get("machine")
    if identity is not None and identity != svc.machine_identity():
        raise ValueError(
            f"the state was saved by server {identity['server']} for machines "
            f"{identity['machines']}; this config has {svc.machine_identity()['machines']} "
            f"(server {svc.server}): use that config, or another --state file"
        )


def saved_grid(svc: BatchService, meta: dict[str, Any]) -> None:
    """The grid structure a manager set live (saved), over the site file's [grid]."""
    sched = svc.scheduler
    saved = meta.get("grid")
    if sched.grid is None:
        if isinstance(saved, dict):
            raise ValueError(
                f"the state was saved by a daemon serving grid structure {saved.get('structure')}; "
                "this config has no [grid] table: use the grid's config, or another --state file"
            )
        return
    if not isinstance(saved, dict):
        return
    choice = GridChoice(str(saved["structure"]), dict(saved.get("params", {})))
    try:
        sched.use_grid(choice)
        svc.metrics.grid_structure(choice.structure)
    except ApiError as exc:
        raise ValueError(f"the grid saved in the state cannot run here: {exc.message}") from None


def saved_choices(svc: BatchService, meta: dict[str, Any]) -> None:
    """The policies the machines ran: per machine, or one for all (older state files)."""
    sched = svc.scheduler
    if sched.grid is not None:
        saved_grid(svc, meta)
        return
    if isinstance(meta.get("grid"), dict):
        saved_grid(svc, meta)
    chosen = meta.get("policies")
    if isinstance(chosen, dict):
        for i, m in enumerate(svc.site.machine):
            entry = chosen.get(m.name)
            if entry is not None:
                sched.use(i, sched.choose(i, entry["policy"], dict(entry.get("params", {}))))
    elif "policy" in meta:
        for i in range(len(svc.site.machine)):
            sched.use(i, sched.choose(i, meta["policy"], dict(meta.get("params", {}))))


@dataclass(frozen=True)
class Requeue:
    reason: str  # the metrics' requeue reason
    why: str  # the comment's words


def _restore_real(svc: BatchService, rec: JobRecord) -> tuple[int, str] | Requeue | None:
    """A job that ran for real before the restart: still running (None: back on its
    nodes), ended meanwhile ((end, outcome), its end read from the spool), or back in its
    queue (its process never started, it was being requeued, or its supervisor was lost
    and node_fail says requeue)."""
    runs = svc.runs
    engine = svc.engine
    job = rec.job
    found = runs.attach(rec) if runs is not None else NEVER
    svc.journal.touch(rec)
    if found == RUNNING:
        engine.restore_running(job)
        return None
    if found == NEVER:
        job.result.stopping, rec.requeue_why = "", None
        engine.restore_requeued(job)
        rec.etime = engine.now
        return Requeue("restart", "its process had not started when the daemon stopped")
    assert isinstance(found, Ended)
    outcome, back, comment = ended_outcome(rec, found.report, found.why, svc.site.server.node_fail)
    if back is not None:
        job.result.stopping = ""
        engine.restore_requeued(job)
        rec.etime = engine.now
        return Requeue(*back)
    if job.result.stopping == "end":
        outcome = job.result.outcome or outcome
    job.result.stopping = ""
    if comment is not None:
        svc.lifecycle.remember_comment(job.id, comment)
    end = int(found.report.end) if found.report is not None else engine.now
    return max(min(end, engine.now), job.start), outcome


def restore(svc: BatchService, saved: Saved) -> None:
    """Everything saved back in place; a ValueError if the state cannot be restored."""
    check_rows(saved)
    try:
        _restore(svc, saved)
    except (KeyError, TypeError, AttributeError, IndexError) as exc:
        raise ValueError(f"the saved state cannot be restored ({_fault(exc)}); {DAMAGED}") from None


def _restore(svc: BatchService, saved: Saved) -> None:
    meta = saved.meta
    check_identity(svc, meta)
    svc.journal.meta = dict(meta)
    _saved_queues(svc, meta)
    svc.history.duration = svc.history_duration(svc.site)
    svc.history.render_old()
    svc.lifecycle.seq = int(meta.get("seq", 0))
    svc.reservations.seq = int(meta.get("resv_seq", 0))
    svc.scheduler.switches = list(meta.get("switches", []))
    svc.started = int(meta.get("started", svc.started))
    saved_choices(svc, meta)
    engine = svc.engine
    now = engine.now
    saved_now = int(meta.get("now", now))
    if saved_now > svc.clock.now():
        raise ValueError(
            f"the state was saved at emulated time {saved_now}, after the clock's {svc.clock.now()}"
        )
    loaded = _records(saved.jobs)  # the unfinished ones
    records = [r for r in loaded if r.array is None]
    for rec in records:
        svc.records[rec.seq] = rec
    # Job arrays, with their subjobs that were saved (the others are made again below).
    svc.array_jobs.restore([r for r in loaded if r.array is not None])
    deps = svc.dependencies
    met: list[JobRecord] = []  # held for dependencies none of which is pending now
    for rec in records:
        # A state saved before dependencies were dropped as they were met lists all.
        had = bool(rec.depend)
        rec.depend = deps.pending(rec.depend)
        deps.index(rec)
        if had and not rec.depend and rec.state is JobState.HELD and "s" in rec.hold_types:
            met.append(rec)
    running = [r for r in records if r.state in ACTIVE_STATES]
    ended: list[tuple[JobRecord, int, str]] = []
    requeued: list[JobRecord] = []
    requeued_real: list[tuple[JobRecord, str, str]] = []
    # Open reservations first: the jobs running inside them run on their nodes.
    svc.reservations.restore(engine, saved.reservations, len(engine.machines))
    closed = svc.reservations.closed_queues()
    for rec in running:
        job = rec.job
        if job.external:
            back = _restore_real(svc, rec)
            if isinstance(back, Requeue):
                requeued_real.append((rec, back.reason, back.why))
            elif back is not None:
                ended.append((rec, *back))
            continue
        killed = job.runtime > job.estimate
        end = job.start + (job.estimate if killed else max(job.runtime, 0))
        policy = engine.machines[job.machine].policy
        closes = policy.deadline(job)
        resv_end = closed.get(job.queue)
        if resv_end is not None and resv_end < end:
            ended.append((rec, resv_end, "resv_end"))  # its reservation ended meanwhile
            svc.journal.touch(rec)
        elif closes is not None and closes[0] < end and closes[0] <= now:
            at, action = closes  # its window closed while the daemon was down: overflow then
            if action == "kill":
                ended.append((rec, at, "overflow"))
            else:
                engine.restore_requeued(job)
                rec.etime = at
                requeued.append(rec)
            svc.journal.touch(rec)
        elif end <= now:
            ended.append((rec, end, "walltime" if killed else "ok"))
        elif rec.parts:
            for part in rec.parts:  # a multi-site job: every part on its machine and nodes
                if part.state is JobState.RUNNING:
                    engine.restore_running(part)
        else:
            engine.restore_running(job)
    svc.nodes.restore(engine, saved.nodes)
    svc.reservations.restore_confirmed(engine)
    waiting = sorted(
        (r for r in records if r.state is JobState.QUEUED), key=lambda r: (r.job.submit, r.seq)
    )
    layer = svc.scheduler.layer
    for rec in waiting:
        if rec.job.queue in closed:
            continue  # deleted below: its reservation ended while the daemon was down
        if layer is not None:
            # Back in the grid layer with the machine it had been given, if any.
            layer.resume(rec.job, rec.assigned)
        else:
            engine.enqueue(rec.job)
    svc.lifecycle.arm_waiting()
    for rec, at, outcome in ended:
        transitions.parts_ended(rec.parts, at, outcome)
        engine.restore_finished(rec.job, at, outcome)
    for rec in requeued:
        svc.metrics.job_requeued(rec.job, "overflow", now)
    for rec, reason, why in requeued_real:
        svc.metrics.job_requeued(rec.job, reason, now)
        rec.comment = f"Requeued: {why}"
        svc.events.said(rec, f"Job requeued: {why}")
    for rec in met:
        svc.lifecycle.release_met(rec)
    svc.array_jobs.fill_all()
    for resv in svc.reservations.items.values():
        if resv.queue in closed:
            svc.control.reservation_closed(resv, [])
    engine.instant(now)
    observe = svc.metrics.tally.observe
    for rec in records:
        job = rec.job
        observe(rec.seq, job.queue, rec.state.value, job.width * job.estimate, rec.owner)
    svc.count_allocated()
    log.info(
        "state_restored",
        jobs=len(records),
        arrays=len(svc.arrays),
        running=len(running),
        queued=len(waiting),
        overflow=len(requeued) + sum(outcome == "overflow" for _, _, outcome in ended),
        history=svc.history.count,
        now=engine.now,
    )
    svc.save()


def _saved_queues(svc: BatchService, meta: dict[str, Any]) -> None:
    """The queues as managers left them, over the site file's."""
    svc.queue_admin.changes = usable_changes(svc.file_site, meta.get("queue_changes"))
    if svc.queue_admin.changes:
        svc.use_site(effective_site(svc.file_site, svc.queue_admin.changes))
