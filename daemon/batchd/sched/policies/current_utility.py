"""What a waiting job would earn if it started now (Lee's utility paper, sec. 6): its current utility.

A job that starts at ``now`` and runs its estimate ends ``now + duration - submit``
seconds after its submission; its utility function's value there is its *current
utility* (0 for a job without a function). Per node-hour it is that value over the
node-hours the job asks for, ``width x duration / 3600``. The seed seeds its genetic
search with the orders by both, highest first; ``utility-easy`` serves the queue by the
second.
"""

from __future__ import annotations

from collections.abc import Callable

from batchd.model.job import Job


def current_utility(job: Job, now: int) -> float:
    """What ``job`` earns if it starts at ``now`` and runs its estimate."""
    if job.utility is None:
        return 0.0
    return job.utility.value_at(now + job.duration - job.submit)


def per_node_hour(job: Job, now: int) -> float:
    """``current_utility`` over the node-hours the job asks for."""
    return current_utility(job, now) * 3600.0 / (job.width * job.duration)


def utility_rate_key(now: int) -> Callable[[Job], tuple[float, ...]]:
    """The order of ``utility-easy`` at ``now``: the PBS priority (qsub -p) first, as in
    every order, then current utility per node-hour, highest first, then arrival."""

    def key(job: Job) -> tuple[float, ...]:
        return (-job.priority, -per_node_hour(job, now), job.submit, job.id)

    return key
