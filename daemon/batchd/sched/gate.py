"""Time windows around any policy: jobs that may only run in prime or non-prime time.

``WindowGate`` wraps a policy (the short-term discipline). Each job has a class:
``None`` (may run at any time) or a calendar window ("prime", "nonprime"). A
job of a window class is offered to the inner policy only while its window is
in force and, with ``must_fit``, only while its estimate ends before the window
does; otherwise the gate holds it back. At a window's end, jobs of that class
still running are overflow jobs: the engine kills them (outcome ``overflow``)
or puts them back in the queue, as ``overflow`` says (seed 001, sec. 4).

The gate does no I/O: it asks the engine to wake it at the next window change
or job deadline (``next_wakeup``), and names the jobs to end then (``expired``).
Calendar times are the emulated time plus ``origin``: a replayed trace counts
from 0, and its header says when that was (UnixStartTime).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from batchd.model.calendar import PrimeCalendar, Window
from batchd.model.job import Job
from batchd.sched.policy import MachineView, Policy
from batchd.sched.profile import NEVER

Overflow = Literal["kill", "requeue"]
Classify = Callable[[Job], Window | None]
FIT_HORIZON = 14 * 86400  # a job no window of this span can hold runs without the fit rule


class WindowGate(Policy):
    wakes = True

    def __init__(
        self,
        name: str,
        inner: Policy,
        calendar: PrimeCalendar,
        classify: Classify,
        *,
        overflow: Overflow = "kill",
        must_fit: bool = True,
        origin: int = 0,
    ) -> None:
        self.name = name
        self.inner = inner
        self.calendar = calendar
        self.classify = classify
        self.overflow = overflow
        self.must_fit = must_fit
        self.origin = origin
        self.held: dict[int, Job] = {}  # waiting, not offered to the inner policy now
        self.offered: dict[int, Job] = {}  # waiting in a window class, offered now
        self.running: dict[int, Job] = {}  # running in a window class
        self.classes: dict[int, Window | None] = {}
        self._longest: dict[Window, int] = {}
        # Until the window in force ends, only the deadlines of offered jobs (the last
        # start that still fits) change what is offered: a heap of them, so a pass
        # does not re-check the whole backlog.
        self._regated_until = -1
        self._deadlines: list[tuple[int, int, Job]] = []
        self.overflow_killed = 0
        self.overflow_requeued = 0
        self.requeues: dict[int, int] = {}  # job id -> times requeued at a window's end

    # -- the calendar ---------------------------------------------------------------
    def window(self, now: int) -> tuple[Window, int | None]:
        """The window in force at ``now`` and when it ends (emulated time)."""
        t = now + self.origin
        change = self.calendar.next_change(t)
        return self.calendar.window_at(t), None if change is None else change - self.origin

    def _next_opening(self, cls: Window, now: int) -> int | None:
        t = now
        for _ in range(16):
            win, end = self.window(t)
            if win == cls:
                return t
            if end is None:
                return None
            t = end
        return None

    def longest(self, cls: Window, now: int) -> int:
        """The longest window of this class in the next two weeks (cached per class)."""
        if cls not in self._longest:
            best = 0
            t = now
            while t < now + FIT_HORIZON:
                win, end = self.window(t)
                if end is None:
                    best = FIT_HORIZON if win == cls else best
                    break
                if win == cls:
                    best = max(best, end - t)
                t = end
            self._longest[cls] = best
        return self._longest[cls]

    def eligible(
        self, job: Job, now: int, current: tuple[Window, int | None] | None = None
    ) -> bool:
        """Whether the job may start at ``now``; ``current`` is ``window(now)`` if known."""
        cls = self.classes.get(job.id)
        if cls is None:
            return True
        win, end = current or self.window(now)
        if win != cls:
            return False
        if not self.must_fit or end is None:
            return True
        if job.duration > self.longest(cls, now):
            return True  # no window holds it: it runs, and overflows
        return now + job.duration <= end

    def reason(self, job: Job, now: int) -> str | None:
        """Why a waiting job cannot start now because of its window, or None."""
        cls = self.classes.get(job.id)
        if cls is None or self.eligible(job, now):
            return None
        win, end = self.window(now)
        if win == cls and end is not None:
            return f"its walltime does not fit before {cls} time ends at {self._stamp(end)}"
        opening = self._next_opening(cls, now)
        when = "never" if opening is None else f"at {self._stamp(opening)}"
        return f"it runs in {cls} time, which opens {when}"

    def _stamp(self, t: int) -> str:
        local = datetime.fromtimestamp(t + self.origin, self.calendar.tz)
        return local.strftime("%Y-%m-%d %H:%M:%S %Z")

    # -- the policy -------------------------------------------------------------------
    def job_submitted(self, view: MachineView, job: Job) -> None:
        cls = self.classify(job)
        self.classes[job.id] = cls
        if cls is None:
            self.inner.job_submitted(view, job)
        elif self.eligible(job, view.now):
            self.offered[job.id] = job
            self.inner.job_submitted(view, job)
            self._push_deadline(job, view.now, self.window(view.now)[1])
        else:
            self.held[job.id] = job

    def _push_deadline(self, job: Job, now: int, end: int | None) -> None:
        """Remember when an offered job stops fitting before ``end``, its window's end."""
        if end is None or not self.must_fit:
            return  # it stays eligible until the window ends, when the full check runs
        cls = self.classes[job.id]
        if cls is not None and job.duration <= self.longest(cls, now):
            deadline = max(now + 1, end - job.duration + 1)
            if deadline < end:
                heapq.heappush(self._deadlines, (deadline, job.id, job))

    def _take_back(self, view: MachineView, job: Job) -> None:
        del self.offered[job.id]
        self.inner.withdraw(view, job)
        self.held[job.id] = job

    def _regate(self, view: MachineView) -> None:
        """A new window: offer the held jobs it admits, take back those it does not."""
        now = view.now
        current = self.window(now)
        for job in [j for j in self.offered.values() if not self.eligible(j, now, current)]:
            self._take_back(view, job)
        admitted = [j for j in self.held.values() if self.eligible(j, now, current)]
        for job in sorted(admitted, key=lambda j: (j.submit, j.id)):
            del self.held[job.id]
            self.offered[job.id] = job
            self.inner.job_submitted(view, job)
        end = current[1]
        self._regated_until = NEVER_CHECK if end is None else end
        self._deadlines = []
        for job in self.offered.values():
            self._push_deadline(job, now, end)

    def _expire_deadlines(self, view: MachineView) -> None:
        """Take back the offered jobs whose estimate no longer fits in the window."""
        heap = self._deadlines
        now = view.now
        while heap and heap[0][0] <= now:
            _, jid, job = heapq.heappop(heap)
            if self.offered.get(jid) is job and not self.eligible(job, now):
                self._take_back(view, job)

    def schedule(self, view: MachineView) -> list[Job]:
        if self.held or self.offered:
            if view.now >= self._regated_until:
                self._regate(view)
            else:
                self._expire_deadlines(view)
        due = self.inner.schedule(view)
        for job in due:
            if self.offered.pop(job.id, None) is not None:
                self.running[job.id] = job
        return due

    def job_ended(self, view: MachineView, job: Job) -> None:
        self.running.pop(job.id, None)
        self.inner.job_ended(view, job)

    def withdraw(self, view: MachineView, job: Job) -> None:
        if self.held.pop(job.id, None) is not None:
            return
        self.offered.pop(job.id, None)
        self.inner.withdraw(view, job)

    def waiting(self) -> list[Job]:
        held = sorted(self.held.values(), key=lambda j: (j.submit, j.id))
        return self.inner.waiting() + held

    def invalidate(self) -> None:
        self.inner.invalidate()

    def planned_start(self, job: Job) -> int | None:
        if job.id in self.held:
            return None
        return self.inner.planned_start(job)

    def planned_starts(self, view: MachineView) -> list[tuple[Job, int]]:
        plan = self.inner.planned_starts(view)
        for job in sorted(self.held.values(), key=lambda j: (j.submit, j.id)):
            cls = self.classes.get(job.id)
            opening = None if cls is None else self._next_opening(cls, view.now + 1)
            plan.append((job, NEVER if opening is None else opening))
        return plan

    # -- time -------------------------------------------------------------------------
    def next_wakeup(self, now: int) -> int | None:
        """When the gate must look again: a window change or a job's deadline."""
        if not (self.held or self.offered or self.running):
            return None
        _, wake = self.window(now)
        heap = self._deadlines
        while heap and self.offered.get(heap[0][1]) is not heap[0][2]:
            heapq.heappop(heap)  # started or withdrawn since
        if heap and heap[0][0] > now and (wake is None or heap[0][0] < wake):
            wake = heap[0][0]
        return wake

    def expired(self, view: MachineView) -> list[tuple[Job, str]]:
        """Running jobs whose window has ended: (job, "kill" or "requeue")."""
        now = view.now
        win, _ = self.window(now)
        out = []
        for job in list(self.running.values()):
            if self.classes.get(job.id) != win:
                del self.running[job.id]
                out.append((job, self.overflow))
                if self.overflow == "kill":
                    self.overflow_killed += 1
                else:
                    self.overflow_requeued += 1
                    self.requeues[job.id] = self.requeues.get(job.id, 0) + 1
        return out

    def report(self) -> dict[str, Any]:
        return {
            **self.inner.report(),
            "windows": {
                "overflow_killed": self.overflow_killed,
                "overflow_requeued": self.overflow_requeued,
            },
        }


NEVER_CHECK = 2**62
