"""dynP's plans of the waiting queue in each order, kept from one step to the next.

A conservative plan stays the plan of its queue while jobs start as it planned them:
made again later onto the running jobs, every waiting job gets the start it had.
A job's old slot still fits (the jobs that started since were planned beside it),
and no earlier one opened (the profile only gained those reservations), as long as
no start it held has passed. So a self-tuning step whose base (running jobs and
advance reservations) is the last step's with only the jobs started since added,
and whose queue gained only newcomers, need not plan an order in full: the jobs
before the first newcomer keep their starts, and only the newcomers and the jobs
behind the first are placed again, after those leave their slots in the kept plan.
dynP steps at each submission (one newcomer). moldable-iterative, stepping at each
pass, places the jobs of a second with the same two functions (``with_newcomers``,
``placed_again``) and trusts the engine's events for its base. An order loses
its kept plan when a job it planned elsewhere starts now, when a start it held has
passed, and every kept plan goes with any other change (an early end, a
withdrawal, a plan made by another path): those steps plan in full.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.sched.core.order import OrderedQueue
from batchd.sched.core.profile import Profile, room_for

# Waiting jobs from which a step keeps its plans for the next: below, what keeping them
# costs each step (following the starts, checking the base) is more than what planning
# again from them saves.
KEEP_FROM = 256


@dataclass(slots=True)
class OrderPlan:
    """One order's plan: its profile (base plus every reservation) and the queue's
    widths, durations and starts in that order, aligned with its OrderedQueue.
    ``holds``: the plan is still the plan of that queue on the last step's base."""

    profile: Profile
    widths: np.ndarray
    durations: np.ndarray
    starts: np.ndarray
    holds: bool = True


class KeptOrders:
    """The last step's base and plans, and what happened to them since.

    Each order's widths and durations stay aligned with its queue while jobs start
    (they are the arrays a plan needs, made once), whether or not its plan holds.
    """

    __slots__ = ("base", "plans", "started", "hits")

    def __init__(self) -> None:
        self.base: Profile | None = None
        self.plans: dict[str, OrderPlan] = {}
        self.started: list[tuple[int, int, int]] = []  # (start, end, width) since the step
        self.hits = 0  # orders planned from a kept plan

    def drop(self) -> None:
        self.base = None
        self.plans = {}
        self.started = []

    def keep(self, base: Profile, plans: dict[str, OrderPlan]) -> None:
        self.base = base
        self.plans = plans
        self.started = []

    def leaving(
        self, current: str, queues: Mapping[str, OrderedQueue], due: list[Job], now: int
    ) -> None:
        """``due`` start now, as the plan in force (``current``) has them; they have
        left the current queue and not yet the others."""
        if self.base is None:
            return  # nothing kept
        for order, plan in list(self.plans.items()):
            if order == current:
                # Every job the plan in force starts now.
                places = np.flatnonzero(plan.starts == now).tolist()
                if len(places) != len(due):
                    del self.plans[order]
                    continue
            else:
                queue = queues[order]
                places = sorted(queue.index(job) for job in due)
                if bool((plan.starts[places] != now).any()):
                    plan.holds = False  # it planned one of them elsewhere
            plan.widths = _removed(plan.widths, places)
            plan.durations = _removed(plan.durations, places)
            plan.starts = _removed(plan.starts, places)
        self.started += [(now, now + job.duration, job.width) for job in due]

    def base_holds(self, base: Profile, now: int) -> bool:
        """``base`` is the kept one with only the jobs started since added."""
        if self.base is None:
            return False
        expected = self.base.copy(room_for(len(self.started)))
        expected.advance(now)
        for start, end, width in self.started:
            expected.reserve(start, end, width)
        return expected.same_steps(base)

    def plan(
        self,
        order: str,
        queue: OrderedQueue,
        newcomers: Sequence[Job],
        base: Profile,
        now: int,
        *,
        holding: bool,
    ) -> OrderPlan:
        """The plan of ``queue`` (in ``order``) onto ``base``: from the kept one when
        ``holding`` (the base holds: ``base_holds``) and that plan does, else afresh."""
        kept = self.plans.get(order)
        shapes = None if kept is None else with_newcomers(kept, queue, newcomers)
        if shapes is None:
            widths, durations = queue.arrays()
        else:
            widths, durations, starts, at = shapes
            if holding and kept is not None and kept.holds:
                again = placed_again(kept.profile, shapes, now)
                if again is not None:
                    self.hits += 1
                    return again
        return planned_on(base.copy(room_for(len(widths))), widths, durations, now)


