"""The window gate: jobs that may only run while their window is open.

``WindowGate`` wraps a policy (the short-term discipline). Each job has a class:
``None`` (it may run at any time) or a ``WindowClass``, whose window says when
its jobs may run: prime or non-prime time (Lo and Mache's prime-time paper), a queue's weekly window,
a stopped queue (never). A job of a class is offered to the inner policy only
while its window is open and, with ``must_fit``, only while its estimate ends
before the window closes; otherwise the gate holds it back. When a window
closes, jobs of its class still running are overflow jobs: the engine kills
them (outcome ``overflow``) or puts them back in the queue, as ``overflow``
says (Lo and Mache's prime-time paper, sec. 4). A job longer than every opening of its window in the
next two weeks runs without the fit rule, and overflows.

The gate does no I/O: it asks the engine to wake it at the next window change
or job deadline (``next_wakeup``) and names the jobs to end then
(``expired``). Gates nest: the daemon's queue windows wrap a ``primetime``
policy, which is a gate itself. Windows are in emulated time (see
``shifted``); the window arithmetic is in ``batchd.model.windows``.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.model.windows import HORIZON, TimeWindow, longest_opening, next_fit, next_opening
from batchd.sched.core.outline import PlanOutline
from batchd.sched.core.policy import (
    MachineView,
    Overflow,
    Placement,
    Policy,
    WrappingPolicy,
)


class WindowClass:
    """Jobs that run only while ``window`` is open, and how their waits are told."""

    window: TimeWindow

    def closed(self, opens: int | None) -> str:
        """Why a job of the class waits while the window is closed (it opens at ``opens``)."""
        raise NotImplementedError

    def unfit(self, job: Job, closes: int) -> str:
        """Why a job waits whose estimate does not end before the window closes at ``closes``."""
        raise NotImplementedError


Classify = Callable[[Job], WindowClass | None]


@dataclass(frozen=True, slots=True)
class Shifted:
    """A calendar window seen on an emulated clock whose time 0 is ``origin`` (epoch)."""

    inner: TimeWindow
    origin: int

    @property
    def text(self) -> str:
        return self.inner.text

    def is_open(self, t: int) -> bool:
        return self.inner.is_open(t + self.origin)

    def next_change(self, t: int) -> int | None:
        change = self.inner.next_change(t + self.origin)
        return None if change is None else change - self.origin


def shifted(window: TimeWindow, origin: int) -> TimeWindow:
    """``window`` on an emulated clock that starts at ``origin``; itself when origin is 0."""
    return window if origin == 0 else Shifted(window, origin)


class WindowGate(WrappingPolicy):
    wakes = True

    def __init__(
        self,
        name: str,
        inner: Policy,
        classify: Classify,
        *,
        overflow: Overflow = "kill",
        must_fit: bool = True,
    ) -> None:
        self.name = name
        self.inner = inner
        self.machine = inner.machine
        self.serves_in_order = inner.serves_in_order  # what it offers starts in order too
        self.classify = classify
        self.overflow = overflow
        self.must_fit = must_fit
        self.held: dict[int, Job] = {}  # waiting, not offered to the inner policy now
        self.offered: dict[int, Job] = {}  # waiting in a window class, offered now
        self.running: dict[int, Job] = {}  # running in a window class
        # The class of each waiting or running job; a job that ends or leaves the queue
        # is forgotten (a daemon's jobs come and go for months).
        self.classes: dict[int, WindowClass | None] = {}
        self._longest: dict[int, int] = {}  # id(class) -> its longest opening
        self._use: dict[int, tuple[WindowClass, int]] = {}  # id(class) -> (class, jobs in it)
        # Until the first window in use changes, only the deadlines of offered jobs (the
        # last start that still fits) change what is offered: a heap of them, so a pass
        # does not re-check the whole backlog.
        self._regated_until = -1
        self._deadlines: list[tuple[int, int, Job]] = []
        self.overflow_killed = 0
        self.overflow_requeued = 0
        self.requeues: dict[int, int] = {}  # job id -> times requeued at a window's end

    # -- windows ----------------------------------------------------------------------
    @staticmethod
    def close(cls: WindowClass, now: int) -> int | None:
        """When the window of ``cls``, open at ``now``, closes (None: not in its look-ahead)."""
        return cls.window.next_change(now)

    def longest(self, cls: WindowClass, now: int) -> int:
        """The longest opening of the class's window in the next two weeks (kept per class)."""
        key = id(cls)
        if key not in self._longest:
            longest = longest_opening(cls.window, now, HORIZON)
            self._longest[key] = HORIZON if longest is None else longest
        return self._longest[key]

    def eligible(self, job: Job, now: int) -> bool:
        """Whether the job may start at ``now``."""
        cls = self.classes.get(job.id)
        if cls is None:
            return True
        window = cls.window
        if not window.is_open(now):
            return False
        if not self.must_fit:
            return True
        end = window.next_change(now)
        if end is None:
            return True
        if job.duration > self.longest(cls, now):
            return True  # no opening holds it: it runs, and overflows
        return now + job.duration <= end

    def explain(self, job: Job, now: int) -> str | None:
        cls = self.classes.get(job.id)
        if cls is None or self.eligible(job, now):
            return self.inner.explain(job, now)
        window = cls.window
        if window.is_open(now):
            end = window.next_change(now)
            if end is not None:
                return cls.unfit(job, end)
        return cls.closed(next_opening(window, now))

    def deadline(self, job: Job) -> tuple[int, Overflow] | None:
        inner = self.inner.deadline(job)
        cls = self.classify(job)
        if cls is not None and cls.window.is_open(job.start):
            close = cls.window.next_change(job.start)
            if close is not None and (inner is None or close < inner[0]):
                return close, self.overflow
        return inner

    # -- the policy -------------------------------------------------------------------
    def job_submitted(self, view: MachineView, job: Job) -> None:
        cls = self.classify(job)
        self.classes[job.id] = cls
        if cls is None:
            self.inner.job_submitted(view, job)
            return
        self._enter(cls, view.now)
        if self.eligible(job, view.now):
            self.offered[job.id] = job
            self.inner.job_submitted(view, job)
            self._push_deadline(job, view.now)
        else:
            self.held[job.id] = job

    def job_resumed(self, view: MachineView, job: Job) -> None:
        cls = self.classify(job)
        self.classes[job.id] = cls
        if cls is not None:
            self._enter(cls, view.now)
            self.running[job.id] = job
        self.inner.job_resumed(view, job)

    def _enter(self, cls: WindowClass, now: int) -> None:
        """A job of ``cls`` joins: the gate must look again when its window changes."""
        key = id(cls)
        _, count = self._use.get(key, (cls, 0))
        self._use[key] = (cls, count + 1)
        change = cls.window.next_change(now)
        if change is not None and change < self._regated_until:
            self._regated_until = change

    def _leave(self, job: Job) -> None:
        cls = self.classes.get(job.id)
        if cls is None:
            return
        key = id(cls)
        _, count = self._use[key]
        if count > 1:
            self._use[key] = (cls, count - 1)
        else:
            del self._use[key]

    def _push_deadline(self, job: Job, now: int) -> None:
        """Remember when an offered job stops fitting before its window's end."""
        cls = self.classes[job.id]
        if cls is None or not self.must_fit:
            return
        end = cls.window.next_change(now)
        if end is None:
            return  # it stays eligible until the window ends, when the full check runs
        if job.duration <= self.longest(cls, now):
            deadline = max(now + 1, end - job.duration + 1)
            if deadline < end:
                heapq.heappush(self._deadlines, (deadline, job.id, job))

    def _take_back(self, view: MachineView, job: Job) -> None:
        del self.offered[job.id]
        self.inner.withdraw(view, job)
        self.held[job.id] = job

    def _next_change(self, now: int) -> int:
        """The first change of a window that a waiting or running job belongs to."""
        changes = [cls.window.next_change(now) for cls, _ in self._use.values()]
        return min((c for c in changes if c is not None), default=NEVER)

    def _regate(self, view: MachineView) -> None:
        """A window changed: offer the held jobs it admits, take back those it does not."""
        now = view.now
        for job in [j for j in self.offered.values() if not self.eligible(j, now)]:
            self._take_back(view, job)
        admitted = [j for j in self.held.values() if self.eligible(j, now)]
        for job in sorted(admitted, key=lambda j: (j.submit, j.id)):
            del self.held[job.id]
            self.offered[job.id] = job
            self.inner.job_submitted(view, job)
        self._regated_until = self._next_change(now)
        self._deadlines = []
        for job in self.offered.values():
            self._push_deadline(job, now)

    def _expire_deadlines(self, view: MachineView) -> None:
        """Take back the offered jobs whose estimate no longer fits in the window."""
        heap = self._deadlines
        now = view.now
        while heap and heap[0][0] <= now:
            _, jid, job = heapq.heappop(heap)
            if self.offered.get(jid) is job and not self.eligible(job, now):
                self._take_back(view, job)

    def reclassify(self, view: MachineView, classify: Classify) -> None:
        """New classes (a reconfiguration): every waiting job is classed and gated again.

        A running job takes its new class when that window is open now (it overflows at
        the new close); otherwise it keeps the one it started in.
        """
        self.classify = classify
        self._longest.clear()
        now = view.now
        for job in list(self.held.values()) + self.inner.waiting():
            self._leave(job)
            cls = self.classes[job.id] = classify(job)
            if cls is not None:
                self._enter(cls, now)
        for job in list(self.running.values()):
            cls = classify(job)
            if cls is not None and cls.window.is_open(now):
                self._leave(job)
                self.classes[job.id] = cls
                self._enter(cls, now)
        freed = [j for j in self.held.values() if self.classes[j.id] is None]
        for job in sorted(freed, key=lambda j: (j.submit, j.id)):
            del self.held[job.id]
            self.inner.job_submitted(view, job)
        self.offered = {j.id: j for j in self.inner.waiting() if self.classes.get(j.id) is not None}
        self._regate(view)

    def schedule(self, view: MachineView) -> list[Placement]:
        if self.held or self.offered:
            if view.now >= self._regated_until:
                self._regate(view)
            else:
                self._expire_deadlines(view)
        due = self.inner.schedule(view)
        for placement in due:
            job = placement.job
            if self.offered.pop(job.id, None) is not None:
                self.running[job.id] = job
        return due

    def job_ended(self, view: MachineView, job: Job) -> None:
        if self.running.pop(job.id, None) is not None:
            self._leave(job)
        self.classes.pop(job.id, None)
        self.inner.job_ended(view, job)

    def withdraw(self, view: MachineView, job: Job) -> None:
        if self.held.pop(job.id, None) is not None:
            self._leave(job)
            self.classes.pop(job.id, None)
            return
        if self.offered.pop(job.id, None) is not None:
            self._leave(job)
        self.classes.pop(job.id, None)
        self.inner.withdraw(view, job)

    def waiting(self) -> list[Job]:
        held = sorted(self.held.values(), key=lambda j: (j.submit, j.id))
        return self.inner.waiting() + held

    def head(self) -> Job | None:
        first = self.inner.head()
        if first is None and self.held:
            first = min(self.held.values(), key=lambda j: (j.submit, j.id))
        return first

    def invalidate(self) -> None:
        self.inner.invalidate()

    def planned_starts(self, view: MachineView) -> list[tuple[Job, int]]:
        """The inner plan, then each held job at the first opening it can use."""
        plan = self.inner.planned_starts(view)
        for job in sorted(self.held.values(), key=lambda j: (j.submit, j.id)):
            plan.append((job, self._held_start(view, job)))
        return plan

    def plan_outline(self, view: MachineView) -> PlanOutline | None:
        outline = self.inner.plan_outline(view)
        if outline is None or not self.held:
            return outline
        held = sorted(self.held.values(), key=lambda j: (j.submit, j.id))
        return outline.then((job, self._held_start(view, job)) for job in held)

    def planned_start(self, view: MachineView, job: Job) -> int | None:
        if self.held.get(job.id) is job:
            return self._held_start(view, job)
        return self.inner.planned_start(view, job)

    def _held_start(self, view: MachineView, job: Job) -> int:
        """A job the gate holds back: the first opening it can use (NEVER: none)."""
        cls = self.classes.get(job.id)
        start = None if cls is None else self.first_start(cls, job, view.now + 1)
        return NEVER if start is None else start

    def first_start(self, cls: WindowClass, job: Job, t: int) -> int | None:
        """The first time from ``t`` at which the gate would offer ``job``."""
        if self.must_fit and job.duration <= self.longest(cls, t):
            return next_fit(cls.window, t, job.duration)
        return next_opening(cls.window, t)

    # -- time -------------------------------------------------------------------------
    def next_wakeup(self, now: int) -> int | None:
        """When the gate must look again: a window change or a job's deadline."""
        inner = self.inner.next_wakeup(now) if self.inner.wakes else None
        if not self._use:
            return inner
        wake = self._next_change(now)
        heap = self._deadlines
        while heap and self.offered.get(heap[0][1]) is not heap[0][2]:
            heapq.heappop(heap)  # started or withdrawn since
        if heap and now < heap[0][0] < wake:
            wake = heap[0][0]
        if inner is not None and inner < wake:
            wake = inner
        return None if wake == NEVER else wake

    def expired(self, view: MachineView) -> list[tuple[Job, Overflow]]:
        """Running jobs whose window has closed: (job, "kill" or "requeue")."""
        now = view.now
        out: list[tuple[Job, Overflow]] = []
        for job in list(self.running.values()):
            cls = self.classes.get(job.id)
            if cls is not None and not cls.window.is_open(now):
                del self.running[job.id]
                self._leave(job)
                out.append((job, self.overflow))
                if self.overflow == "kill":
                    self.overflow_killed += 1
                else:
                    self.overflow_requeued += 1
                    self.requeues[job.id] = self.requeues.get(job.id, 0) + 1
        if self.inner.wakes:
            out += self.inner.expired(view)
        return out

    def report(self) -> dict[str, Any]:
        return {
            **self.inner.report(),
            "windows": {
                "overflow_killed": self.overflow_killed,
                "overflow_requeued": self.overflow_requeued,
            },
        }
