"""EASY backfilling in an order chosen afresh at every pass.

The fixed orders (FCFS, SJF, LJF, prio-fifo) sort a job once, when it arrives. An
order by what a job would earn now changes as time passes, and a searched order is
found anew at every step; ``ReorderedEasy`` serves such orders. At each pass the
subclass's ``choose`` names the order of the whole waiting queue (or keeps the one in
force), and the pass is then ``EasyPolicy``'s, unchanged. Jobs that arrive between
passes join the end of the order in force until the next choice.

``EasyPolicy`` skips a pass after one that started nothing when nothing has changed
(same head, same free nodes). That stays exact under a new order: a pass that started
nothing tested every job against the same free and extra nodes, and each failed on its
own, which no order changes; only a new head makes a difference, and that is checked.
"""

from __future__ import annotations

from batchd.model.job import Job
from batchd.sched.core.policy import MachineView, Placement
from batchd.sched.policies.easy import EasyPolicy


class ReorderedEasy(EasyPolicy):
    """EASY backfilling in the order ``choose`` gives at each pass."""

    def __init__(self, name: str) -> None:
        self._rank: dict[Job, int] = {}  # position in the order in force
        self._next_rank = 0
        self.valued = 0  # waiting jobs with a utility function
        super().__init__(name, self._rank_of)

    def _rank_of(self, job: Job) -> tuple[int, ...]:
        return (self._rank[job],)

    def choose(self, view: MachineView) -> list[Job] | None:
        """The waiting jobs in the order to serve them in this pass (None: keep the order)."""
        return None

    def job_submitted(self, view: MachineView, job: Job) -> None:
        self._rank[job] = self._next_rank
        self._next_rank += 1
        self.valued += job.utility is not None
        super().job_submitted(view, job)

    def withdraw(self, view: MachineView, job: Job) -> None:
        super().withdraw(view, job)
        del self._rank[job]
        self.valued -= job.utility is not None

    def reorder(self, jobs: list[Job]) -> None:
        """Serve the waiting jobs in the order of ``jobs`` (each of them once) from now on."""
        if len(jobs) != len(self.queue) or self._rank.keys() != set(jobs):
            raise ValueError(f"{self.name}: a new order must hold exactly the waiting jobs")
        self._rank = {job: i for i, job in enumerate(jobs)}
        self._next_rank = len(jobs)
        queue = type(self.queue)(self.queue.key)
        for job in jobs:
            queue.insert(job)  # ranks ascend: each one is appended
        self.queue = queue

    def schedule(self, view: MachineView) -> list[Placement]:
        order = self.choose(view)
        if order is not None:
            self.reorder(order)
        return self._pass(view)

    def _pass(self, view: MachineView) -> list[Placement]:
        """EASY in the order in force."""
        started = self._starting(view)
        for job in started:
            del self._rank[job]
            self.valued -= job.utility is not None
        return self.place_all(started)
