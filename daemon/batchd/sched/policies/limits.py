"""Run limits and the scheduling switch: the gate that decides which waiting jobs may start.

PBS's ``max_run`` and ``max_user_run``, on a queue and on the server, cap how many
jobs run at once (in the queue, of one user in the queue, in all, of one user in
all); the server's ``scheduling`` attribute, False, starts no job at all while
running jobs go on. ``LimitGate`` wraps a policy and offers it only the waiting
jobs that could start under the limits now: walking the waiting jobs in submission
order (higher priority first), each one that still fits under every limit (counting the running jobs and
the jobs already offered) is offered, the others are held back. The policy plans
and starts only what it is offered, so every policy, in order or backfilling,
planned or not, honours the limits the same way, for its starts and its plan alike;
a held job has no planned start and ``explain`` says why, in PBS's words.

The counts of running jobs are shared by the gates of all machines (``RunBook``),
as the server's limits count jobs on every machine. With no limit set and
scheduling on, the gate passes everything through and walks nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.sched.core.outline import PlanOutline
from batchd.sched.core.policy import (
    MachineView,
    Overflow,
    Placement,
    Policy,
    WrappingPolicy,
)


@dataclass(frozen=True)
class RunCaps:
    """How many jobs may run at once in one scope, in all and per user (None: no cap)."""

    max_run: int | None = None
    max_user_run: int | None = None

    @property
    def capped(self) -> bool:
        return self.max_run is not None or self.max_user_run is not None


@dataclass(frozen=True)
class RunLimits:
    """The limits in force: the server's, each queue's, and whether scheduling is on."""

    server: RunCaps = RunCaps()
    queues: Mapping[str, RunCaps] = field(default_factory=dict)
    scheduling: bool = True

    @property
    def active(self) -> bool:
        """Whether the gate has anything to do (else it passes every job through)."""
        return (
            not self.scheduling or self.server.capped or any(c.capped for c in self.queues.values())
        )


NO_LIMITS = RunLimits()
SCHEDULING_OFF = RunLimits(scheduling=False)


class RunBook:
    """The running jobs the limits count, shared by the gates of every machine."""

    def __init__(self) -> None:
        self.total = 0
        self.by_user: Counter[str] = Counter()
        self.by_queue: Counter[str] = Counter()
        self.by_queue_user: Counter[tuple[str, str]] = Counter()
        self.running: set[int] = set()
        self.changes = 0  # counts every job added or removed

    def add(self, job: Job) -> None:
        if job.id in self.running:
            return
        self.changes += 1
        self.running.add(job.id)
        self.total += 1
        self.by_user[job.user] += 1
        self.by_queue[job.queue] += 1
        self.by_queue_user[(job.queue, job.user)] += 1

    def remove(self, job: Job) -> None:
        if job.id not in self.running:
            return
        self.changes += 1
        self.running.discard(job.id)
        self.total -= 1
        self.by_user[job.user] -= 1
        self.by_queue[job.queue] -= 1
        self.by_queue_user[(job.queue, job.user)] -= 1


# The comments PBS's scheduler gives a job a run limit holds back (after "Not Running: ").
QUEUE_LIMIT = "Queue {queue} job limit has been reached."
QUEUE_USER_LIMIT = "User has reached queue {queue} running job limit."
SERVER_LIMIT = "Server job limit has been reached."
SERVER_USER_LIMIT = "User has reached server running job limit."
PAUSED = "Scheduling is turned off (server attribute scheduling = False)"


class Admitter:
    """One walk over the waiting jobs: who may be offered, and why the others may not."""

    def __init__(self, limits: RunLimits, book: RunBook) -> None:
        self.limits = limits
        self.book = book
        self.total = 0
        self.by_user: Counter[str] = Counter()
        self.by_queue: Counter[str] = Counter()
        self.by_queue_user: Counter[tuple[str, str]] = Counter()

    def refusal(self, job: Job) -> str | None:
        """Why ``job`` may not be offered on top of those already admitted, or None."""
        q, u = job.queue, job.user
        book = self.book
        caps = self.limits.queues.get(q)
        if caps is not None:
            if caps.max_run is not None and book.by_queue[q] + self.by_queue[q] >= caps.max_run:
                return QUEUE_LIMIT.format(queue=q)
            if (
                caps.max_user_run is not None
                and book.by_queue_user[(q, u)] + self.by_queue_user[(q, u)] >= caps.max_user_run
            ):
                return QUEUE_USER_LIMIT.format(queue=q)
        server = self.limits.server
        if server.max_run is not None and book.total + self.total >= server.max_run:
            return SERVER_LIMIT
        if (
            server.max_user_run is not None
            and book.by_user[u] + self.by_user[u] >= server.max_user_run
        ):
            return SERVER_USER_LIMIT
        return None

    def admit(self, job: Job) -> None:
        self.total += 1
        self.by_user[job.user] += 1
        self.by_queue[job.queue] += 1
        self.by_queue_user[(job.queue, job.user)] += 1


def by_submission(job: Job) -> tuple[int, int, int]:
    """PBS's order for limits: higher qsub -p priority first, then first come."""
    return (-job.priority, job.submit, job.id)


