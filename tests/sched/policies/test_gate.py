"""The window gate: jobs offered only while their window is open (and their estimate fits),
overflow at the close, and the wake-ups and plans it gives.

The window used here is open over [10,20) and [30,60), closed before, between and after
(``next_change`` says None past 60): its longest opening is 30 s.
"""

from __future__ import annotations

from typing import Any

from spies import CallSpy
from views import View, ids, job

from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.model.windows import AlwaysOpen
from batchd.sched.core.order import fcfs_key
from batchd.sched.core.outline import PlanOutline
from batchd.sched.core.policy import MachineView, Overflow
from batchd.sched.policies.gate import Shifted, WindowClass, WindowGate, shifted
from batchd.sched.policies.inorder import InOrderPolicy


class Spans:
    """Open over the given [start, end) spans (end None: open from start on)."""

    text = "spans"

    def __init__(self, *spans: tuple[int, int | None]) -> None:
        self.spans = spans

    def is_open(self, t: int) -> bool:
        return any(a <= t and (b is None or t < b) for a, b in self.spans)

    def next_change(self, t: int) -> int | None:
        edges = [x for a, b in self.spans for x in (a, b) if x is not None and x > t]
        return min(edges, default=None)


class Cls(WindowClass):
    def __init__(self, window: Any) -> None:
        self.window = window

    def closed(self, opens: int | None) -> str:
        return f"closed, opens {opens}"

    def unfit(self, job: Job, closes: int) -> str:
        return f"job {job.id} does not fit before {closes}"


WINDOW = Cls(Spans((10, 20), (30, 60)))


def make(
    classify: Any = None, *, inner: Any = None, overflow: Overflow = "kill", must_fit: bool = True
) -> WindowGate:
    policy = inner or InOrderPolicy("fcfs", fcfs_key)
    classify = classify or (lambda j: WINDOW if j.queue == "w" else None)
    return WindowGate("gate", policy, classify, overflow=overflow, must_fit=must_fit)


def windowed(i: int, estimate: int, submit: int = 0) -> Job:
    return job(i, 1, estimate, submit, queue="w")


def test_shifted_windows_count_from_the_origin() -> None:
    window = Spans((110, 120))
    assert shifted(window, 0) is window
    moved = shifted(window, 100)
    assert isinstance(moved, Shifted) and moved.text == "spans"
    assert not moved.is_open(9) and moved.is_open(10) and not moved.is_open(20)
    assert moved.next_change(0) == 10 and moved.next_change(10) == 20
    assert moved.next_change(20) is None


def test_eligibility_by_window_and_fit() -> None:
    gate = make()
    jobs = {e: windowed(e, e) for e in (10, 11, 31, 40)}
    for j in jobs.values():
        gate.classes[j.id] = WINDOW
    assert gate.eligible(job(1, 1, 5), 0)  # no class
    assert not gate.eligible(jobs[10], 5)  # closed
    assert gate.eligible(jobs[10], 10)  # ends at 20, the close
    assert not gate.eligible(jobs[11], 10)
    assert gate.eligible(jobs[31], 10)  # longer than every opening: runs and overflows
    assert gate.eligible(jobs[11], 30)
    assert gate.eligible(jobs[31], 30)  # still longer than every opening
    assert gate.longest(WINDOW, 0) == 30
    loose = make(must_fit=False)
    loose.classes[jobs[40].id] = WINDOW
    assert loose.eligible(jobs[40], 10) and not loose.eligible(jobs[40], 25)


def test_a_window_that_stays_open_holds_any_job() -> None:
    endless = Cls(Spans((10, None)))
    gate = make(lambda j: endless)
    j = windowed(1, 1000)
    gate.classes[1] = endless
    assert gate.eligible(j, 10) and not gate.eligible(j, 9)
    assert gate.longest(endless, 0) > 10**6  # no limit: the horizon stands for it


