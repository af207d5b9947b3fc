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
    """Equally long int64 columns (the rows of one array); entries ``head`` to
    ``head + n`` of each are live.

    An insert or a removal moves the shorter side: the jobs that leave a queue to
    start are mostly at its front, and those that arrive mostly go to its end.
    """

    __slots__ = ("rows", "head", "n")

    def __init__(self, *values: Sequence[int]) -> None:
        n = len(values[0])
        self.rows = np.empty((len(values), max(64, 2 * n)), dtype=np.int64)
        for row, row_values in zip(self.rows, values, strict=True):
            row[:n] = row_values
        self.head = 0
        self.n = n

    def live(self, c: int) -> np.ndarray:
        """Column ``c``'s live entries (a view: copy what you keep)."""
        return self.rows[c, self.head : self.head + self.n]

    def at(self, c: int, i: int) -> int:
        return int(self.rows[c, self.head + i])

    def insert(self, i: int, *values: int) -> None:
        head, n = self.head, self.n
        rows = self.rows
        if head and i < n - i:  # the entries before i move one to the front
            rows[:, head - 1 : head + i - 1] = rows[:, head : head + i]
            self.head = head = head - 1
        else:
            if head + n == rows.shape[1]:
                rows = self._room()
                head = self.head
            if i < n:
                rows[:, head + i + 1 : head + n + 1] = rows[:, head + i : head + n]
        rows[:, head + i] = values
        self.n = n + 1

    def _room(self) -> np.ndarray:
        """Room after the live entries: they move to the front, or the rows double."""
        head, n = self.head, self.n
        if head > n // 2:
            self.rows[:, :n] = self.rows[:, head : head + n]
        else:
            rows = np.empty((self.rows.shape[0], 2 * self.rows.shape[1]), dtype=np.int64)
            rows[:, :n] = self.rows[:, head : head + n]
            self.rows = rows
        self.head = 0
        return self.rows

    def delete(self, i: int) -> None:
        head, n = self.head, self.n
        rows = self.rows
        if i < n - 1 - i:  # the entries before i move one to the back
            rows[:, head + 1 : head + i + 1] = rows[:, head : head + i]
            self.head = head + 1
        else:
            rows[:, head + i : head + n - 1] = rows[:, head + i + 1 : head + n]
        self.n = n - 1

    def drop_front(self, k: int) -> None:
        self.head += k
        self.n -= k

    def remove(self, at: list[int]) -> None:
        """Drop the entries at these ascending indices."""
        head, n = self.head, self.n
        m = n - len(at)
        self.rows[:, :m] = np.delete(self.rows[:, head : head + n], at, axis=1)
        self.head = 0
        self.n = m
