"""Why a job that has not started waits, in Slurm's terms (squeue's REASON).

Computed when a job is shown, from what the daemon holds anyway: the job's holds,
dependencies and execution time, its queue's state, window and limits, its
reservation, and the plan of its machine. A job that can start on no nodes in
service waits for ``node_not_avail``; otherwise the job next in line on its machine
(first in its policy's order) waits for ``resources`` and the others, behind it,
for ``priority``, as Slurm says of the job at the head of its queue and the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from batchd.model.reservation import ResvState
from batchd.model.states import JobState
from batchd.server.records import JobRecord

if TYPE_CHECKING:
    from batchd.server.service import BatchService

WAITING_LETTERS = frozenset("QHW")


def held_reason(rec: JobRecord) -> str:
    """A held job: the user's hold first, then dependencies, then an operator's."""
    holds = rec.hold_types
    if "u" in holds:
        return "held_user"
    if "s" in holds and rec.depend:
        return "dependency"
    return "held_admin"


def queue_reason(svc: BatchService, rec: JobRecord) -> str | None:
    """What of its queue holds a queued job back: stopped, a closed window, a limit below
    its request (lowered after it was queued), a reservation not yet begun."""
    job = rec.job
    resv = svc.reservations.of_queue(job.queue)
    if resv is not None:
        return "reservation" if resv.state is not ResvState.RUNNING else None
    queue = next((q for q in svc.site.queues() if q.name == job.queue), None)
    if queue is None:
        return None
    if not queue.started:
        return "partition_down" if queue.enabled else "partition_inactive"
    is_open, _ = svc.scheduler.window_state(job.queue, svc.now)
    if not is_open:
        return "partition_down"
    if queue.max_walltime is not None and job.estimate > queue.max_walltime:
        return "partition_time_limit"
    if queue.max_nodes is not None and job.width > queue.max_nodes:
        return "partition_node_limit"
    return None


def next_in_line(svc: BatchService, machine: int) -> int | None:
    """The id of the job first in its policy's order on ``machine``."""
    return svc.scheduler.next_in_line(machine)


def pending_reason(svc: BatchService, rec: JobRecord, letter: str, est: int | None) -> str | None:
    """The reason of a job shown with state ``letter`` and planned start ``est``; None
    unless it waits (Q, H, W)."""
    if letter not in WAITING_LETTERS:
        return None
    if letter == "H":
        return held_reason(rec)
    if letter == "W":
        return "begin_time"
    job = rec.job
    if job.state is not JobState.QUEUED:  # an array's or a subjob's shown state
        return "priority"
    why = queue_reason(svc, rec)
    if why is not None:
        return why
    if est is None:
        return "node_not_avail"
    return "resources" if next_in_line(svc, job.machine) == job.id else "priority"