def planned_on(profile: Profile, widths: np.ndarray, durations: np.ndarray, now: int) -> OrderPlan:
    """The plan of these jobs, in this order, made on ``profile`` itself."""
    return OrderPlan(profile, widths, durations, profile.plan(widths, durations, now))


Shapes = tuple[np.ndarray, np.ndarray, np.ndarray, int]  # widths, durations, starts, at


def placed_again(
    kept: Profile, shapes: Shapes, now: int, *, in_place: bool = False
) -> OrderPlan | None:
    """The newcomers (the first at ``at``) and the jobs behind the first placed again
    on the kept plan's profile (a copy, unless ``in_place``); None, the profile
    untouched, if a start the plan held has passed."""
    widths, durations, starts, at = shapes
    if int(starts.min()) < now:  # a newcomer's entry is NEVER; a kept queue is never empty
        return None
    behind = slice(at, None)  # newcomers among them are at NEVER: they hold nothing
    # Copied with the room the release and the plan take, not with the kept one's own.
    profile = kept if in_place else kept.copy(2 * room_for(len(widths) - at))
    profile.advance(now)
    profile.release_all(widths[behind], durations[behind], starts[behind])
    starts[at:] = profile.plan(widths[at:], durations[at:], now)
    return OrderPlan(profile, widths, durations, starts)


def with_newcomers(plan: OrderPlan, queue: OrderedQueue, newcomers: Sequence[Job]) -> Shapes | None:
    """The kept arrays with the newcomers' entries (start NEVER) where the queue has
    them, and the place of the first; None if they do not match the queue."""
    widths, durations, starts = plan.widths, plan.durations, plan.starts
    if len(starts) + len(newcomers) != len(queue):
        return None
    if not newcomers:
        return widths, durations, starts, len(starts)
    places = sorted(queue.index(job) for job in newcomers)
    widths = _inserted(widths, places, [queue.widths[p] for p in places])
    durations = _inserted(durations, places, [queue.durations[p] for p in places])
    starts = _inserted(starts, places, [NEVER] * len(places))
    return widths, durations, starts, places[0]


def _inserted(values: np.ndarray, places: list[int], new: list[int]) -> np.ndarray:
    """``values`` with ``new[k]`` at ``places[k]`` of the result (ascending places); a
    copy made in slices (np.insert costs several times as much for one value)."""
    out = np.empty(len(values) + len(places), dtype=values.dtype)
    taken = 0  # values copied so far
    for k, at in enumerate(places):
        out[taken + k : at] = values[taken : at - k]
        out[at] = new[k]
        taken = at - k
    out[taken + len(places) :] = values[taken:]
    return out


# From this many places a removal keeps the rest by a mask: below, slices cost less.
_REMOVED_BY_MASK_FROM = 16


def _removed(values: np.ndarray, places: list[int]) -> np.ndarray:
    """``values`` without the entries at ``places`` (ascending, distinct): a new array
    (the kept arrays may be shared by orders that agree), made in slices when few go."""
    if len(places) >= _REMOVED_BY_MASK_FROM:
        keep = np.ones(len(values), dtype=bool)
        keep[places] = False
        return values[keep]
    out = np.empty(len(values) - len(places), dtype=values.dtype)
    written = 0
    copied = 0  # values[:copied] are done with
    for at in places:
        out[written : written + at - copied] = values[copied:at]
        written += at - copied
        copied = at + 1
    out[written:] = values[copied:]
    return out