def test_held_jobs_are_offered_when_their_window_opens() -> None:
    gate = make()
    view = View(free=4)
    late, early, free = windowed(1, 5, submit=3), windowed(2, 5, submit=1), job(3, 1, 5)
    for j in (late, early, free):
        gate.job_submitted(view, j)
    assert set(gate.held) == {1, 2}
    assert ids(gate.schedule(view)) == [3]
    assert gate.explain(late, 0) == "closed, opens 10"
    assert gate.next_wakeup(0) == 10
    assert gate.waiting() == [early, late] and gate.head() is early
    assert gate.planned_starts(view) == [(early, 10), (late, 10)]
    assert gate.planned_start(view, late) == 10
    # At 10 both are offered in submission order and start.
    assert ids(gate.schedule(View(now=10, free=4))) == [2, 1]
    assert set(gate.running) == {1, 2} and gate.held == {} and gate.offered == {}


def test_a_job_that_no_longer_fits_is_taken_back_at_its_deadline() -> None:
    gate = make()
    busy = View(now=10, free=0, running=[(100, 4)])
    j = windowed(1, 5)
    gate.job_submitted(busy, j)
    assert 1 in gate.offered  # 10 + 5 <= 20
    assert gate.next_wakeup(10) == 16  # from 16 on it would end after 20
    gate.schedule(View(now=15, free=0, running=[(100, 4)]))
    assert 1 in gate.offered
    gate.schedule(View(now=16, free=0, running=[(100, 4)]))
    assert gate.held == {1: j} and gate.inner.waiting() == []
    assert gate.explain(j, 16) == "job 1 does not fit before 20"
    assert gate.planned_start(View(now=16), j) == 30  # the next opening it fits
    assert gate.next_wakeup(16) == 20
    assert ids(gate.schedule(View(now=30, free=4))) == [1]


def test_the_wake_up_is_the_first_of_window_changes_deadlines_and_the_policys() -> None:
    gate = make()
    assert gate.next_wakeup(0) is None  # no job in a window class
    gate.job_submitted(View(now=31, free=0, running=[(100, 4)]), windowed(1, 20))
    assert gate.next_wakeup(31) == 41  # the deadline, before the close at 60
    gate.inner.wakes = True
    gate.inner.next_wakeup = lambda now: now + 2  # type: ignore[method-assign]
    assert gate.next_wakeup(31) == 33
    gate.inner.next_wakeup = lambda now: None  # type: ignore[method-assign]
    assert gate.next_wakeup(31) == 41


def test_a_job_started_or_withdrawn_leaves_no_deadline() -> None:
    gate = make()
    busy = View(now=10, free=0, running=[(100, 4)])
    a, b = windowed(1, 5), windowed(2, 8)
    gate.job_submitted(busy, a)
    gate.job_submitted(busy, b)
    assert gate.next_wakeup(10) == 13  # b's deadline first
    gate.withdraw(busy, b)
    assert gate.next_wakeup(10) == 16
    assert ids(gate.schedule(View(now=10, free=4))) == [1]
    assert gate.next_wakeup(10) == 20  # a runs: the close is all that is left


def test_running_jobs_overflow_at_the_close() -> None:
    for overflow in ("kill", "requeue"):
        gate = make(overflow=overflow)  # type: ignore[arg-type]
        j, plain = windowed(1, 40), job(2, 1, 40)
        gate.job_submitted(View(now=10), j)
        gate.job_submitted(View(now=10), plain)
        assert ids(gate.schedule(View(now=10))) == [1, 2]
        j.start = plain.start = 10
        assert gate.deadline(j) == (20, overflow)
        assert gate.deadline(plain) is None
        assert gate.expired(View(now=19)) == []
        assert gate.expired(View(now=20)) == [(j, overflow)]
        assert gate.running == {}
        assert gate.expired(View(now=21)) == []
        counts = {"overflow_killed": 0, "overflow_requeued": 0}
        counts["overflow_killed" if overflow == "kill" else "overflow_requeued"] = 1
        assert gate.report()["windows"] == counts
        assert gate.requeues == ({} if overflow == "kill" else {1: 1})


