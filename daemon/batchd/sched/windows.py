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
        self._check_at = NEVER_CHECK  # the next time the offered set can change
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

    def eligible(self, job: Job, now: int) -> bool:
        cls = self.classes.get(job.id)
        if cls is None:
            return True
        win, end = self.window(now)
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
            self._check_at = min(self._check_at, self._deadline(job, view.now))
        else:
            self.held[job.id] = job
            _, end = self.window(view.now)
            if end is not None:
                self._check_at = min(self._check_at, end)

    def _deadline(self, job: Job, now: int) -> int:
        """The first time an offered job stops being eligible."""
        _, end = self.window(now)
        if end is None:
            return NEVER_CHECK
        cls = self.classes[job.id]
        if self.must_fit and cls is not None and job.duration <= self.longest(cls, now):
            return max(now + 1, end - job.duration + 1)
        return end

    def _regate(self, view: MachineView) -> None:
        """Offer the held jobs that became eligible; take back those that stopped being."""
        now = view.now
        for job in [j for j in self.offered.values() if not self.eligible(j, now)]:
            del self.offered[job.id]
            self.inner.withdraw(view, job)
            self.held[job.id] = job
        for job in sorted(
            (j for j in self.held.values() if self.eligible(j, now)), key=lambda j: (j.submit, j.id)
        ):
            del self.held[job.id]
            self.offered[job.id] = job
            self.inner.job_submitted(view, job)
        _, end = self.window(now)
        check = NEVER_CHECK if end is None else end
        for job in self.offered.values():
            check = min(check, self._deadline(job, now))
        self._check_at = check

    def schedule(self, view: MachineView) -> list[Job]:
        if view.now >= self._check_at and (self.held or self.offered):
            self._regate(view)
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
        _, end = self.window(now)
        wake = self._check_at if now < self._check_at < NEVER_CHECK else None
        if self.running and end is not None:
            wake = end if wake is None else min(wake, end)
        if self.held and end is not None:
            wake = end if wake is None else min(wake, end)
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
