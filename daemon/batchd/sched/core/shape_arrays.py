"""A waiting queue's widths and durations as arrays, kept beside its lists.

A planner hands the whole queue to the compiled loops at every re-plan. Turning
lists of thousands of ints into arrays each time cost more than the plan itself on
deep queues (16 ns an element on the reference host, twice per re-plan). A queue
asked once for arrays keeps these and changes them as it changes its lists: an
insert or a removal moves the tail in one copy.
"""

from __future__ import annotations

import numpy as np


class ShapeArrays:
    """Widths and durations of the queue's jobs in its order; ``n`` are live."""

    __slots__ = ("widths", "durations", "n")

    def __init__(self, widths: list[int], durations: list[int]) -> None:
        n = len(widths)
        room = max(64, 2 * n)
        self.widths = np.empty(room, dtype=np.int64)
        self.durations = np.empty(room, dtype=np.int64)
        self.widths[:n] = widths
        self.durations[:n] = durations
        self.n = n

    def copies(self) -> tuple[np.ndarray, np.ndarray]:
        """The live part, copied: callers keep what they are given."""
        n = self.n
        return self.widths[:n].copy(), self.durations[:n].copy()

    def insert(self, i: int, width: int, duration: int) -> None:
        n = self.n
        if n == len(self.widths):
            self.widths = np.concatenate((self.widths, np.empty(n, dtype=np.int64)))
            self.durations = np.concatenate((self.durations, np.empty(n, dtype=np.int64)))
        w, d = self.widths, self.durations
        if i < n:
            w[i + 1 : n + 1] = w[i:n]
            d[i + 1 : n + 1] = d[i:n]
        w[i] = width
        d[i] = duration
        self.n = n + 1

    def delete(self, i: int) -> None:
        n = self.n
        w, d = self.widths, self.durations
        w[i : n - 1] = w[i + 1 : n]
        d[i : n - 1] = d[i + 1 : n]
        self.n = n - 1

    def drop_front(self, k: int) -> None:
        n = self.n
        w, d = self.widths, self.durations
        w[: n - k] = w[k:n]
        d[: n - k] = d[k:n]
        self.n = n - k

    def keep(self, kept: list[int]) -> None:
        """Keep only the entries at these ascending indices."""
        at = np.array(kept, dtype=np.intp)
        m = len(kept)
        self.widths[:m] = self.widths[at]
        self.durations[:m] = self.durations[at]
        self.n = m
