"""Job ids as Slurm writes them, and the daemon's ids they stand for.

The daemon's ``12.server`` is Slurm's ``12``; an array ``12[].server`` is ``12``; its
task ``12[3].server`` is ``12_3``. Slurm's commands take ``12``, ``12_3``,
``12_[1-3,5]`` and ``12_*``; sacct also ``12.batch`` (a job's batch step).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..hints import Any
from .hostlist import split_top

_ID = re.compile(r"^(\d+)(?:_(\d+|\*|\[[0-9,\-]+\]))?(?:\.(batch|extern|\d+))?$")


@dataclass(frozen=True)
class JobSelector:
    """One id given on a command line: a job (or a whole array), or some of its tasks."""

    seq: int
    tasks: tuple[int, ...] | None = None  # None: the job, or the whole array
    step: str | None = None  # sacct's step part, ``batch`` or a number

    def matches(self, job: dict[str, Any]) -> bool:
        if job.get("seq") != self.seq:
            return False
        if self.tasks is None:
            return True
        return job.get("array_index") in self.tasks


def parse_ids(text: str, allow_steps: bool = False) -> list[JobSelector]:
    """The selectors of a comma-separated id list (``12,13_2,14_[1-3]``); ValueError
    ``Invalid job id specified`` (Slurm's words) for anything else."""
    out: list[JobSelector] = []
    for part in split_top(text):
        m = _ID.match(part)
        if m is None or (m.group(3) is not None and not allow_steps):
            raise ValueError(f"Invalid job id: {part}")
        seq, tasks, step = int(m.group(1)), m.group(2), m.group(3)
        out.append(JobSelector(seq, _tasks(tasks, part), step))
    return out


def _tasks(text: str | None, whole: str) -> tuple[int, ...] | None:
    if text is None or text == "*":
        return None
    if not text.startswith("["):
        return (int(text),)
    found: list[int] = []
    for item in text[1:-1].split(","):
        lo, sep, hi = item.partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()) or (sep and int(hi) < int(lo)):
            raise ValueError(f"Invalid job id: {whole}")
        if sep and int(hi) - int(lo) > 1_000_000:
            raise ValueError(f"Invalid job id: {whole}")
        found.extend(range(int(lo), int(hi) + 1) if sep else [int(lo)])
    return tuple(found)


def slurm_id(job: dict[str, Any]) -> str:
    """The id Slurm shows for a job view of the daemon (``12``, ``12_3``)."""
    index = job.get("array_index")
    seq = job["seq"]
    return f"{seq}_{index}" if index is not None else str(seq)


def array_job_id(job: dict[str, Any]) -> str:
    """SLURM_ARRAY_JOB_ID / %A: the array's id (the job's own for other jobs)."""
    return str(job["seq"])
