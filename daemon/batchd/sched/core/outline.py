"""A plan's outline: what the planned-schedule gauges take from the plan of a machine's
waiting jobs, told by the policies that keep their plan without walking it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter

from batchd.model.job import Job
from batchd.model.times import NEVER


@dataclass(frozen=True, slots=True)
class PlanOutline:
    """The head of a plan and its extent."""

    head_submit: int | None  # the submission time of the job first in line (None: none waits)
    head_start: int  # its planned start (NEVER: none)
    end: int | None  # the latest planned end (None: no job has a planned start)
    first: int  # the earliest planned start (NEVER: none)

    @classmethod
    def of(cls, plan: list[tuple[Job, int]]) -> PlanOutline:
        """The outline of a whole plan, by walking it."""
        if not plan:
            return EMPTY
        # job.duration, spelled out: a property call per waiting job doubles the walk.
        ends = [
            start + (j.estimate if j.estimate > 0 else 1) for j, start in plan if start != NEVER
        ]
        head, start = plan[0]
        return cls(head.submit, start, max(ends) if ends else None, min(map(itemgetter(1), plan)))

    def then(self, tail: Iterable[tuple[Job, int]]) -> PlanOutline:
        """The outline of this plan with ``tail`` (jobs and their starts) after it."""
        head_submit, head_start, end, first = (
            self.head_submit,
            self.head_start,
            self.end,
            self.first,
        )
        for job, start in tail:
            if head_submit is None:
                head_submit, head_start = job.submit, start
            if start != NEVER:
                finish = start + job.duration
                end = finish if end is None or finish > end else end
            first = min(first, start)
        outline = PlanOutline(head_submit, head_start, end, first)
        return self if outline == self else outline


EMPTY = PlanOutline(None, NEVER, None, NEVER)


class Extent:
    """The latest planned end and the earliest planned start of a plan kept as parallel
    lists of starts and durations, kept up to date while entries are only appended.

    The lists are recognized by identity: a plan made again is a new list, and
    ``changes`` counts every change to the same lists other than an append (an
    ``OrderedQueue``'s count). Otherwise, only the entries appended since are read.
    """

    __slots__ = ("_starts", "_seen", "_changes", "end", "first")

    def __init__(self) -> None:
        self._starts: list[int] | None = None  # held, so that its identity stays its own
        self._seen = 0
        self._changes = 0
        self.end: int | None = None
        self.first = NEVER

    def of(self, starts: list[int], durations: Sequence[int], changes: int = 0) -> Extent:
        n = len(starts)
        if starts is not self._starts or changes != self._changes or n < self._seen:
            self._starts, self._changes, self._seen = starts, changes, 0
            self.end, self.first = _extent(starts, durations)
        elif n > self._seen:
            end, first = _extent(starts[self._seen :], durations[self._seen : n])
            if end is not None and (self.end is None or end > self.end):
                self.end = end
            self.first = min(self.first, first)
        self._seen = n
        return self


def _extent(starts: Sequence[int], durations: Sequence[int]) -> tuple[int | None, int]:
    """(latest end of the planned entries or None, earliest start or NEVER)."""
    if len(starts) < 64:
        ends = [s + d for s, d in zip(starts, durations, strict=True) if s != NEVER]
        return (max(ends) if ends else None), min(starts, default=NEVER)
    import numpy as np

    s = np.fromiter(starts, dtype=np.int64, count=len(starts))
    d = np.fromiter(durations, dtype=np.int64, count=len(starts))
    planned = s != NEVER
    end = int((s[planned] + d[planned]).max()) if bool(planned.any()) else None
    return end, int(s.min())