def test_a_deadline_keeps_the_policys_own_when_it_is_earlier() -> None:
    class Due(InOrderPolicy):
        def deadline(self, job: Job) -> tuple[int, Overflow] | None:
            return (15, "requeue") if job.id == 1 else (25, "requeue")

    gate = make(inner=Due("fcfs", fcfs_key))
    a, b = windowed(1, 5), windowed(2, 5)
    a.start = b.start = 10
    assert gate.deadline(a) == (15, "requeue")
    assert gate.deadline(b) == (20, "kill")
    c = windowed(3, 5)
    c.start = 25  # started while closed: no close of its window to keep
    assert gate.deadline(c) == (25, "requeue")
    endless = make(lambda j: Cls(AlwaysOpen()), inner=Due("fcfs", fcfs_key))
    assert endless.deadline(b) == (25, "requeue")


def test_an_ended_job_is_forgotten() -> None:
    gate = make()
    j = windowed(1, 5)
    gate.job_submitted(View(now=10), j)
    gate.schedule(View(now=10))
    assert gate._use  # its class is in use
    gate.job_ended(View(now=15), j)
    assert gate.running == {} and gate.classes == {} and gate._use == {}
    assert gate.next_wakeup(15) is None


def test_withdrawing_held_and_offered_jobs() -> None:
    gate = make()
    busy = View(now=0, free=0, running=[(100, 4)])
    held, other = windowed(1, 5), windowed(2, 5)
    gate.job_submitted(busy, held)
    gate.job_submitted(busy, other)
    gate.withdraw(busy, held)
    assert set(gate.held) == {2} and 1 not in gate.classes
    assert gate.next_wakeup(0) == 10  # the class is still used by job 2
    gate.withdraw(busy, other)
    assert gate._use == {} and gate.next_wakeup(0) is None
    offered, plain = windowed(3, 5), job(4, 1, 5)
    at10 = View(now=10, free=0, running=[(100, 4)])
    gate.job_submitted(at10, offered)
    gate.job_submitted(at10, plain)
    gate.withdraw(at10, offered)
    gate.withdraw(at10, plain)
    assert gate.offered == {} and gate.waiting() == [] and gate._use == {}
    assert gate.classes == {}


def test_a_resumed_job_runs_in_its_class() -> None:
    gate = make()
    j = windowed(1, 40)
    j.start = 10
    gate.job_resumed(View(now=12), j)
    assert gate.running == {1: j}
    assert gate.expired(View(now=20)) == [(j, "kill")]
    plain = job(2, 1, 5)
    gate.job_resumed(View(now=12), plain)
    assert gate.running == {} and gate.classes[2] is None


def test_a_job_longer_than_every_opening_is_offered_at_the_next_opening() -> None:
    gate = make()
    long = windowed(1, 100)
    gate.job_submitted(View(now=0), long)
    assert gate.planned_start(View(now=0), long) == 10
    assert gate.first_start(WINDOW, long, 21) == 30
    assert gate.first_start(WINDOW, windowed(2, 11), 0) == 30  # fits the second only
    assert gate.first_start(WINDOW, windowed(3, 10), 0) == 10
    loose = make(must_fit=False)
    assert loose.first_start(WINDOW, windowed(2, 11), 0) == 10
    gate.classes[5] = None
    assert gate._held_start(View(now=0), job(5, 1, 5)) == NEVER
    assert gate._held_start(View(now=60), windowed(1, 5)) == NEVER  # never opens again


def test_the_head_and_the_plan_come_from_the_policy_first() -> None:
    gate = make()
    view = View(now=0, free=0, running=[(5, 4)])
    plain, held = job(2, 1, 5), windowed(1, 5)
    gate.job_submitted(view, held)
    assert gate.head() is held
    gate.job_submitted(view, plain)
    assert gate.head() is plain
    assert gate.waiting() == [plain, held]
    assert gate.planned_starts(view) == [(plain, 5), (held, 10)]
    assert gate.planned_start(view, plain) == 5  # the policy's own answer
    assert gate.explain(plain, 0) is None


