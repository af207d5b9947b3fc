"""``utility-easy``: EASY backfilling on the order by current utility per node-hour.

The cheap utility-aware baseline of Lee's utility paper: at every pass the waiting jobs are sorted
by what each would earn per node-hour if it started now and ran its estimate
(``batchd.sched.policies.current_utility``), highest first, and EASY serves them in that order.

While no waiting job has a utility function every job is worth 0 at any time, and the
order is the PBS priority, then arrival: time does not change it, and the order in force
has it but for the jobs queued since the last pass, which wait at its end. A pass then
checks those alone and sorts the queue only if one of them belongs further forward.
"""

from __future__ import annotations

from bisect import bisect_left

from batchd.model.job import Job
from batchd.sched.core.policy import MachineView
from batchd.sched.policies.current_utility import utility_rate_key
from batchd.sched.policies.reordered import ReorderedEasy


def worthless_key(job: Job) -> tuple[int, ...]:
    """``utility_rate_key`` of a job without a utility function, at any time."""
    return (-job.priority, job.submit, job.id)


class UtilityEasy(ReorderedEasy):
    def __init__(self) -> None:
        super().__init__("utility-easy")
        self._sorted_below = 0  # jobs ranked below this are in the order's sequence

    def choose(self, view: MachineView) -> list[Job] | None:
        jobs = self.queue.jobs
        if len(jobs) < 2:
            return None
        if self.valued:
            return sorted(jobs, key=utility_rate_key(view.now))
        fresh = bisect_left(self.queue.keys, (self._sorted_below,))
        keys = [worthless_key(job) for job in jobs[max(fresh - 1, 0) :]]
        self._sorted_below = self._next_rank
        if all(a < b for a, b in zip(keys, keys[1:], strict=False)):
            return None  # the order in force is the order
        return sorted(jobs, key=worthless_key)

    def reorder(self, jobs: list[Job]) -> None:
        super().reorder(jobs)
        self._sorted_below = self._next_rank
