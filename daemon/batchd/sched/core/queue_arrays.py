"""A waiting queue's widths, durations and planned starts as arrays, kept beside it.

A planner hands the whole queue to the compiled loops at every re-plan and gets
the starts back as an array. Turning lists of thousands of ints into arrays and
back each time cost more than the plan itself on deep queues (16 ns an element on
the reference host, three times per re-plan). A queue asked once for arrays keeps
these and changes them as it changes: an insert or a removal moves the tail in
one copy.
"""

from __future__ import annotations

import numpy as np


class QueueArrays:
    """Widths, durations and planned starts of the queue's jobs in its order; ``n``
    are live."""

    __slots__ = ("widths", "durations", "starts", "n")

    def __init__(self, widths: list[int], durations: list[int], starts: list[int]) -> None:
        n = len(widths)
        room = max(64, 2 * n)
        self.widths = np.empty(room, dtype=np.int64)
        self.durations = np.empty(room, dtype=np.int64)
        self.starts = np.empty(room, dtype=np.int64)
        self.widths[:n] = widths
        self.durations[:n] = durations
        self.starts[:n] = starts
        self.n = n

    def shapes(self) -> tuple[np.ndarray, np.ndarray]:
        """The widths and durations, copied: callers keep what they are given."""
        n = self.n
        return self.widths[:n].copy(), self.durations[:n].copy()

    def insert(self, i: int, width: int, duration: int, start: int) -> None:
        n = self.n
        if n == len(self.widths):
            self.widths, self.durations, self.starts = (
                np.concatenate((column, np.empty(n, dtype=np.int64)))
                for column in (self.widths, self.durations, self.starts)
            )
        for column, value in (
            (self.widths, width),
            (self.durations, duration),
            (self.starts, start),
        ):
            if i < n:
                column[i + 1 : n + 1] = column[i:n]
            column[i] = value
        self.n = n + 1

    def delete(self, i: int) -> None:
        n = self.n
        for column in (self.widths, self.durations, self.starts):
            column[i : n - 1] = column[i + 1 : n]
        self.n = n - 1

    def drop_front(self, k: int) -> None:
        n = self.n
        for column in (self.widths, self.durations, self.starts):
            column[: n - k] = column[k:n]
        self.n = n - k

    def keep(self, kept: list[int]) -> None:
        """Keep only the entries at these ascending indices."""
        at = np.array(kept, dtype=np.intp)
        m = len(kept)
        for column in (self.widths, self.durations, self.starts):
            column[:m] = column[at]
        self.n = m
