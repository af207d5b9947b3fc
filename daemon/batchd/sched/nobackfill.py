"""Plain queue order without backfilling: start jobs in order while the head fits."""

from __future__ import annotations

from batchd.model.job import Job
from batchd.sched.order import OrderedQueue, OrderKey
from batchd.sched.policy import MachineView, Policy


class InOrderPolicy(Policy):
    def __init__(self, name: str, key: OrderKey) -> None:
        self.name = name
        self.queue = OrderedQueue(key)

    def job_submitted(self, view: MachineView, job: Job) -> None:
        self.queue.insert(job)

    def withdraw(self, view: MachineView, job: Job) -> None:
        self.queue.remove(job)

    def waiting(self) -> list[Job]:
        return list(self.queue.jobs)

    def schedule(self, view: MachineView) -> list[Job]:
        free = view.free
        widths = self.queue.widths
        k = 0
        while k < len(widths) and widths[k] <= free:
            free -= widths[k]
            k += 1
        if k == 0:
            return []
        return self.queue.pop_front(k)
