"""The base of every plan, and full plans of a waiting queue onto it.

Every planner starts from the same picture: the running jobs until their
estimated ends, and the advance reservations not yet begun, which no policy
may move (``base_profile``). Importing this module loads the compiled profile
loops; the counting passes of EASY and in-order scheduling never need it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from batchd.model.job import Job
from batchd.sched.core.profile import Profile

if TYPE_CHECKING:
    from batchd.sched.core.order import OrderedQueue
    from batchd.sched.core.policy import MachineView


def base_profile(view: MachineView, room: int) -> Profile:
    """Free nodes over time: running jobs and reservations, room for ``room`` more jobs."""
    pending = view.reservations()
    ends, widths = view.running_arrays()
    profile = Profile.of_running(view.capacity, view.now, ends, widths, room=room + len(pending))
    for start, end, width in pending:
        profile.reserve(start, end, width)
    return profile


def running_arrays_of(view: MachineView) -> tuple[np.ndarray, np.ndarray]:
    """``MachineView.running_arrays`` of a view that keeps only the lists."""
    ends = np.array(view.running_ends(), dtype=np.int64)
    return ends, np.array(view.running_widths(), dtype=np.int64)


def plan_queue(queue: OrderedQueue, view: MachineView) -> tuple[Profile, np.ndarray]:
    """A full plan of the queue in its order onto the base profile: (profile, starts)."""
    profile = base_profile(view, len(queue))
    widths, durations = queue.arrays()
    return profile, profile.plan(widths, durations, view.now)


def plan_in_order(profile: Profile, jobs: Sequence[Job], now: int) -> list[int]:
    """Planned starts of ``jobs`` placed in this order on ``profile``, each at its earliest."""
    if not jobs:
        return []
    widths = np.fromiter((j.width for j in jobs), dtype=np.int64, count=len(jobs))
    durations = np.fromiter((j.duration for j in jobs), dtype=np.int64, count=len(jobs))
    starts: list[int] = profile.plan(widths, durations, now).tolist()
    return starts


def machine_signature(view: MachineView) -> tuple[object, ...]:
    """What a plan depends on besides the queue and the time."""
    return (
        view.capacity,
        tuple(view.running_ends()),
        tuple(view.running_widths()),
        tuple(view.reservations()),
    )