def test_reclassifying_frees_gates_and_moves_jobs() -> None:
    gate = make(lambda j: WINDOW if j.queue in ("w", "r") else None)
    busy = View(now=12, free=0, running=[(100, 4)])
    waiting_w, waiting_plain = windowed(1, 5, submit=1), job(2, 1, 5, submit=2)
    gate.job_submitted(View(now=0, free=0, running=[(100, 4)]), waiting_w)  # held
    gate.job_submitted(busy, waiting_plain)
    running, stays = job(3, 1, 40, queue="r"), job(4, 1, 40, queue="r")
    running.start = stays.start = 12
    gate.job_resumed(busy, running)
    gate.job_resumed(busy, stays)
    other, shut = Cls(Spans((0, 15))), Cls(Spans((50, 60)))
    # Queue "w" is now open at all times, plain jobs belong to the [0,15) window, job 3
    # too, and job 4 to a window closed now (it keeps the one it started in).
    new = {"w": None, "": other, "r": other}
    gate.reclassify(busy, lambda j: shut if j.id == 4 else new[j.queue])
    assert gate.held == {} and gate.classes[1] is None
    assert gate.inner.waiting() == [waiting_w, waiting_plain]
    assert gate.offered == {2: waiting_plain}  # longer than what is left of [0,15)
    assert gate.classes[3] is other and gate.classes[4] is WINDOW
    assert gate.expired(View(now=15)) == [(running, "kill")]
    assert gate.expired(View(now=20)) == [(stays, "kill")]
    assert gate._use == {id(other): (other, 1)}


def test_invalidate_reaches_the_policy() -> None:
    gate = make()
    seen: list[bool] = []
    gate.inner.invalidate = lambda: seen.append(True)  # type: ignore[method-assign]
    gate.invalidate()
    assert seen == [True]
    assert gate.serves_in_order and gate.machine == 0 and gate.wakes


def unused(view: MachineView) -> None:
    """(keeps the MachineView import meaningful for the type checker)"""


def test_by_default_overflow_kills_and_jobs_must_fit() -> None:
    gate = WindowGate("g", InOrderPolicy("fcfs", fcfs_key), lambda j: None)
    assert (gate.overflow, gate.must_fit) == ("kill", True)


def test_each_class_has_its_own_longest_opening() -> None:
    gate = make()
    short = Cls(Spans((0, 5)))
    assert gate.longest(WINDOW, 0) == 30
    assert gate.longest(short, 0) == 5
    assert gate.longest(WINDOW, 0) == 30


def test_a_job_as_long_as_the_longest_opening_must_fit_it() -> None:
    gate = make()
    j = windowed(1, 30)
    gate.classes[1] = WINDOW
    assert not gate.eligible(j, 10)
    assert gate.eligible(j, 30)
    assert gate.first_start(WINDOW, j, 0) == 30
    gate.job_submitted(View(now=30, free=0, running=[(100, 4)]), j)
    assert gate.next_wakeup(30) == 31  # from 31 on it would end after 60


def test_a_deadline_at_the_same_second_as_the_policys_is_the_policys() -> None:
    class Due(InOrderPolicy):
        def deadline(self, job: Job) -> tuple[int, Overflow] | None:
            return (20, "requeue")

    gate = make(inner=Due("fcfs", fcfs_key))
    j = windowed(1, 5)
    j.start = 10
    assert gate.deadline(j) == (20, "requeue")


class Spy(CallSpy):
    """Notes each call the gate passes on, with the view or time it was given."""

    def __init__(self, wakes: bool = False) -> None:
        super().__init__()
        self.wakes = wakes

    def explain(self, job: Job, now: int) -> str | None:
        self.calls.append(("explain", now, job.id))
        return "inner"

    def next_wakeup(self, now: int) -> int | None:
        return now + 1

    def expired(self, view: MachineView) -> list[tuple[Job, Overflow]]:
        self.calls.append(("expired", view, 0))
        return [(job(9, 1, 1), "requeue")]


