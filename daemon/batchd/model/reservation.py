"""Advance reservations: nodes held for a fixed window that no policy may move."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class ResvState(Enum):
    CONFIRMED = "CO"  # accepted, not yet begun
    RUNNING = "RN"  # its window is open and it holds its nodes
    FINISHED = "FN"  # its window closed, or it was deleted


@dataclass(slots=True, eq=False)
class Reservation:
    """``width`` units of machine ``machine`` from ``start`` until ``end``; ``units``
    are the ids it holds while open: node ids, or core ids on a machine whose nodes
    are shared."""

    id: int
    start: int
    end: int
    width: int
    machine: int = 0
    owner: str = ""
    name: str = ""
    state: ResvState = ResvState.CONFIRMED
    units: list[int] = field(default_factory=list)
    # The queue its jobs are submitted to (PBS's R<seq>); empty: a reservation without jobs.
    queue: str = ""
    # The chunks asked for, as Resource_List.select shows them ("4:ncpus=2"); empty:
    # whole nodes asked for by number, shown as "N:ncpus=1".
    select: str = ""

    @property
    def duration(self) -> int:
        return self.end - self.start
