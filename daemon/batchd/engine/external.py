"""Jobs that really run: the engine never waits on their processes.

An external job (``Job.external``) has no end event of its own: whoever runs its
processes reports the end (``Engine.exited``), at a time the engine learns as it
learns a deletion. Ending such a job early (deleted, signalled, its window or
reservation closed, its node failed) or putting it back in its queue cannot happen
at once either: the job goes to EXITING, keeps its nodes, and the engine's
``on_stop`` listeners are told to stop its processes; when they have ended, the
report finishes the job with the outcome asked for, or requeues it. So no node is
given to another job while a process of the last one may still run on it, as a
PBS job in state E keeps its resources until its MoM reports it gone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from batchd.model.job import Job
from batchd.model.states import JobState, change_state

if TYPE_CHECKING:
    from batchd.engine.core import Engine
    from batchd.engine.reservations import ResvRun

END, REQUEUE = "end", "requeue"


def stop(engine: Engine, job: Job, how: str, outcome: str, run: ResvRun | None) -> None:
    """Ask for an external job's processes to stop; it ends (``how`` END, with ``outcome``)
    or goes back to its queue (REQUEUE) when they have. A job already stopping keeps the
    first request, but a requeue asked of a job stopping to end is an end."""
    if job.state is JobState.EXITING:
        return
    if job.state is not JobState.RUNNING:
        raise ValueError(f"job {job.id} is not running")
    change_state(job, JobState.EXITING)
    job.result.stopping = how
    if how == END:
        job.result.outcome = outcome
    if run is not None:
        engine.stop_runs[id(job)] = run
    for hook in engine.on_stop:
        hook(job)


def exited(engine: Engine, job: Job, outcome: str, end: int | None) -> None:
    """The processes of an external job ended at ``end`` (at most now): a job being stopped
    gets what was asked (its outcome, or back to its queue), one that ended on its own
    finishes with ``outcome``."""
    if not job.external:
        raise ValueError(f"job {job.id} does not run for real: its end is the engine's")
    if job.state not in (JobState.RUNNING, JobState.EXITING):
        raise ValueError(f"job {job.id} is not running")
    run = engine.stop_runs.pop(id(job), None)
    if job.result.stopping == REQUEUE:
        job.result.stopping = ""
        engine.requeue_now(job)
        return
    if job.result.stopping == END:
        outcome = job.result.outcome or outcome
    job.result.stopping = ""
    when = engine.now if end is None else max(min(end, engine.now), job.start)
    engine.finish(job, outcome, run, when)
