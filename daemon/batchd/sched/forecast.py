"""Profiles of what a machine holds, and full plans of a waiting queue onto them.

Every planner starts from the same picture: the running jobs until their
estimated ends, and the advance reservations not yet begun, which no policy
may move.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from batchd.model.job import Job
from batchd.sched.profile import Profile

if TYPE_CHECKING:
    from batchd.sched.policy import MachineView


def running_profile(view: MachineView, room: int) -> Profile:
    """Free nodes over time: running jobs and reservations, room for ``room`` more jobs."""
    pending = view.reservations()
    profile = Profile.of_running(
        view.capacity,
        view.now,
        view.running_ends(),
        view.running_widths(),
        room=room + len(pending),
    )
    for start, end, width in pending:
        profile.reserve(start, end, width)
    return profile


def forecast(view: MachineView, jobs: Sequence[Job]) -> list[int]:
    """Planned starts of ``jobs`` placed in this order, each at its earliest start."""
    if not jobs:
        return []
    profile = running_profile(view, len(jobs))
    widths = np.fromiter((j.width for j in jobs), dtype=np.int64, count=len(jobs))
    durations = np.fromiter((j.duration for j in jobs), dtype=np.int64, count=len(jobs))
    return profile.plan(widths, durations, view.now).tolist()
