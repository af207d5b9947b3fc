"""``utility-easy``: EASY backfilling on the order by current utility per node-hour.

The cheap utility-aware baseline of Lee's utility paper: at every pass the waiting jobs are sorted
by what each would earn per node-hour if it started now and ran its estimate
(``batchd.sched.policies.current_utility``), highest first, and EASY serves them in that order.
"""

from __future__ import annotations

from batchd.model.job import Job
from batchd.sched.core.policy import MachineView
from batchd.sched.policies.current_utility import utility_rate_key
from batchd.sched.policies.reordered import ReorderedEasy


class UtilityEasy(ReorderedEasy):
    def __init__(self) -> None:
        super().__init__("utility-easy")

    def choose(self, view: MachineView) -> list[Job] | None:
        jobs = self.queue.jobs
        if len(jobs) < 2:
            return None
        return sorted(jobs, key=utility_rate_key(view.now))
