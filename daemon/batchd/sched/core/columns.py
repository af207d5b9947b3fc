"""Columns of ints kept as arrays beside the lists they mirror.

A planner hands a whole queue, or the running jobs, to the compiled loops at every
re-plan, and gets the starts back as an array. Turning lists of thousands of ints
into arrays and back each time cost more than the plan itself on deep queues (16 ns
an element on the reference host). Whoever asked once for arrays keeps these and
changes them with its lists: an insert or a removal moves the tail in one copy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class IntColumns:
    """Equally long int64 columns; the first ``n`` entries of each are live."""

    __slots__ = ("columns", "n")

    def __init__(self, *values: Sequence[int]) -> None:
        n = len(values[0])
        room = max(64, 2 * n)
        self.columns = [np.empty(room, dtype=np.int64) for _ in values]
        for column, column_values in zip(self.columns, values, strict=True):
            column[:n] = column_values
        self.n = n

    def live(self, c: int) -> np.ndarray:
        """Column ``c``'s live entries (a view: copy what you keep)."""
        return self.columns[c][: self.n]

    def insert(self, i: int, *values: int) -> None:
        n = self.n
        if n == len(self.columns[0]):
            self.columns = [
                np.concatenate((column, np.empty(n, dtype=np.int64))) for column in self.columns
            ]
        for column, value in zip(self.columns, values, strict=True):
            if i < n:
                column[i + 1 : n + 1] = column[i:n]
            column[i] = value
        self.n = n + 1

    def delete(self, i: int) -> None:
        n = self.n
        for column in self.columns:
            column[i : n - 1] = column[i + 1 : n]
        self.n = n - 1

    def drop_front(self, k: int) -> None:
        n = self.n
        for column in self.columns:
            column[: n - k] = column[k:n]
        self.n = n - k

    def keep(self, kept: list[int]) -> None:
        """Keep only the entries at these ascending indices."""
        at = np.array(kept, dtype=np.intp)
        m = len(kept)
        for column in self.columns:
            column[:m] = column[at]
        self.n = m
