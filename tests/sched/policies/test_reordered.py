"""EASY in an order chosen at each pass: ranks, a new order, and the pass in it."""

from __future__ import annotations

import pytest
from views import View, ids, job

from batchd.model.job import Job
from batchd.sched.core.policy import MachineView
from batchd.sched.policies.reordered import ReorderedEasy


class Chosen(ReorderedEasy):
    """Serves the order it is told (None: the one in force)."""

    def __init__(self) -> None:
        super().__init__("chosen")
        self.order: list[Job] | None = None

    def choose(self, view: MachineView) -> list[Job] | None:
        return self.order


def test_jobs_are_served_in_submission_order_until_an_order_is_chosen() -> None:
    view = View(free=2)
    policy = ReorderedEasy("plain")
    a, b, c = job(1, 2, 5, submit=9), job(2, 1, 5), job(3, 1, 5)
    for j in (a, b, c):
        policy.job_submitted(view, j)
    assert policy.waiting() == [a, b, c]  # ranks, not submit times
    assert policy.choose(view) is None
    assert ids(policy.schedule(view)) == [1]


def test_a_chosen_order_is_the_pass_order() -> None:
    view = View(free=2)
    policy = Chosen()
    a, b, c = job(1, 2, 5), job(2, 1, 5), job(3, 1, 5)
    for j in (a, b, c):
        policy.job_submitted(view, j)
    policy.order = [b, c, a]
    assert ids(policy.schedule(view)) == [2, 3]
    assert policy.waiting() == [a]
    policy.order = None
    assert ids(policy.schedule(view)) == [1]


def test_a_new_order_holds_and_later_jobs_join_its_end() -> None:
    view = View(free=0, running=[(10, 4)])
    policy = ReorderedEasy("r")
    a, b, c, d = job(1, 1, 5), job(2, 1, 5), job(3, 1, 5), job(4, 1, 5)
    for j in (a, b, c):
        policy.job_submitted(view, j)
    policy.reorder([c, a, b])
    assert policy.waiting() == [c, a, b]
    policy.job_submitted(view, d)
    assert policy.waiting() == [c, a, b, d]
    policy.withdraw(view, a)
    policy.reorder([d, b, c])  # the withdrawn job has no rank any more
    assert policy.waiting() == [d, b, c]


def test_an_order_that_is_not_the_waiting_jobs_is_refused() -> None:
    view = View(free=0, running=[(10, 4)])
    policy = ReorderedEasy("r")
    a, b = job(1, 1, 5), job(2, 1, 5)
    for j in (a, b):
        policy.job_submitted(view, j)
    for bad in ([a], [a, a], [a, job(3, 1, 5)], [a, b, b]):
        with pytest.raises(
            ValueError, match=r"^r: a new order must hold exactly the waiting jobs$"
        ):
            policy.reorder(bad)
    assert policy.waiting() == [a, b]


def test_started_jobs_leave_the_order() -> None:
    view = View(free=1)
    policy = Chosen()
    a, b = job(1, 1, 5), job(2, 1, 5)
    for j in (a, b):
        policy.job_submitted(view, j)
    assert ids(policy.schedule(view)) == [1]
    policy.order = [b]  # a has started: b alone is the waiting queue
    assert ids(policy.schedule(view)) == [2]


def test_the_order_is_chosen_for_the_machine_as_it_is() -> None:
    seen: list[MachineView] = []

    class Watching(ReorderedEasy):
        def choose(self, view: MachineView) -> list[Job] | None:
            seen.append(view)
            return None

    view = View(free=1)
    policy = Watching("w")
    policy.job_submitted(view, job(1, 1, 5))
    assert ids(policy.schedule(view)) == [1]
    assert seen == [view]
