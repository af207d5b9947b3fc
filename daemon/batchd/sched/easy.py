"""EASY backfilling: one reservation, for the first job in order that does not fit."""

from __future__ import annotations

from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.sched.policy import MachineView, OrderedPolicy, Placement


def shadow(
    now: int,
    free: int,
    need: int,
    ends: list[int],
    widths: list[int],
    more: list[tuple[int, int]],
) -> tuple[int, int]:
    """When ``need`` nodes will be free, and how many beyond ``need`` are free then.

    ``ends``/``widths`` are the running jobs by estimated end; ``more`` are
    (end, width) of jobs started in this pass, ascending. Both are walked in one
    merge so the pass never sorts the running list.
    """
    avail = free
    i = j = 0
    t = now
    n_ends, n_more = len(ends), len(more)
    if not n_more:  # most passes start nothing before the blocked job: one list to walk
        while avail < need:
            t = ends[i]
            avail += widths[i]
            i += 1
        while i < n_ends and ends[i] == t:  # jobs ending at the same second all count
            avail += widths[i]
            i += 1
        return t, avail - need
    while avail < need:
        if j < n_more and (i == n_ends or more[j][0] < ends[i]):
            t, w = more[j]
            j += 1
        else:
            t, w = ends[i], widths[i]
            i += 1
        avail += w
        # Jobs ending at the same second all count at that second.
        while i < n_ends and ends[i] == t:
            avail += widths[i]
            i += 1
        while j < n_more and more[j][0] == t:
            avail += more[j][1]
            j += 1
    return t, avail - need


class EasyPolicy(OrderedPolicy):
    def schedule(self, view: MachineView) -> list[Placement]:
        return self.place_all(self._starting(view))

    def _starting(self, view: MachineView) -> list[Job]:
        if view.reservations():
            return self._schedule_on_profile(view)
        q = self.queue
        jobs, widths, durations = q.jobs, q.widths, q.durations
        now = view.now
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
        if k < n and free > 0:
            more = sorted([(now + j.duration, j.width) for j in started]) if k else []
            s_time, extra = shadow(
                now, free, widths[k], view.running_ends(), view.running_widths(), more
            )
            backfilled: list[Job] = []
            for m in range(k + 1, n):
                w = widths[m]
                if w > free:
                    continue
                job = jobs[m]
                if now + durations[m] <= s_time:
                    free -= w
                elif w <= extra:
                    free -= w
                    extra -= w
                else:
                    continue
                backfilled.append(job)
                if free == 0:
                    break
            if backfilled:
                q.pop_front(k)
                q.remove_many(backfilled)
                return started + backfilled
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
        from batchd.sched.plans import base_profile

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