def test_the_gate_passes_the_view_and_the_job_to_the_policy() -> None:
    spy = Spy()
    gate = make(inner=spy)
    v0, v10, v16 = View(now=0, free=0), View(now=10, free=0), View(now=16, free=0)
    plain, w, late = job(1, 1, 5), windowed(100, 5), windowed(3, 5, submit=1)
    gate.job_submitted(v0, plain)  # passes through
    gate.job_submitted(v10, w)  # offered at once
    gate.job_submitted(v0, late)  # held until 10
    gate.schedule(v10)  # 3 is offered
    assert gate.explain(w, 10) == "inner"  # offered and fits: the policy's reason
    assert gate.explain(plain, 10) == "inner"
    gate.schedule(v16)  # 100 and 3 no longer fit before 20: taken back
    gate.job_resumed(v10, job(4, 1, 5))
    gate.job_ended(v16, job(4, 1, 5))
    gate.withdraw(v16, plain)
    assert spy.calls == [
        ("submitted", v0, 1),
        ("submitted", v10, 100),
        ("submitted", v10, 3),
        ("explain", 10, 100),
        ("explain", 10, 1),
        ("withdraw", v16, 3),  # by deadline (both 16), then id
        ("withdraw", v16, 100),
        ("resumed", v10, 4),
        ("ended", v16, 4),
        ("withdraw", v16, 1),
    ]


def test_a_window_that_closes_takes_its_waiting_jobs_back() -> None:
    spy = Spy()
    gate = make(inner=spy)
    busy10 = View(now=10, free=0, running=[(25, 4)])
    j = windowed(1, 1)
    gate.job_submitted(busy10, j)
    gate.schedule(busy10)
    at20 = View(now=20, free=0, running=[(25, 4)])
    gate.schedule(at20)
    assert gate.held == {1: j} and spy.calls[-1] == ("withdraw", at20, 1)
    assert gate.schedule(View(now=25, free=4)) == []
    assert ids(gate.schedule(View(now=30, free=4))) == [1]


def test_reclassified_jobs_reach_the_policy_with_the_view_in_submission_order() -> None:
    spy = Spy()
    gate = make(inner=spy)
    busy = View(now=0, free=0, running=[(100, 4)])
    late, early = windowed(1, 5, submit=9), windowed(2, 5, submit=3)
    gate.job_submitted(busy, late)
    gate.job_submitted(busy, early)
    assert spy.calls == []
    gate.reclassify(busy, lambda j: None)
    assert spy.calls == [("submitted", busy, 2), ("submitted", busy, 1)]
    gate.job_submitted(busy, windowed(3, 5))
    assert 3 not in gate.held  # the new classes hold for new jobs too


def test_the_wake_up_and_the_expired_jobs_of_a_policy_that_wakes() -> None:
    gate = make(inner=Spy(wakes=False))
    assert gate.next_wakeup(0) is None and gate.expired(View()) == []
    waking = Spy(wakes=True)
    gate = make(inner=waking)
    assert gate.next_wakeup(0) == 1
    j = windowed(1, 40)
    gate.job_submitted(View(now=10), j)
    gate.schedule(View(now=10))
    at20 = View(now=20)
    out = gate.expired(at20)
    assert [(x.id, how) for x, how in out] == [(1, "kill"), (9, "requeue")]
    assert waking.calls[-1] == ("expired", at20, 0)


def test_a_new_class_with_an_earlier_change_makes_the_gate_look_again_then() -> None:
    # At 31, job 1 of WINDOW is offered (the gate next looks at 60, WINDOW's close).
    # Job 2 of a class open over [40,50) joins at 32: the gate must look at 40. A
    # class that changes later (at 70) joining after it does not put that off.
    gate = make(lambda j: {"w": WINDOW, "b": Cls(Spans((40, 50))), "c": late}.get(j.queue))
    late = Cls(Spans((70, 80)))
    busy = View(now=31, free=0, running=[(100, 4)])
    gate.job_submitted(busy, windowed(1, 5))
    gate.schedule(busy)
    gate.job_submitted(View(now=32, free=0, running=[(100, 4)]), job(2, 1, 5, queue="b"))
    gate.job_submitted(View(now=33, free=0, running=[(100, 4)]), job(3, 1, 5, queue="c"))
    gate.schedule(View(now=39, free=0, running=[(100, 4)]))
    assert set(gate.held) == {2, 3}
    gate.schedule(View(now=40, free=0, running=[(100, 4)]))
    assert 2 in gate.offered and set(gate.held) == {3}


