"""The run-limit gate, pass by pass: who is offered, who is held and why, in PBS's words."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from spies import CallSpy
from views import View, ids, job

from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.sched.core.order import fcfs_key
from batchd.sched.core.policy import MachineView, Overflow
from batchd.sched.policies.easy import EasyPolicy
from batchd.sched.policies.inorder import InOrderPolicy
from batchd.sched.policies.limits import (
    NO_LIMITS,
    SCHEDULING_OFF,
    Admitter,
    LimitGate,
    RunBook,
    RunCaps,
    RunLimits,
    by_submission,
    narrowest,
)

QUEUE = "Queue q job limit has been reached."
QUEUE_USER = "User has reached queue q running job limit."
SERVER = "Server job limit has been reached."
SERVER_USER = "User has reached server running job limit."
PAUSED = "Scheduling is turned off (server attribute scheduling = False)"


def test_caps_and_limits_say_whether_they_limit_anything() -> None:
    assert not RunCaps().capped
    assert RunCaps(max_run=0).capped and RunCaps(max_user_run=0).capped
    assert not NO_LIMITS.active
    assert SCHEDULING_OFF.active and not SCHEDULING_OFF.scheduling
    assert RunLimits(server=RunCaps(max_user_run=1)).active
    assert RunLimits(queues={"a": RunCaps(), "b": RunCaps(max_run=2)}).active
    assert not RunLimits(queues={"a": RunCaps()}).active


def test_the_book_counts_each_running_job_once() -> None:
    book = RunBook()
    a, b = job(1, 1, 5, user="u", queue="q"), job(2, 1, 5, user="v", queue="q")
    for j in (a, a, b):
        book.add(j)
    assert (book.total, book.running) == (2, {1, 2})
    assert (book.by_user["u"], book.by_user["v"], book.by_queue["q"]) == (1, 1, 2)
    assert book.by_queue_user[("q", "u")] == 1
    book.remove(a)
    book.remove(a)
    book.remove(job(3, 1, 5, user="u", queue="q"))  # never counted
    assert (book.total, book.running, book.by_user["u"], book.by_queue["q"]) == (1, {2}, 0, 1)
    assert book.by_queue_user[("q", "u")] == 0 and book.by_queue_user[("q", "v")] == 1


@pytest.mark.parametrize(
    ("caps", "server", "refusals"),
    [
        # Two running in q (one of u's), then u's jobs one by one: the third is refused.
        (RunCaps(max_run=4), RunCaps(), [None, None, QUEUE]),
        (RunCaps(max_user_run=3), RunCaps(), [None, None, QUEUE_USER]),
        (RunCaps(), RunCaps(max_run=4), [None, None, SERVER]),
        (RunCaps(), RunCaps(max_user_run=3), [None, None, SERVER_USER]),
        (RunCaps(max_run=4, max_user_run=3), RunCaps(max_run=2), [SERVER, SERVER, SERVER]),
        (RunCaps(max_run=2, max_user_run=1), RunCaps(max_run=1), [QUEUE, QUEUE, QUEUE]),
    ],
)
def test_each_limit_counts_running_and_admitted_jobs(
    caps: RunCaps, server: RunCaps, refusals: list[str | None]
) -> None:
    book = RunBook()
    book.add(job(1, 1, 5, user="u", queue="q"))
    book.add(job(2, 1, 5, user="v", queue="q"))
    admitter = Admitter(RunLimits(server=server, queues={"q": caps}), book)
    got = []
    for i in range(3):
        mine = job(10 + i, 1, 5, user="u", queue="q")
        got.append(admitter.refusal(mine))
        if got[-1] is None:
            admitter.admit(mine)
    assert got == refusals


def test_a_queue_limit_counts_only_its_own_queue_and_user() -> None:
    book = RunBook()
    book.add(job(1, 1, 5, user="u", queue="other"))
    limits = RunLimits(queues={"q": RunCaps(max_run=1, max_user_run=1)})
    admitter = Admitter(limits, book)
    assert admitter.refusal(job(2, 1, 5, user="u", queue="q")) is None
    admitter.admit(job(3, 1, 5, user="v", queue="q2"))
    assert admitter.refusal(job(4, 1, 5, user="u", queue="q")) is None
    assert admitter.refusal(job(5, 1, 5, user="u", queue="other")) is None  # not capped
    per_user = Admitter(RunLimits(server=RunCaps(max_user_run=1)), book)
    assert per_user.refusal(job(6, 1, 5, user="v", queue="q")) is None
    assert per_user.refusal(job(7, 1, 5, user="u", queue="q")) == SERVER_USER
    queue_user = Admitter(RunLimits(queues={"q": RunCaps(max_user_run=1)}), book)
    queue_user.admit(job(8, 1, 5, user="u", queue="other"))
    assert queue_user.refusal(job(9, 1, 5, user="u", queue="q")) is None


def test_limits_walk_by_priority_then_submission() -> None:
    a, b, c = job(1, 1, 5, submit=5), job(2, 1, 5, submit=3), job(3, 1, 5, submit=9)
    c.priority = 1
    d = job(4, 1, 5, submit=3)
    assert sorted([a, b, c, d], key=by_submission) == [c, b, d, a]
    wide = job(5, 4, 5)
    assert narrowest(wide) == 4
    wide.mold = SimpleNamespace(low=2)  # type: ignore[assignment]
    assert narrowest(wide) == 2


def gate(limits: RunLimits, inner: Any = None) -> LimitGate:
    return LimitGate(inner or EasyPolicy("fcfs-easy", fcfs_key), lambda: limits)


def test_without_limits_jobs_go_straight_to_the_policy() -> None:
    g = gate(NO_LIMITS)
    view = View(free=2)
    a, b = job(1, 1, 5), job(2, 1, 5)
    g.job_submitted(view, a)
    g.job_submitted(view, b)
    assert g.held == {} and g.inner.waiting() == [a, b]
    assert ids(g.schedule(view)) == [1, 2]
    assert g.book.total == 2


def test_a_queue_limit_holds_the_jobs_over_it_and_says_why() -> None:
    limits = RunLimits(queues={"q": RunCaps(max_run=2)})
    g = gate(limits)
    view = View(free=4)
    jobs = [job(i, 1, 5, submit=i, queue="q") for i in (1, 2, 3)]
    for j in jobs:
        g.job_submitted(view, j)
    assert g.inner.waiting() == [] and list(g.held) == [1, 2, 3]  # until the pass
    assert ids(g.schedule(view)) == [1, 2]
    assert g.waiting() == [jobs[2]] and g.head() is jobs[2]
    assert g.explain(jobs[2], 0) == QUEUE
    assert g.planned_starts(view) == [(jobs[2], NEVER)]
    assert g.planned_start(view, jobs[2]) == NEVER
    jobs[0].end = 5
    g.job_ended(View(now=5, free=3), jobs[0])
    assert g.book.total == 1
    assert ids(g.schedule(View(now=5, free=3))) == [3]
    assert g.why == {} and g.held == {}


def test_a_job_the_limits_no_longer_admit_is_taken_back() -> None:
    caps: dict[str, RunCaps] = {"q": RunCaps()}
    limits = RunLimits(queues=caps)
    g = LimitGate(EasyPolicy("fcfs-easy", fcfs_key), lambda: limits)
    busy = View(free=0, running=[(10, 4)])
    a, b = job(1, 1, 5, queue="q", submit=1), job(2, 1, 5, queue="q", submit=2)
    g.job_submitted(busy, a)
    g.job_submitted(busy, b)
    assert g.schedule(busy) == [] and g.inner.waiting() == [a, b]
    g.book.add(job(9, 1, 5, queue="q"))
    limits = RunLimits(queues={"q": RunCaps(max_run=2)})
    two_free = View(free=2, running=[(10, 2)])
    assert ids(g.schedule(two_free)) == [1]  # one running in q, one more may start
    assert g.inner.waiting() == [] and g.held == {2: b}
    assert g.waiting() == [b]
    assert g.explain(b, 0) == QUEUE
    assert g.planned_start(two_free, b) == NEVER


def test_a_job_wider_than_the_free_nodes_takes_no_slot() -> None:
    # max_run 1: the wide head (w3 > 2 free) is offered but leaves the slot to job 2,
    # which EASY backfills (ends at 5 <= shadow 10).
    g = gate(RunLimits(server=RunCaps(max_run=1)))
    view = View(free=2, running=[(10, 2)])
    wide, narrow = job(1, 3, 5, submit=1), job(2, 1, 5, submit=2)
    g.job_submitted(view, wide)
    g.job_submitted(view, narrow)
    assert ids(g.schedule(view)) == [2]
    assert g.inner.waiting() == [wide]


def test_scheduling_off_starts_nothing_and_says_so() -> None:
    limits = SCHEDULING_OFF
    g = LimitGate(EasyPolicy("fcfs-easy", fcfs_key), lambda: limits)
    view = View(free=4)
    a = job(1, 1, 5)
    g.job_submitted(view, a)
    assert g.schedule(view) == []
    assert g.paused and g.explain(a, 0) == PAUSED
    limits = NO_LIMITS
    assert ids(g.schedule(view)) == [1]  # the held job goes to the policy
    assert not g.paused and g.held == {}


def test_lifting_the_limits_releases_the_held_jobs_in_submission_order() -> None:
    limits = RunLimits(server=RunCaps(max_run=0))
    g = LimitGate(InOrderPolicy("fcfs", fcfs_key), lambda: limits)
    busy = View(free=0, running=[(10, 4)])
    jobs = [job(3, 1, 5, submit=3), job(1, 1, 5, submit=1), job(2, 1, 5, submit=2)]
    for j in jobs:
        g.job_submitted(busy, j)
    g.schedule(busy)
    assert g.waiting() == [jobs[1], jobs[2], jobs[0]] and g.head() is jobs[1]
    assert g.explain(jobs[0], 0) == SERVER
    limits = NO_LIMITS
    g.job_submitted(busy, job(4, 1, 5, submit=4))  # held too: others still are
    assert 4 in g.held
    assert g.schedule(busy) == []
    assert [j.id for j in g.inner.waiting()] == [1, 2, 3, 4]
    assert g.held == {} and g.why == {}
    assert g.explain(jobs[0], 0) is None


def test_withdrawing_a_held_or_offered_job() -> None:
    limits = RunLimits(server=RunCaps(max_run=1))
    g = gate(limits)
    busy = View(free=0, running=[(10, 4)])
    g.book.add(job(9, 4, 10))
    a = job(1, 1, 5)
    g.job_submitted(busy, a)
    g.schedule(busy)
    assert g.why == {1: SERVER}
    g.withdraw(busy, a)
    assert g.held == {} and g.why == {} and g.waiting() == []
    g.book.remove(job(9, 4, 10))
    b = job(2, 1, 5)
    g.job_submitted(busy, b)
    g.schedule(busy)
    assert g.inner.waiting() == [b]
    g.withdraw(busy, b)
    assert g.waiting() == [] and g.head() is None


def test_a_resumed_job_counts_and_a_resubmitted_one_does_not() -> None:
    g = gate(RunLimits(server=RunCaps(max_run=1)))
    view = View(free=3, running=[(10, 1)])
    a = job(1, 1, 10)
    g.job_resumed(view, a)
    assert g.book.total == 1
    g.job_submitted(view, a)  # its start did not happen after all
    assert g.book.total == 0
    assert ids(g.schedule(view)) == [1]


class Waking(InOrderPolicy):
    """An in-order policy that asks to be woken and ends jobs of its own."""

    wakes = True
    grid_wide = True
    machine = 3

    def next_wakeup(self, now: int) -> int | None:
        return now + 7

    def expired(self, view: MachineView) -> list[tuple[Job, Overflow]]:
        return [(job(5, 1, 1), "requeue")]

    def deadline(self, job: Job) -> tuple[int, Overflow] | None:
        return (job.id * 100, "kill")

    def report(self) -> dict[str, Any]:
        return {"inner": True}

    def explain(self, job: Job, now: int) -> str | None:
        return f"inner {job.id}"


def test_the_gate_passes_the_policys_own_answers_through() -> None:
    g = gate(NO_LIMITS, Waking("w", fcfs_key))
    assert (g.name, g.machine, g.serves_in_order, g.wakes, g.grid_wide) == (
        "w",
        3,
        True,
        True,
        True,
    )
    assert g.next_wakeup(10) == 17
    assert [(j.id, how) for j, how in g.expired(View())] == [(5, "requeue")]
    assert g.deadline(job(2, 1, 1)) == (200, "kill")
    assert g.report() == {"inner": True}
    assert g.explain(job(4, 1, 1), 0) == "inner 4"
    g.invalidate()
    plain = gate(NO_LIMITS, InOrderPolicy("fcfs", fcfs_key))
    assert plain.next_wakeup(10) is None and plain.expired(View()) == []
    assert (plain.wakes, plain.grid_wide) == (False, False)


def test_invalidate_reaches_the_policy() -> None:
    g = gate(NO_LIMITS)
    seen: list[bool] = []
    g.inner.invalidate = lambda: seen.append(True)  # type: ignore[method-assign]
    g.invalidate()
    assert seen == [True]


def test_the_book_counts_several_jobs_of_one_user_and_queue() -> None:
    book = RunBook()
    jobs = [job(i, 1, 5, user="u", queue="q") for i in (1, 2, 3)]
    for j in jobs:
        book.add(j)
    assert (book.by_user["u"], book.by_queue["q"], book.by_queue_user[("q", "u")]) == (3, 3, 3)
    book.remove(jobs[0])
    assert (book.by_user["u"], book.by_queue["q"], book.by_queue_user[("q", "u")]) == (2, 2, 2)


def test_gates_of_several_machines_share_one_book() -> None:
    book = RunBook()
    limits = RunLimits(server=RunCaps(max_run=1))
    first = LimitGate(EasyPolicy("a", fcfs_key), lambda: limits, book)
    second = LimitGate(EasyPolicy("b", fcfs_key), lambda: limits, book)
    assert first.book is book and second.book is book
    view = View(free=4)
    first.job_submitted(view, job(1, 1, 5))
    second.job_submitted(view, job(2, 1, 5))
    assert ids(first.schedule(view)) == [1]
    assert second.schedule(view) == []  # the server's one slot is taken on the other
    assert second.why == {2: SERVER}


def test_a_job_as_wide_as_the_free_nodes_takes_a_slot() -> None:
    g = gate(RunLimits(server=RunCaps(max_run=1)))
    view = View(free=1, running=[(10, 3)])
    a, b = job(1, 1, 50, submit=1), job(2, 1, 50, submit=2)
    g.job_submitted(view, a)
    g.job_submitted(view, b)
    assert ids(g.schedule(view)) == [1]
    assert g.held == {2: b} and g.why == {2: SERVER}


def test_a_job_withdrawn_before_any_pass_leaves_quietly() -> None:
    g = gate(RunLimits(server=RunCaps(max_run=1)))
    a = job(1, 1, 5)
    g.job_submitted(View(), a)
    g.withdraw(View(), a)
    assert g.held == {} and g.waiting() == []


def test_the_head_is_the_policys_before_any_held_job() -> None:
    limits = RunLimits(queues={"full": RunCaps(max_run=0)})
    g = gate(limits, InOrderPolicy("fcfs", fcfs_key))
    busy = View(free=0, running=[(10, 4)])
    held, offered = job(1, 1, 5, submit=1, queue="full"), job(2, 1, 5, submit=2)
    g.job_submitted(busy, held)
    g.job_submitted(busy, offered)
    g.schedule(busy)
    assert g.head() is offered
    assert g.waiting() == [offered, held]


def test_the_plan_lists_the_held_jobs_last_in_submission_order() -> None:
    limits = RunLimits(queues={"full": RunCaps(max_run=0)})
    g = gate(limits, InOrderPolicy("fcfs", fcfs_key))
    busy = View(free=0, running=[(10, 4)])
    late, early = job(1, 1, 5, submit=5, queue="full"), job(2, 1, 5, submit=1, queue="full")
    offered = job(3, 1, 5, submit=3)
    for j in (late, early, offered):
        g.job_submitted(busy, j)
    g.schedule(busy)
    assert g.planned_starts(busy) == [(offered, 10), (early, NEVER), (late, NEVER)]


class Spy(CallSpy):
    """Notes each call the gate passes on, with the view or time it was given."""

    def planned_start(self, view: MachineView, job: Job) -> int | None:
        self.calls.append(("planned", view, job.id))
        return 1234

    def explain(self, job: Job, now: int) -> str | None:
        self.calls.append(("explain", now, job.id))
        return None

    def next_wakeup(self, now: int) -> int | None:
        return now + 1  # but it does not wake: the gate must not ask

    def expired(self, view: MachineView) -> list[tuple[Job, Overflow]]:
        self.calls.append(("expired", view, 0))
        return [(job(9, 1, 1), "kill")]


def test_the_gate_passes_the_view_and_the_job_to_the_policy() -> None:
    spy = Spy()
    limits = RunLimits(queues={"q": RunCaps(max_run=1)})
    g = LimitGate(spy, lambda: limits)
    view = View(free=0, running=[(10, 4)])
    a, b = job(1, 1, 5, queue="q", submit=1), job(2, 1, 5, queue="q", submit=2)
    g.job_submitted(view, a)
    g.job_submitted(view, b)
    g.schedule(view)  # both offered: neither fits the free nodes, so neither takes a slot
    assert spy.calls == [("submitted", view, 1), ("submitted", view, 2)]
    spy.calls.clear()
    one = View(free=1, running=[(10, 3)])
    g.schedule(one)  # 1 takes the slot and starts: 2 is taken back
    assert spy.calls == [("withdraw", one, 2)]
    spy.calls.clear()
    g.job_ended(view, a)
    g.job_resumed(view, a)
    g.book.remove(a)
    assert g.planned_start(view, b) == NEVER
    g.schedule(view)  # the slot is free again: 2 comes back
    g.withdraw(view, b)
    assert g.planned_start(view, a) == 1234
    g.explain(a, 77)
    assert spy.calls == [
        ("ended", view, 1),
        ("resumed", view, 1),
        ("submitted", view, 2),
        ("withdraw", view, 2),
        ("planned", view, 1),
        ("explain", 77, 1),
    ]
    assert g.next_wakeup(5) is None and g.expired(view) == []
    spy.wakes = True
    assert g.next_wakeup(5) == 6
    assert [j.id for j, _ in g.expired(view)] == [9] and spy.calls[-1] == ("expired", view, 0)


def test_lifting_the_limits_passes_the_view_with_the_released_jobs() -> None:
    spy = Spy()
    limits = RunLimits(server=RunCaps(max_run=1))
    g = LimitGate(spy, lambda: limits)
    view = View(free=0, running=[(10, 4)])
    g.job_submitted(view, job(1, 1, 5))
    limits = NO_LIMITS
    g.schedule(view)
    g.job_submitted(view, job(2, 1, 5))
    assert spy.calls == [("submitted", view, 1), ("submitted", view, 2)]


def test_new_limits_are_walked_whole_even_when_nothing_else_changed() -> None:
    limits = [RunLimits(server=RunCaps(max_run=5))]
    g = LimitGate(EasyPolicy("fcfs-easy", fcfs_key), lambda: limits[0])
    view = View(free=1, running=[(10, 3)])  # neither job fits: both offered, none starts
    a, b = job(1, 2, 5, submit=1), job(2, 2, 5, submit=2)
    g.job_submitted(view, a)
    assert g.schedule(view) == [] and g.held == {}
    limits[0] = RunLimits(server=RunCaps(max_run=0))  # no job may run now
    g.job_submitted(view, b)
    assert g.schedule(view) == []
    assert g.held == {1: a, 2: b} and g.why == {1: SERVER, 2: SERVER}


def test_limits_lifted_and_imposed_again() -> None:
    limits = [RunLimits(server=RunCaps(max_run=0))]
    g = LimitGate(EasyPolicy("fcfs-easy", fcfs_key), lambda: limits[0])
    view = View(free=0, running=[(10, 4)])
    a, b = job(1, 1, 5, submit=1), job(2, 1, 5, submit=2)
    g.job_submitted(view, a)
    assert g.schedule(view) == [] and g.held == {1: a}
    limits[0] = NO_LIMITS
    assert g.schedule(view) == [] and g.held == {} and g.inner.waiting() == [a]
    limits[0] = RunLimits(server=RunCaps(max_run=0))
    g.job_submitted(view, b)
    assert g.schedule(view) == []
    assert g.held == {1: a, 2: b} and g.why == {1: SERVER, 2: SERVER}
