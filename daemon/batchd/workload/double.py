"""Doubling a workload (Hamscher et al.'s grid paper, sec. 5.1): two copies of every job, interleaved.

"Some data traces do not produce enough backlog for the simulated scenarios
[...]. This is avoided by simply doubling workload." batchd doubles exactly so:

* every job appears twice, the copy submitted at the same second as its original,
  with the same width, estimate, runtime, user, queue and partition;
* jobs are taken in submit order (ties in their given order), each original
  directly followed by its copy;
* ids are renumbered 1, 2, ..., 2N in that order (an SWF record's field 1 too;
  its other fields, such as 17 "preceding job", are kept as they were).

The submit times, and so the arrival process, stay those of the workload; the
offered load doubles. Nothing is random: the same workload doubles to the same jobs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from batchd.model.job import Job, TraceLine

__all__ = ["double_jobs", "double_order"]

_T = TypeVar("_T")


def double_order(items: Sequence[_T], submits: Sequence[int]) -> list[_T]:
    """``items`` in submit order (stable), each one twice in a row."""
    order = sorted(range(len(items)), key=submits.__getitem__)
    out: list[_T] = []
    for i in order:
        out += (items[i], items[i])
    return out


def double_jobs(jobs: Sequence[Job]) -> list[Job]:
    """Replay jobs doubled: new ``Job`` objects, ids 1..2N (see the module's rule)."""
    doubled = double_order(jobs, [j.submit for j in jobs])
    out: list[Job] = []
    for new_id, job in enumerate(doubled, start=1):
        trace = job.trace
        if trace is not None:
            trace = TraceLine((new_id, *trace.fields[1:]), trace.tokens)
        out.append(
            Job(
                new_id,
                job.submit,
                job.width,
                job.estimate,
                job.runtime,
                job.user,
                job.queue,
                job.name,
                job.machine,
                job.priority,
                trace=trace,
                utility=job.utility,
                priority_class=job.priority_class,
            )
        )
    return out