def test_a_loose_gate_keeps_no_deadlines() -> None:
    gate = make(must_fit=False)
    gate.job_submitted(View(now=10, free=0, running=[(100, 4)]), windowed(1, 5))
    assert gate.next_wakeup(10) == 20


def test_a_deadline_is_checked_by_its_time_and_passed_by_started_jobs() -> None:
    gate = make()
    busy = View(now=10, free=0, running=[(100, 4)])
    a, b = windowed(3, 5), windowed(100, 5)
    gate.job_submitted(busy, a)
    gate.job_submitted(busy, b)
    assert ids(gate.schedule(View(now=11, free=1, running=[(100, 3)]))) == [3]
    gate.schedule(View(now=15, free=0, running=[(100, 4)]))
    assert 100 in gate.offered  # its deadline is 16, though its id is 100
    gate.schedule(View(now=16, free=0, running=[(100, 4)]))  # 3's deadline passes too
    assert gate.held == {100: b}


def test_a_stopped_class_never_wakes_the_gate() -> None:
    from batchd.model.windows import Stopped

    gate = make(lambda j: Cls(Stopped()))
    j = windowed(1, 5)
    gate.job_submitted(View(), j)
    assert gate.schedule(View()) == [] and gate.schedule(View(now=5)) == []
    assert gate.next_wakeup(5) is None
    assert gate.held == {1: j}
    assert gate.planned_start(View(now=5), j) == NEVER


def test_a_held_job_is_planned_from_the_next_second() -> None:
    gate = make()
    j = windowed(1, 5)
    gate.job_submitted(View(now=9), j)
    assert gate.planned_start(View(now=9), j) == 10


def test_overflows_are_counted_and_requeues_per_job() -> None:
    gate = make(overflow="requeue")
    for round_ in (1, 2):
        j, k = windowed(1, 40), windowed(2, 40)
        for x in (j, k):
            gate.job_submitted(View(now=10), x)
        gate.schedule(View(now=10))
        assert len(gate.expired(View(now=20))) == 2
        gate.job_ended(View(now=20), j)
        gate.job_ended(View(now=20), k)
        assert gate.requeues == {1: round_, 2: round_}
    assert gate.report()["windows"] == {"overflow_killed": 0, "overflow_requeued": 4}
    killing = make()
    for x in (windowed(1, 40), windowed(2, 40)):
        killing.job_submitted(View(now=10), x)
    killing.schedule(View(now=10))
    killing.expired(View(now=20))
    assert killing.report()["windows"]["overflow_killed"] == 2


def test_ending_a_job_outside_any_window() -> None:
    gate = make()
    plain = job(1, 1, 5)
    gate.job_submitted(View(), plain)
    gate.schedule(View())
    gate.job_ended(View(now=5), plain)
    assert gate.classes == {} and gate.running == {}


def test_close_is_when_the_open_window_next_changes() -> None:
    assert WindowGate.close(WINDOW, 12) == 20
    assert WindowGate.close(WINDOW, 30) == 60


class Untold(InOrderPolicy):
    """A policy that cannot tell its plan's outline (the gauges then walk the plan)."""

    def plan_outline(self, view: Any) -> None:
        return None


def test_the_gate_tells_no_outline_where_its_policy_cannot() -> None:
    view = View(now=0, free=0, running=[(5, 4)])
    held, plain = windowed(1, 5), job(2, 1, 5)
    untold = make(inner=Untold("fcfs", fcfs_key))
    untold.job_submitted(view, held)
    assert untold.held and untold.plan_outline(view) is None
    told = make()
    told.job_submitted(view, held)
    told.job_submitted(view, plain)
    assert told.plan_outline(view) == PlanOutline.of(told.planned_starts(view))
