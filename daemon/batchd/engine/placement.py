"""What a placement may do to the job it starts: the width checks and the reshaping of
a moldable job to the width its policy chose."""

from __future__ import annotations

from batchd.model.job import Job


class PlacementError(RuntimeError):
    """A policy placed a job where, or as wide as, it cannot run: a bug in the policy."""


def moldable_to(job: Job, width: int) -> bool:
    """Whether ``job`` may run on ``width`` nodes other than its current width."""
    return job.mold is not None and job.mold.allows(width)


def widths_text(job: Job) -> str:
    """The widths a job may run on, for a PlacementError."""
    return str(job.width) if job.mold is None else f"{job.mold.range_text()} nodes"


def reshape(job: Job, width: int) -> None:
    """A moldable job takes ``width`` nodes: its runtime and estimate follow its model."""
    mold = job.mold
    assert mold is not None
    job.width = width
    job.runtime = mold.runtime_on(width)
    job.estimate = mold.estimate_on(width)
