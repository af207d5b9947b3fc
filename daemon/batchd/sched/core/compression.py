"""The plan in force, kept so that the next compression is made from it.

``KeptCompression`` turns the profile of the plan in force into the profile of now
(``changed``) from what changed since: the base (running jobs, reservations) and the
jobs that left the plan; then ``compress`` gives exactly the starts
``Profile.compress`` gives (each job, in queue order, at its earliest start among all
the others), but a job that no room can have opened for since it was placed keeps its
start without a search (``kernels.compression``).
"""

from __future__ import annotations

import numpy as np

from batchd.sched.core.profile import Profile

Gains = tuple[np.ndarray, np.ndarray, int]


class KeptCompression:
    """What a compression needs from the plan in force: the base it was made on, the
    slots of the jobs that left it since, and the slots the last compression's movers
    left (room the jobs before them in the order never saw)."""

    __slots__ = ("left_a", "left_b", "base", "gone")

    def __init__(self) -> None:
        self.base: Profile | None = None
        self.gone: list[tuple[int, int, int]] = []
        self.left_a = self.left_b = _times(0)

    def made_on(
        self, base: Profile | None, left: tuple[np.ndarray, np.ndarray] | None = None
    ) -> None:
        """The plan in force is ``base`` with each waiting job's slot taken (None: no
        plan to compress from); ``left``: the slots its compression's movers left
        (none: every job was placed afresh)."""
        self.base = base
        self.gone = []
        self.left_a, self.left_b = left if left is not None else (_times(0), _times(0))

    def leave(self, start: int, duration: int, width: int) -> None:
        """A job left the plan in force (started or withdrawn) holding this slot."""
        self.gone.append((start, duration, width))

    def changed(self, profile: Profile, base: Profile, now: int, room: int) -> Gains:
        """The profile of the plan in force made that of now, in place: on ``base``, the
        base now, with the jobs that left gone. Returns where room opened since each
        job was last placed (with room for ``room`` more gains)."""
        old = self.base
        assert old is not None, "no plan in force"
        gone = np.array(self.gone, dtype=np.int64).reshape(len(self.gone), 3)
        return profile.changed_since(old, base, gone, (self.left_a, self.left_b), now, room)

    def compress(
        self,
        profile: Profile,
        gains: Gains,
        arrays: tuple[np.ndarray, np.ndarray],
        starts: np.ndarray,
        base: Profile,
        now: int,
    ) -> np.ndarray:
        """The compression of ``profile`` (``base`` and every job at its start in
        ``starts``, none before now) where room opened in ``gains`` only: the jobs'
        new starts, written over ``starts``. The plan it leaves is the one in force."""
        widths, durations = arrays
        left_a, left_b = _times(len(widths)), _times(len(widths))
        moved = profile.compress_again(widths, durations, starts, gains, (left_a, left_b), now)
        self.made_on(base, (left_a[:moved], left_b[:moved]))
        return starts


def _times(count: int) -> np.ndarray:
    return np.empty(count, dtype=np.int64)