def narrowest(job: Job) -> int:
    """The fewest units the job can start on (a moldable job's low end)."""
    return job.mold.low if job.mold is not None else job.width


class Walked:
    """What a walk over the waiting jobs depended on, and the counts it left."""

    __slots__ = ("limits", "book", "free", "withdrawn", "admitter", "key")

    def __init__(self, limits: RunLimits, book: int, free: int, withdrawn: int) -> None:
        self.limits = limits
        self.book = book  # the RunBook's count of changes
        self.free = free
        self.withdrawn = withdrawn  # the gate's count of jobs withdrawn and resumed
        self.admitter: Admitter | None = None
        self.key: tuple[int, int, int] | None = None  # the last job walked (None: none)

    def stands(self, now: Walked) -> bool:
        return (
            now.book == self.book
            and now.free == self.free
            and now.withdrawn == self.withdrawn
            and now.limits == self.limits
        )


class LimitGate(WrappingPolicy):
    """``inner`` offered only the jobs the run limits let start (see the module doc)."""

    def __init__(
        self, inner: Policy, limits: Callable[[], RunLimits], book: RunBook | None = None
    ) -> None:
        self.name = inner.name
        self.inner = inner
        self.machine = inner.machine
        self.serves_in_order = inner.serves_in_order
        self.wakes = inner.wakes
        self.grid_wide = inner.grid_wide
        self.limits = limits
        self.book = book if book is not None else RunBook()
        self.held: dict[int, Job] = {}  # waiting, not offered to the inner policy now
        self.why: dict[int, str] = {}  # held job id -> the limit that holds it
        self.paused = False  # scheduling was off at the last pass
        self.arrived: list[Job] = []  # jobs held since the last walk, not walked yet
        self.withdrawn = 0  # counts the jobs withdrawn and resumed
        self.walked: Walked | None = None

    # -- admission ----------------------------------------------------------------------
    def _gate(self, view: MachineView, limits: RunLimits) -> None:
        """Offer the jobs the limits admit now, take back those they do not."""
        if not limits.active:
            self._release_all(view)
            return
        arrived, self.arrived = self.arrived, []
        stand = Walked(limits, self.book.changes, view.free, self.withdrawn)
        last = self.walked
        if last is not None and last.admitter is not None and last.stands(stand):
            # Nothing the walk depends on changed, and jobs at most arrived: a walk of
            # the whole queue would decide the earlier jobs as the last one did, with
            # the same counts after them; only the newcomers are walked, if they come last.
            arrived.sort(key=by_submission)
            if not arrived:
                return
            if last.key is None or by_submission(arrived[0]) > last.key:
                self._walk(view, arrived, set(), last.admitter, self.why)
                last.key = by_submission(arrived[-1])
                return
        admitter = Admitter(limits, self.book)
        offered = {j.id for j in self.inner.waiting()}
        waiting = sorted([*self.inner.waiting(), *self.held.values()], key=by_submission)
        why: dict[int, str] = {}
        self._walk(view, waiting, offered, admitter, why)
        self.why = why
        stand.admitter = admitter
        stand.key = by_submission(waiting[-1]) if waiting else None
        self.walked = stand

    def _walk(
        self,
        view: MachineView,
        waiting: list[Job],
        offered: set[int],
        admitter: Admitter,
        why: dict[int, str],
    ) -> None:
        """Each of ``waiting`` (in submission order) offered or held back."""
        free = view.free
        for job in waiting:
            refused = admitter.refusal(job)
            if refused is None:
                # A job wider than the free nodes cannot start in this pass, whatever the
                # policy: it is offered (to be planned, and to hold its place) without
                # taking one of the slots the limits leave to the jobs behind it.
                if narrowest(job) <= free:
                    admitter.admit(job)
                if job.id not in offered:
                    del self.held[job.id]
                    self.inner.job_submitted(view, job)
            else:
                why[job.id] = refused
                if job.id in offered:
                    self.inner.withdraw(view, job)
                    self.held[job.id] = job

    def _release_all(self, view: MachineView) -> None:
        """No limit in force: every held job goes to the inner policy (in submission order)."""
        self.arrived.clear()
        self.walked = None
        for job in sorted(self.held.values(), key=by_submission):
            self.inner.job_submitted(view, job)
        self.held.clear()
        self.why.clear()

    # -- the policy ---------------------------------------------------------------------
    def job_submitted(self, view: MachineView, job: Job) -> None:
        self.book.remove(job)  # back from a start that did not happen (unplaced), if so
        if self.held or self.limits().active:
            self.held[job.id] = job  # offered, or not, at the next pass
            self.arrived.append(job)
        else:
            self.inner.job_submitted(view, job)

    def job_resumed(self, view: MachineView, job: Job) -> None:
        self.withdrawn += 1
        self.book.add(job)
        self.inner.job_resumed(view, job)

    def schedule(self, view: MachineView) -> list[Placement]:
        limits = self.limits()
        self.paused = not limits.scheduling
        if self.paused:
            return []
        if self.held or limits.active:
            self._gate(view, limits)
        due = self.inner.schedule(view)
        for placement in due:
            self.book.add(placement.job)
        return due

    def job_ended(self, view: MachineView, job: Job) -> None:
        self.book.remove(job)
        self.inner.job_ended(view, job)

    def withdraw(self, view: MachineView, job: Job) -> None:
        self.withdrawn += 1
        if self.held.pop(job.id, None) is not None:
            self.why.pop(job.id, None)
            return
        self.inner.withdraw(view, job)

    def waiting(self) -> list[Job]:
        return self.inner.waiting() + sorted(self.held.values(), key=by_submission)

    def head(self) -> Job | None:
        first = self.inner.head()
        if first is None and self.held:
            first = min(self.held.values(), key=by_submission)
        return first

    def invalidate(self) -> None:
        self.inner.invalidate()

    def planned_starts(self, view: MachineView) -> list[tuple[Job, int]]:
        """The inner plan, then the held jobs with no planned start."""
        plan = self.inner.planned_starts(view)
        plan += [(job, NEVER) for job in sorted(self.held.values(), key=by_submission)]
        return plan

    def plan_outline(self, view: MachineView) -> PlanOutline | None:
        outline = self.inner.plan_outline(view)
        if outline is None or not self.held or outline.head_submit is not None:
            return outline  # held jobs, with no planned start, change only an empty head
        return outline.then([(min(self.held.values(), key=by_submission), NEVER)])

    def planned_start(self, view: MachineView, job: Job) -> int | None:
        return NEVER if self.held.get(job.id) is job else self.inner.planned_start(view, job)

    def explain(self, job: Job, now: int) -> str | None:
        if self.paused:
            return PAUSED
        why = self.why.get(job.id)
        if why is not None:
            return why
        return self.inner.explain(job, now)

    def deadline(self, job: Job) -> tuple[int, Overflow] | None:
        return self.inner.deadline(job)

    def report(self) -> dict[str, Any]:
        return self.inner.report()

    def next_wakeup(self, now: int) -> int | None:
        return self.inner.next_wakeup(now) if self.inner.wakes else None

    def expired(self, view: MachineView) -> list[tuple[Job, Overflow]]:
        return self.inner.expired(view) if self.inner.wakes else []
