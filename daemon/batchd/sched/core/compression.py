"""The last compression of a plan, kept so that the next one is made from it.

``KeptCompression.compress`` gives exactly the starts ``Profile.compress`` gives
(each job, in queue order, at its earliest start among all the others), but a job
that no room can have opened for since it was placed keeps its start without a
search (``kernels.compression``).
"""

from __future__ import annotations

import numpy as np

from batchd.sched.core.profile import Profile
from batchd.sched.kernels import compression as kernels


class KeptCompression:
    """What a compression needs from the last one: the slots its movers left.

    A compression (``Profile.compress``) moves each job, in order, to its earliest
    start among all the others' reservations. ``compress`` gives the same starts,
    searching only for the jobs room may have opened for since they were placed:
    room the plan in force (``old``) did not have, and the slots jobs left in the
    last compression, which the jobs before them in the order never saw.
    """

    __slots__ = ("left_a", "left_b")

    def __init__(self) -> None:
        self.forget()

    def forget(self) -> None:
        """A plan made afresh (a rebuild) is in force: every job is at its earliest."""
        # The slots left in the last compression: starts, ends.
        self.left_a = self.left_b = _times(0)

    def compress(
        self,
        old: Profile,
        profile: Profile,
        arrays: tuple[np.ndarray, np.ndarray],
        held: np.ndarray,
        now: int,
    ) -> np.ndarray:
        """The compression of ``profile``: the base and every job at its ``held`` start
        (none before now: a plan whose starts passed unused is made afresh)."""
        widths, durations = arrays
        ga, gb = _times(old.n + profile.n), _times(old.n + profile.n)
        ng = kernels.more_room(old.t, old.f, old.n, profile.t, profile.f, profile.n, now, ga, gb)
        gains = _merged(
            np.concatenate((ga[:ng], np.maximum(self.left_a, now))),
            np.concatenate((gb[:ng], self.left_b)),
            room=len(widths),
        )
        starts = held.copy()
        left_a, left_b = _times(len(widths)), _times(len(widths))
        moved = profile.compress_again(widths, durations, starts, gains, (left_a, left_b), now)
        self.left_a, self.left_b = left_a[:moved], left_b[:moved]
        return starts


def _merged(a: np.ndarray, b: np.ndarray, room: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The intervals [a, b) that are not empty, sorted and merged where they meet or
    touch, in arrays with ``room`` more: (starts, ends, count)."""
    live = b > a
    a, b = a[live], b[live]
    by_start = np.argsort(a, kind="stable")
    a, b = a[by_start], b[by_start]
    if len(a):
        reach = np.maximum.accumulate(b)
        heads = np.flatnonzero(np.concatenate(([True], a[1:] > reach[:-1])))
        a, b = a[heads], reach[np.append(heads[1:], len(reach)) - 1]
    ga, gb = _times(len(a) + room), _times(len(a) + room)
    ga[: len(a)], gb[: len(a)] = a, b
    return ga, gb, len(a)


def _times(count: int) -> np.ndarray:
    return np.empty(count, dtype=np.int64)
