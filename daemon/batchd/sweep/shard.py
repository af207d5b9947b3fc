"""``--shard I/N``: the share of runs one task of an array job runs.

Standard library only: the sweep's and the studies' command lines parse it before
anything heavy loads.
"""

from __future__ import annotations

from dataclasses import dataclass

from batchd.sweep import SweepError


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (from 0) of ``count``: the runs whose position mod ``count`` is it."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        head, sep, tail = text.partition("/")
        if not (sep and head.isdigit() and tail.isdigit()) or not 0 <= int(head) < int(tail):
            raise SweepError(f"--shard {text!r}: expected I/N with 0 <= I < N, e.g. 0/8")
        return cls(int(head), int(tail))

    def owns(self, position: int) -> bool:
        """Whether the run at ``position`` (from 0) in the planned order is this shard's."""
        return position % self.count == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"
