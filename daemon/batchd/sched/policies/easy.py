"""EASY backfilling: one reservation, for the first job in order that does not fit."""

from __future__ import annotations

from operator import attrgetter

from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.sched.core.order import OrderKey
from batchd.sched.core.policy import MachineView, OrderedPolicy, Placement
from batchd.sched.kernels.backfill import shadow, with_ends
from batchd.sched.policies.easy_queue import WidthFiledQueue

_width = attrgetter("width")
_duration = attrgetter("duration")


class EasyPolicy(OrderedPolicy):
    """EASY backfilling by counting nodes, in the order of ``key``.

    A pass that starts nothing leaves every waiting job where it was: the head does
    not fit, and no other job fits now without delaying it. Until a job ends or the
    machine changes (``invalidate``), later passes see the same free nodes and the
    same shadow time, at a later ``now``; a job refused then is refused again, as it
    only gets harder to end before the shadow. Those passes look at the jobs that
    arrived since, not at the whole queue (as Slurm's backfill does not test again a
    job it tested while nothing changed).
    """

    def __init__(self, name: str, key: OrderKey) -> None:
        super().__init__(name, key)
        self.queue: WidthFiledQueue = WidthFiledQueue(key)
        # After a pass that started nothing: (head, free nodes, shadow time, extra nodes).
        self._blocked: tuple[Job, int, int, int] | None = None
        self._arrived: list[Job] = []  # submitted since that pass

    def job_submitted(self, view: MachineView, job: Job) -> None:
        self.queue.insert(job)
        if self._blocked is not None:
            self._arrived.append(job)

    def job_ended(self, view: MachineView, job: Job) -> None:
        self._blocked = None

    def job_resumed(self, view: MachineView, job: Job) -> None:
        self._blocked = None

    def withdraw(self, view: MachineView, job: Job) -> None:
        self.queue.remove(job)
        self._blocked = None

    def invalidate(self) -> None:
        self._blocked = None

    def schedule(self, view: MachineView) -> list[Placement]:
        return self.place_all(self._starting(view))

    def _starting(self, view: MachineView) -> list[Job]:
        q = self.queue
        if not q.jobs or (
            not view.free and not view.reservations() and q.widths[0] <= view.capacity
        ):
            # Nothing waits, or no node is free and the counting pass below applies:
            # nothing starts, and a remembered pass saw free nodes, so it is out of date.
            # On short queues most passes are these.
            self._blocked = None
            return []
        now = view.now
        blocked = self._blocked
        if blocked is not None:
            jobs = self._arrived
            self._arrived = []
            head, free, s_time, extra = blocked
            if not (q.jobs and q.jobs[0] is head and view.free == free and not view.overrun):
                self._blocked = blocked = None
        if blocked is not None:
            # Nothing changed since a pass that started nothing: only the jobs that
            # arrived since can start, in queue order, by the same two rules.
            if len(jobs) == 1:  # the usual case, without a loop to build the lists
                widths, durations = [jobs[0].width], [jobs[0].duration]
            else:
                jobs.sort(key=q.key)
                widths, durations = list(map(_width, jobs)), list(map(_duration, jobs))
            first = 0
        else:
            if view.reservations():
                return self._schedule_on_profile(view)
            jobs, widths, durations = q.jobs, q.widths, q.durations
            free = view.free
            n = len(jobs)
            k = 0
            while k < n and widths[k] <= free:
                free -= widths[k]
                k += 1
            started = jobs[:k]
            if k < n and widths[k] > view.capacity:
                # Nodes are out of service and the first blocked job cannot fit at all.
                return self._schedule_on_profile(view)
            if k == n or free == 0:
                if k:
                    q.pop_front(k)
                return started
            ends, running = view.running_ends(), view.running_widths()
            if k:
                more = zip([now + d for d in durations[:k]], widths[:k], strict=True)
                ends, running = with_ends(ends, running, more)
            s_time, extra = shadow(free, widths[k], ends, running, 0, len(ends), now)
            first = k + 1
            # A deep queue and few free nodes: merge the narrow jobs' classes instead of
            # walking the queue (the same jobs, in the same order).
            if q.worth_merging(k, free):
                merged = q.backfill(q.keys[k], free, now, s_time, extra)
                return self._started(k, started, merged, s_time, free, extra, view)
        # -- backfilling: each later job that fits now and ends by the shadow time, or fits
        # in the extra nodes (which it then takes), until no node is free.
        backfilled: list[Job] = []
        for m in range(first, len(jobs)):
            w = widths[m]
            if w > free:
                continue
            if now + durations[m] <= s_time:
                free -= w
            elif w <= extra:
                free -= w
                extra -= w
            else:
                continue
            backfilled.append(jobs[m])
            if free == 0:
                break
        if blocked is not None:
            if backfilled:
                self._blocked = None
                q.remove_many(backfilled)
            return backfilled
        return self._started(k, started, backfilled, s_time, free, extra, view)

    def _started(
        self,
        k: int,
        started: list[Job],
        backfilled: list[Job],
        s_time: int,
        free: int,
        extra: int,
        view: MachineView,
    ) -> list[Job]:
        """The first ``k`` jobs in order and the ``backfilled`` ones leave the queue; a
        pass that started nothing remembers what it saw."""
        q = self.queue
        if backfilled:
            q.pop_front(k)
            q.remove_many(backfilled)
            return started + backfilled
        if not k and not view.overrun:
            self._blocked = (q.jobs[0], free, s_time, extra)
            self._arrived = []
        if k:
            q.pop_front(k)
        return started

    def _schedule_on_profile(self, view: MachineView) -> list[Job]:
        """EASY on the full profile, for when advance reservations lie ahead.

        A job starts now only if it fits now for its whole estimate around the
        reservations; the first job that cannot start gets the one reservation.
        Without advance reservations this gives the same decisions as the
        counting pass above, which is cheaper.
        """
        from batchd.sched.core.plans import base_profile

        now = view.now
        profile = base_profile(view, 1)
        started: list[Job] = []
        head_reserved = False
        free = view.free
        for job in self.queue.jobs:
            if free == 0 and head_reserved:
                break
            d = job.duration
            s = profile.earliest_start(job.width, d, now)
            if s == now:
                profile.reserve(now, now + d, job.width)
                free -= job.width
                started.append(job)
            elif not head_reserved and s != NEVER:
                # The first job that can run at all but not now holds the reservation;
                # one wider than the nodes in service waits without blocking others.
                head_reserved = True
                profile.reserve(s, s + d, job.width)
        if started:
            self.queue.remove_many(started)
        return started
