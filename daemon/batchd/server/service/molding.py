"""Moldable jobs at qsub and qalter (Sabin et al.'s moldable paper): the width range and speedup of a request.

A moldable job asks for ``nodes`` to ``nodes_max`` nodes. Its requested width is the
minimum: the walltime and the emulated runtime (``BATCHD_RUNTIME``) it is submitted
with are those on ``nodes`` nodes. With ``fixed`` they hold at every width (Slurm's
``-N min-max``: a time limit does not scale with the width); with ``downey:A:SIGMA``
they scale by S(nodes) / S(n) on ``n`` nodes, and since Downey's S never falls with
the width, the walltime given is the longest the job can be given. The queue's limits
and the machine's size are checked against the widest width.
"""

from __future__ import annotations

from batchd.model.job import Job
from batchd.model.moldable import FIXED, Moldable, MoldError, Speedup
from batchd.server.errors import bad_request


def submitted_mold(
    nodes: int, nodes_max: int | None, speedup: str | None, walltime: int, runtime: int
) -> Moldable | None:
    """The range and model of a new job; None for a rigid job that names neither."""
    if nodes_max is None and speedup is None:
        return None
    return _mold(nodes, nodes if nodes_max is None else nodes_max, speedup, walltime, runtime)


def altered_mold(
    job: Job,
    nodes: int | None,
    nodes_max: int | None,
    speedup: str | None,
    walltime: int,
    runtime: int,
) -> Moldable | None:
    """A waiting job's range and model after qalter.

    ``nodes`` alone asks for that many nodes: the range becomes ``nodes..nodes`` (the
    model stays). ``nodes_max`` alone moves the top of the range. A job that had no
    range and is given neither ``nodes_max`` nor ``speedup`` stays rigid.
    """
    mold = job.mold
    if mold is None and nodes_max is None and speedup is None:
        return None
    low = nodes if nodes is not None else (job.width if mold is None else mold.low)
    if nodes_max is not None:
        high = nodes_max
    elif nodes is not None or mold is None:
        high = low
    else:
        high = mold.high
    if speedup is None and mold is not None:
        speedup = mold.speedup.format()
    return _mold(low, high, speedup, walltime, runtime)


def widest(nodes: int, mold: Moldable | None) -> int:
    """The width the queue's limits and the machine's size are checked against."""
    return nodes if mold is None else mold.high


def _mold(low: int, high: int, speedup: str | None, walltime: int, runtime: int) -> Moldable:
    if high < low:
        raise bad_request(
            f"nodes: the range {low}-{high} ends below its start: nodes_max {high} is "
            f"less than nodes {low}"
        )
    try:
        model = FIXED if speedup is None else Speedup.parse(speedup)
        return Moldable(low, high, model, width=low, runtime=runtime, estimate=walltime)
    except MoldError as exc:
        raise bad_request(f"speedup: {exc}") from None
