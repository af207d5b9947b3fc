"""Plain queue order without backfilling: start jobs in order while the head fits."""

from __future__ import annotations

from batchd.sched.core.policy import MachineView, OrderedPolicy, Placement


class InOrderPolicy(OrderedPolicy):
    serves_in_order = True

    def schedule(self, view: MachineView) -> list[Placement]:
        if view.reservations():
            return self._schedule_on_profile(view)
        free = view.free
        widths = self.queue.widths
        k = 0
        while k < len(widths) and widths[k] <= free:
            free -= widths[k]
            k += 1
        if k == 0:
            return []
        return self.place_all(self.queue.pop_front(k))

    def _schedule_on_profile(self, view: MachineView) -> list[Placement]:
        """In order while the head fits now for its whole estimate, around reservations."""
        from batchd.sched.core.plans import base_profile

        now = view.now
        profile = base_profile(view, 1)
        k = 0
        for job in self.queue.jobs:
            if profile.earliest_start(job.width, job.duration, now) != now:
                break
            profile.reserve(now, now + job.duration, job.width)
            k += 1
        return self.place_all(self.queue.pop_front(k)) if k else []
