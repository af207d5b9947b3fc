"""The queue of one advance reservation: its jobs, and which of them start on its nodes.

A reservation's jobs never reach the machine's policy: the reservation holds its
nodes for its window, and its jobs share those nodes among themselves. While the
window is open they are served in order (higher ``qsub -p`` priority first, then
submission) and each job that fits in the free reserved nodes starts, the first
fit; a job too wide for what is free now waits without holding back the narrower
ones behind it. A job may run past the window's end: it is killed there, as PBS's
server kills it (the scheduler does not refuse it for that).
"""

from __future__ import annotations

from bisect import insort

from batchd.model.job import Job


def _key(job: Job) -> tuple[int, int, int]:
    return (-job.priority, job.submit, job.id)


class ReservationQueue:
    """The waiting jobs of one reservation, in the order they are served."""

    __slots__ = ("_jobs",)

    def __init__(self) -> None:
        self._jobs: list[tuple[tuple[int, int, int], Job]] = []

    def add(self, job: Job) -> None:
        insort(self._jobs, (_key(job), job), key=lambda e: e[0])

    def remove(self, job: Job) -> None:
        self._jobs = [e for e in self._jobs if e[1] is not job]

    def waiting(self) -> list[Job]:
        return [job for _, job in self._jobs]

    def __len__(self) -> int:
        return len(self._jobs)

    def select(self, free: int) -> list[Job]:
        """The jobs that start now on ``free`` nodes, first fit in order; they leave the queue."""
        chosen: list[Job] = []
        kept: list[tuple[tuple[int, int, int], Job]] = []
        for entry in self._jobs:
            job = entry[1]
            if job.width <= free:
                free -= job.width
                chosen.append(job)
            else:
                kept.append(entry)
        if chosen:
            self._jobs = kept
        return chosen
