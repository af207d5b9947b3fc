"""A machine as a policy sees it, set by hand: for unit tests of single passes."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from batchd.model.job import Job
from batchd.sched.core.plans import running_arrays_of


@dataclass
class View:
    """``MachineView`` with every answer given: running jobs as (estimated end, width)."""

    now: int = 0
    capacity: int = 4
    free: int = 4
    running: list[tuple[int, int]] = field(default_factory=list)
    overrun: bool = False
    pending: list[tuple[int, int, int]] = field(default_factory=list)  # (start, end, width)
    index: int = 0

    def running_ends(self) -> list[int]:
        return [end for end, _ in sorted(self.running)]

    def running_widths(self) -> list[int]:
        return [width for _, width in sorted(self.running)]

    def running_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return running_arrays_of(self)

    def reservations(self) -> list[tuple[int, int, int]]:
        return list(self.pending)


def job(
    i: int, width: int, estimate: int, submit: int = 0, *, user: str = "", queue: str = ""
) -> Job:
    return Job(
        id=i, submit=submit, width=width, estimate=estimate, runtime=estimate, user=user,
        queue=queue,
    )  # fmt: skip


def ids(placements: list) -> list[int]:  # type: ignore[type-arg]
    return [p.job.id for p in placements]
