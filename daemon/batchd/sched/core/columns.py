"""Columns of ints kept as arrays beside the lists they mirror.

A planner hands a whole queue, or the running jobs, to the compiled loops at every
re-plan, and gets the starts back as an array. Turning lists of thousands of ints
into arrays and back each time cost more than the plan itself on deep queues (16 ns
an element on the reference host). Whoever asked once for arrays keeps these and
changes them with its lists: an insert or a removal moves the tail of every column
in one copy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class IntColumns:
    """Equally long int64 columns (the rows of one array); the first ``n`` entries of
    each are live."""

    __slots__ = ("rows", "n")

    def __init__(self, *values: Sequence[int]) -> None:
        n = len(values[0])
        self.rows = np.empty((len(values), max(64, 2 * n)), dtype=np.int64)
        for row, row_values in zip(self.rows, values, strict=True):
            row[:n] = row_values
        self.n = n

    def live(self, c: int) -> np.ndarray:
        """Column ``c``'s live entries (a view: copy what you keep)."""
        return self.rows[c, : self.n]

    def at(self, c: int, i: int) -> int:
        return int(self.rows[c, i])

    def insert(self, i: int, *values: int) -> None:
        n = self.n
        rows = self.rows
        if n == rows.shape[1]:
            self.rows = rows = np.concatenate((rows, np.empty_like(rows)), axis=1)
        if i < n:
            rows[:, i + 1 : n + 1] = rows[:, i:n]
        rows[:, i] = values
        self.n = n + 1

    def delete(self, i: int) -> None:
        n = self.n
        rows = self.rows
        rows[:, i : n - 1] = rows[:, i + 1 : n]
        self.n = n - 1

    def drop_front(self, k: int) -> None:
        n = self.n
        rows = self.rows
        rows[:, : n - k] = rows[:, k:n]
        self.n = n - k

    def keep(self, kept: list[int]) -> None:
        """Keep only the entries at these ascending indices."""
        m = len(kept)
        self.rows[:, :m] = self.rows[:, np.array(kept, dtype=np.intp)]
        self.n = m
