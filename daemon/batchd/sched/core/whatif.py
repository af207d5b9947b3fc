"""What-if simulation of a candidate queue order, on arrays, without touching Job objects.

A searching policy (a genetic algorithm over queue orders, iterative widening
of moldable jobs, a grid's machine selection) scores thousands of candidate
schedules per scheduling step. It describes the machine once (now, nodes in
service, running jobs' estimated ends and widths) and each candidate as three
parallel int64 arrays in the candidate order: widths, estimates (requested
walltime) and submit times. The answer is each job's start, in the same
positions:

- ``easy_starts``: exactly the engine running ``EasyPolicy`` with the
  candidate order as its queue order, if every job ran exactly its estimate
  (holding its nodes for ``max(estimate, 1)`` seconds, ``Job.duration``) and
  no other job arrived. A job with ``submit > now`` joins the queue at its
  submit time, in its candidate position. It takes no advance reservations:
  with one ahead, ``EasyPolicy`` plans on the full profile instead of its
  counting pass, which this simulation does not follow.
- ``conservative_starts``: each job in candidate order at its earliest start
  not before ``max(now, submit)`` on the profile of the running jobs, the
  advance reservations and the jobs placed before it: the plan
  ``ConservativePolicy`` makes when it rebuilds in that order and places later
  arrivals behind it.

A job wider than ``capacity`` gets ``NEVER`` (``batchd.model.times.NEVER``).

The fast path takes int64 arrays as they are; lists and other sequences are
converted, at a cost that ``bench/whatif.py`` measures (more than the
simulation itself). A search builds the arrays once per scheduling step with
``inputs_from`` (from a ``MachineView`` and jobs) and indexes them with each
candidate permutation; ``kernels.whatif.easy`` and ``.conservative`` are the
same simulations without the checks, for contiguous int64 arrays only
(reservations as a (k, 3) array).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import numpy.typing as npt

from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.sched.kernels import whatif as whatif_kernels

if TYPE_CHECKING:
    from batchd.sched.core.policy import MachineView

__all__ = [
    "NEVER",
    "Inputs",
    "conservative_starts",
    "easy_starts",
    "inputs_from",
    "reservations_of",
]

Ints = npt.NDArray[np.int64]
IntsLike = Ints | Sequence[int]

_NO_RESERVATIONS = np.empty((0, 3), dtype=np.int64)


_INT64 = np.dtype(np.int64)  # built-in dtypes are singletons: "is" is the cheap test


def _ints(values: IntsLike, name: str) -> Ints:
    """A one-dimensional contiguous int64 array: the argument itself when it is one.

    The test for that case comes first and is kept to four attribute reads:
    a search calls this five times per simulation.
    """
    if (
        type(values) is np.ndarray
        and values.dtype is _INT64
        and values.ndim == 1
        and values.flags.c_contiguous
    ):
        return values
    raw = np.asarray(values)
    if raw.size and raw.dtype.kind not in "iu":
        # Refused rather than truncated: 1.5 nodes or seconds is a caller's bug.
        raise TypeError(f"{name} must hold integers, got {raw.dtype}")
    arr: Ints = np.ascontiguousarray(raw, dtype=np.int64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr


def _check(
    running_ends: IntsLike,
    running_widths: IntsLike,
    widths: IntsLike,
    estimates: IntsLike,
    submits: IntsLike,
) -> tuple[Ints, Ints, Ints, Ints, Ints]:
    ends = _ints(running_ends, "running_ends")
    rwidths = _ints(running_widths, "running_widths")
    w = _ints(widths, "widths")
    e = _ints(estimates, "estimates")
    s = _ints(submits, "submits")
    if len(ends) != len(rwidths):
        raise ValueError(f"{len(ends)} running ends but {len(rwidths)} running widths")
    if not len(w) == len(e) == len(s):
        raise ValueError(f"{len(w)} widths, {len(e)} estimates and {len(s)} submits")
    return ends, rwidths, w, e, s


def easy_starts(
    now: int,
    capacity: int,
    running_ends: IntsLike,
    running_widths: IntsLike,
    widths: IntsLike,
    estimates: IntsLike,
    submits: IntsLike,
) -> Ints:
    """Start of each job under EASY backfilling with the candidate order as the queue order.

    ``running_ends`` are the running jobs' estimated ends, ascending (an end at
    or before ``now`` counts as ended), ``running_widths`` their widths in the
    same order, ``capacity`` the nodes in service. The waiting jobs are the
    parallel arrays ``widths``, ``estimates`` and ``submits`` in candidate order.
    """
    ends, rwidths, w, e, s = _check(running_ends, running_widths, widths, estimates, submits)
    out: Ints = whatif_kernels.easy(int(now), int(capacity), ends, rwidths, w, e, s)
    return out


def conservative_starts(
    now: int,
    capacity: int,
    running_ends: IntsLike,
    running_widths: IntsLike,
    widths: IntsLike,
    estimates: IntsLike,
    submits: IntsLike,
    reservations: Ints | Sequence[tuple[int, int, int]] | None = None,
) -> Ints:
    """Start of each job placed in candidate order at its earliest start (conservative).

    Arguments as for ``easy_starts``, plus the advance reservations not yet
    begun as (start, end, width) rows, which no job may use
    (``MachineView.reservations()``; see ``reservations_of``).
    """
    ends, rwidths, w, e, s = _check(running_ends, running_widths, widths, estimates, submits)
    if reservations is None or len(reservations) == 0:
        resv = _NO_RESERVATIONS
    else:
        resv = np.ascontiguousarray(reservations, dtype=np.int64)
        if resv.ndim != 2 or resv.shape[1] != 3:
            raise ValueError(f"reservations must be (start, end, width) rows, got {resv.shape}")
    out: Ints = whatif_kernels.conservative(int(now), int(capacity), ends, rwidths, w, e, s, resv)
    return out


class Inputs(NamedTuple):
    """The arguments of ``easy_starts`` and ``conservative_starts``, in their order."""

    now: int
    capacity: int
    running_ends: Ints
    running_widths: Ints
    widths: Ints
    estimates: Ints
    submits: Ints


def _column(jobs: Sequence[Job], values: Iterable[int]) -> Ints:
    return np.fromiter(values, dtype=np.int64, count=len(jobs))


def inputs_from(view: MachineView, jobs: Sequence[Job]) -> Inputs:
    """The machine of ``view`` and ``jobs`` in the given order, as what-if arrays.

    ``easy_starts(*inputs_from(view, jobs))`` is what the engine would do if
    ``jobs`` were the queue in that order.
    """
    return Inputs(
        view.now,
        view.capacity,
        np.array(view.running_ends(), dtype=np.int64),
        np.array(view.running_widths(), dtype=np.int64),
        _column(jobs, (j.width for j in jobs)),
        _column(jobs, (j.estimate for j in jobs)),
        _column(jobs, (j.submit for j in jobs)),
    )


def reservations_of(view: MachineView) -> Ints:
    """The view's advance reservations not yet begun, as (start, end, width) rows."""
    pending = view.reservations()
    if not pending:
        return _NO_RESERVATIONS
    return np.array(pending, dtype=np.int64).reshape(len(pending), 3)
