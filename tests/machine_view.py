"""A machine as a policy sees it (``MachineView``), given by hand, for the planners' tests."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from batchd.sched.core.plans import running_arrays_of


@dataclass
class HandView:
    """Now, the nodes in service, the running jobs' estimated ends and widths (ascending
    ends) and the advance reservations not yet begun."""

    now: int
    capacity: int
    ends: list[int] = field(default_factory=list)
    widths: list[int] = field(default_factory=list)
    pending: list[tuple[int, int, int]] = field(default_factory=list)
    index: int = 0
    overrun: bool = False

    @property
    def free(self) -> int:
        return self.capacity - sum(self.widths)

    def running_ends(self) -> list[int]:
        return list(self.ends)

    def running_widths(self) -> list[int]:
        return list(self.widths)

    def running_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return running_arrays_of(self)

    def reservations(self) -> list[tuple[int, int, int]]:
        return list(self.pending)
