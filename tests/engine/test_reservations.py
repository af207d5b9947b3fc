"""Advance reservations in the engine (engine/reservations.py): windows that open and
close on time, the nodes they hold, and the jobs of their queues."""

from __future__ import annotations

import pytest

from batchd.engine.core import Engine
from batchd.engine.reservations import RESV_END, ResvRun
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.reservation import Reservation, ResvState
from batchd.model.states import JobState
from batchd.sched.registry import make_policy

NODES = 6


def engine(nodes: int = NODES, per_node: int = 1) -> Engine:
    return Engine(Grid([Machine("m", nodes, slots_per_node=per_node)]), [make_policy("fcfs")])


def resv_job(i: int, width: int, submit: int = 0, runtime: int = 30, queue: str = "R1") -> Job:
    return Job(id=i, submit=submit, width=width, estimate=40, runtime=runtime, queue=queue)


def spy_plans(eng: Engine) -> list[str]:
    calls: list[str] = []
    eng.machines[0].policy.invalidate = lambda: calls.append("plan")  # type: ignore[method-assign]
    return calls


@pytest.mark.parametrize(
    ("start", "end", "now"),
    [(10, 10, 0), (10, 5, 0), (0, 20, 20), (0, 15, 20), (5, 30, 6)],
)
def test_a_window_that_is_empty_over_or_begun_is_refused(start: int, end: int, now: int) -> None:
    eng = engine()
    eng.advance_to(now)
    resv = Reservation(id=3, start=start, end=end, width=2, queue="R3")
    with pytest.raises(ValueError, match=f"^reservation 3: bad window {start}..{end}$"):
        eng.add_reservation(resv)
    assert eng.reserved.runs == {} and eng.machines[0].reservations() == []
    assert eng.next_event_time() is None


def test_a_window_may_begin_now() -> None:
    eng = engine()
    eng.advance_to(5)
    resv = Reservation(id=1, start=5, end=6, width=2)
    eng.add_reservation(resv)
    eng.instant(5)
    assert resv.state is ResvState.RUNNING


def test_a_reservation_holds_its_nodes_only_while_its_window_is_open() -> None:
    eng = engine()
    plans = spy_plans(eng)
    resv = Reservation(id=1, start=10, end=50, width=4)
    eng.add_reservation(resv)
    m = eng.machines[0]
    assert plans == ["plan"]
    assert m.reservations() == [(10, 50, 4)] and m.future == [resv]
    assert eng.reserved.runs == {}  # no queue: no jobs of its own
    assert eng.next_event_time() == 10
    eng.instant(10)
    assert resv.state is ResvState.RUNNING and resv.units == [0, 1, 2, 3]
    assert m.reservations() == [] and m.free == 2
    assert m.running_ends() == [50] and m.holders() == [resv]
    assert plans == ["plan"] * 2
    assert eng.next_event_time() == 50
    eng.instant(50)
    assert resv.state is ResvState.FINISHED
    assert m.free == NODES and m.holders() == []
    assert plans == ["plan"] * 3
    assert eng.next_event_time() is None


def test_an_open_window_takes_what_is_free() -> None:
    eng = Engine(Grid([Machine("m", NODES)]), [make_policy("fcfs")], kill=False)
    eng.submit(Job(id=1, submit=0, width=4, estimate=5, runtime=100))  # past its estimate
    resv = Reservation(id=1, start=10, end=50, width=4)
    eng.add_reservation(resv)
    eng.instant(0)
    eng.instant(10)
    assert resv.units == [4, 5]  # short: a job ran past its estimate


def test_a_restored_open_reservation_holds_its_nodes_already() -> None:
    eng = engine()
    eng.advance_to(20)
    resv = Reservation(id=1, start=0, end=60, width=2, queue="R1")
    resv.state, resv.units = ResvState.RUNNING, [4, 1]
    eng.add_reservation(resv)
    m = eng.machines[0]
    assert m.pool.free_ids() == [0, 2, 3, 5] and m.holders() == [resv]
    assert m.reservations() == []
    assert eng.reserved.runs["R1"].free == [1, 4]
    assert eng.next_event_time() == 60  # its close: no opening
    eng.run()
    assert resv.state is ResvState.FINISHED and m.free == NODES


def test_a_removed_reservation_never_opens() -> None:
    eng = engine()
    resv = Reservation(id=1, start=10, end=50, width=4, queue="R1")
    eng.add_reservation(resv)
    eng.remove_reservation(resv)
    assert resv.state is ResvState.FINISHED
    assert eng.machines[0].reservations() == [] and eng.reserved.runs == {}
    eng.run()
    assert resv.state is ResvState.FINISHED and resv.units == []
    assert eng.machines[0].free == NODES
    eng.remove_reservation(resv)  # removed twice: nothing more happens
    assert eng.machines[0].free == NODES


def test_a_removed_open_reservation_gives_its_nodes_back_at_once() -> None:
    eng = engine()
    resv = Reservation(id=1, start=0, end=50, width=4)
    eng.add_reservation(resv)
    eng.advance_to(20)
    plans = spy_plans(eng)
    eng.remove_reservation(resv)
    assert resv.state is ResvState.FINISHED and eng.machines[0].free == NODES
    assert eng.machines[0].holders() == [] and plans == ["plan"]
    eng.run()  # its close timer finds it finished
    assert eng.machines[0].free == NODES


def test_whole_shared_nodes_when_the_width_is_a_multiple_of_a_node() -> None:
    eng = engine(nodes=12, per_node=4)
    eng.submit(Job(id=1, submit=0, width=1, estimate=100, runtime=100))
    whole = Reservation(id=1, start=1, end=50, width=8)
    part = Reservation(id=2, start=1, end=50, width=2)
    eng.add_reservation(whole)
    eng.add_reservation(part)
    eng.instant(0)
    eng.instant(1)
    assert whole.units == [4, 5, 6, 7, 8, 9, 10, 11]  # nodes 1 and 2: node 0 is in use
    assert part.units == [1, 2]


def test_whole_shared_nodes_not_free_leave_it_on_the_free_cores() -> None:
    eng = engine(nodes=8, per_node=4)
    eng.submit(Job(id=1, submit=0, width=1, estimate=100, runtime=100))
    resv = Reservation(id=1, start=1, end=50, width=4)
    eng.add_reservation(resv)
    eng.instant(0)
    eng.instant(1)
    assert resv.units == [4, 5, 6, 7]
    eng2 = engine(nodes=8, per_node=4)
    for i in (1, 2):
        eng2.submit(Job(id=i, submit=0, width=1, estimate=100, runtime=100, pieces=(1,)))
    resv2 = Reservation(id=1, start=1, end=50, width=4)
    eng2.add_reservation(resv2)
    eng2.instant(0)
    eng2.instant(1)
    taken = [u for j in eng2.running() for u in j.units]
    assert sorted(taken + resv2.units) == sorted(set(taken + resv2.units))
    assert len(resv2.units) == 4


def test_the_jobs_of_a_reservation_run_on_its_nodes_while_it_is_open() -> None:
    eng = engine()
    starts: list[int] = []
    eng.on_start.append(lambda j: starts.append(j.id))
    resv = Reservation(id=1, start=10, end=100, width=3, queue="R1")
    eng.add_reservation(resv)
    outside = Job(id=9, submit=0, width=3, estimate=200, runtime=200)
    eng.submit(outside)
    first, second, third = resv_job(1, 2), resv_job(2, 2), resv_job(3, 1)
    for job in (first, second, third):
        eng.submit(job)
    eng.instant(0)
    assert [j.id for j in eng.reserved.waiting()] == [1, 2, 3]
    assert starts == [9] and eng.machines[0].policy.waiting() == []
    eng.instant(10)
    assert (first.state, first.start, first.units) == (JobState.RUNNING, 10, [3, 4])
    assert (third.state, third.units) == (JobState.RUNNING, [5])
    assert first.result.started_by == third.result.started_by == "reservation"
    assert second.state is JobState.QUEUED and starts == [9, 1, 3]
    run = eng.reserved.runs["R1"]
    assert run.free == [] and set(run.running) == {1, 3}
    eng.run(until=40)
    assert (first.end, first.result.outcome) == (40, "ok")
    assert (second.start, second.units) == (40, [3, 4])
    assert eng.machines[0].free == 0  # job 9 and the reservation hold them all


def test_a_job_keeps_who_started_it() -> None:
    eng = engine()
    resv = Reservation(id=1, start=0, end=100, width=2, queue="R1")
    eng.add_reservation(resv)
    job = resv_job(1, 1)
    job.result.started_by = "fcfs"  # it ran before a requeue
    eng.submit(job)
    eng.instant(0)
    assert job.result.started_by == "fcfs"


def test_a_reservation_starts_nothing_on_nodes_out_of_service() -> None:
    eng = engine()
    resv = Reservation(id=1, start=0, end=100, width=2, queue="R1")
    eng.add_reservation(resv)
    eng.instant(0)
    eng.node_out(0, resv.units[0])
    job = resv_job(1, 2, submit=1)
    small = resv_job(2, 1, submit=1)
    eng.submit(job)
    eng.submit(small)
    eng.instant(1)
    assert job.state is JobState.QUEUED
    assert small.units == [resv.units[1]]


def test_pieces_of_a_job_of_a_reservation_go_on_its_nodes() -> None:
    eng = engine(nodes=12, per_node=4)
    resv = Reservation(id=1, start=0, end=100, width=8, queue="R1")
    eng.add_reservation(resv)
    eng.instant(0)
    assert resv.units == [0, 1, 2, 3, 4, 5, 6, 7]
    wide = resv_job(1, 6, submit=1)
    wide.pieces, wide.spread = (3, 3), True
    too_big = resv_job(2, 2, submit=1)
    too_big.pieces = (2,)
    eng.submit(wide)
    eng.submit(too_big)
    eng.instant(1)
    assert wide.units == [0, 1, 2, 4, 5, 6]
    assert too_big.state is JobState.QUEUED  # one core left on each node
    assert eng.reserved.runs["R1"].free == [3, 7]
    assert [j.id for j in eng.reserved.waiting()] == [2]


def test_a_closing_window_kills_its_jobs_and_tells_of_those_waiting() -> None:
    eng = engine()
    closed: list[tuple[int, list[int]]] = []
    eng.reserved.on_close.append(lambda r, jobs: closed.append((r.id, [j.id for j in jobs])))
    resv = Reservation(id=4, start=0, end=20, width=2, queue="R4")
    eng.add_reservation(resv)
    running, waiting = resv_job(1, 2, runtime=500, queue="R4"), resv_job(2, 1, queue="R4")
    eng.submit(running)
    eng.submit(waiting)
    eng.run(until=25)
    assert (running.state, running.end, running.result.outcome) == (
        JobState.FINISHED,
        20,
        RESV_END,
    )
    assert closed == [(4, [2])]
    assert waiting.state is JobState.QUEUED  # the server deletes it
    assert eng.reserved.runs == {} and eng.reserved.run_of(waiting) is None
    assert eng.machines[0].free == NODES


def test_a_job_of_a_reservation_requeued_waits_in_it_again() -> None:
    eng = engine()
    resv = Reservation(id=1, start=0, end=100, width=2, queue="R1")
    eng.add_reservation(resv)
    job = resv_job(1, 2)
    eng.submit(job)
    eng.instant(0)
    run = eng.reserved.runs["R1"]
    assert run.free == []
    eng.advance_to(5)
    eng.requeue(job)
    assert job.state is JobState.QUEUED and job.units == [] and job.start < 0
    assert run.free == resv.units and run.running == {}
    assert [j.id for j in eng.reserved.waiting()] == [1]
    eng.instant(6)
    assert job.start == 6


def test_a_run_takes_and_gives_back_nodes() -> None:
    run = ResvRun(Reservation(id=1, start=0, end=10, width=4, queue="R1"))
    run.free = [2, 3, 5, 7]
    job = resv_job(1, 2)
    job.units = [5, 2]
    run.take(job)
    assert run.free == [3, 7] and run.running == {1: job}
    run.give_back(job)
    assert run.free == [2, 3, 5, 7] and run.running == {}
    run.give_back(job)  # twice: no error (a job ended and requeued)
    assert run.running == {}


def test_jobs_of_no_reservation_are_the_policy_s() -> None:
    eng = engine()
    assert eng.reserved.run_of(resv_job(1, 1)) is None
    eng.add_reservation(Reservation(id=1, start=0, end=10, width=1, queue="R1"))
    assert eng.reserved.run_of(resv_job(2, 1, queue="other")) is None
    assert eng.reserved.run_of(resv_job(3, 1)) is eng.reserved.runs["R1"]


def test_reservations_to_come_are_planned_by_start_then_id() -> None:
    eng = engine()
    for rid, start in ((3, 40), (2, 10), (1, 40)):
        eng.add_reservation(Reservation(id=rid, start=start, end=start + 5, width=1))
    m = eng.machines[0]
    assert [r.id for r in m.future] == [2, 1, 3]
    assert m.reservations() == [(10, 15, 1), (40, 45, 1), (40, 45, 1)]


def test_whole_nodes_of_two_cores_are_held_whole() -> None:
    eng = engine(nodes=6, per_node=2)
    eng.submit(Job(id=1, submit=0, width=1, estimate=100, runtime=100))
    resv = Reservation(id=1, start=1, end=50, width=4)
    eng.add_reservation(resv)
    eng.instant(0)
    eng.instant(1)
    assert resv.units == [2, 3, 4, 5]  # nodes 1 and 2, not core 1 of node 0


def test_a_window_not_yet_open_does_not_keep_an_open_one_from_starting_jobs() -> None:
    eng = engine()
    later = Reservation(id=1, start=50, end=90, width=2, queue="R1")
    now = Reservation(id=2, start=0, end=90, width=2, queue="R2")
    eng.add_reservation(later)
    eng.add_reservation(now)
    waits, runs = resv_job(1, 1, queue="R1"), resv_job(2, 1, queue="R2")
    eng.submit(waits)
    eng.submit(runs)
    eng.instant(0)
    assert waits.state is JobState.QUEUED and runs.start == 0


def test_pieces_to_spread_go_on_different_reserved_nodes() -> None:
    eng = engine(nodes=8, per_node=4)
    resv = Reservation(id=1, start=0, end=100, width=8, queue="R1")
    eng.add_reservation(resv)
    eng.instant(0)
    spread = resv_job(1, 2, submit=1)
    spread.pieces, spread.spread = (1, 1), True
    eng.submit(spread)
    eng.instant(1)
    assert spread.units == [0, 4]


def test_a_job_whose_pieces_fit_no_node_lets_the_next_one_start() -> None:
    eng = engine(nodes=12, per_node=4)
    resv = Reservation(id=1, start=0, end=100, width=12, queue="R1")
    eng.add_reservation(resv)
    eng.instant(0)
    wide = resv_job(1, 9, runtime=50)
    wide.pieces = (3, 3, 3)
    eng.submit(wide)
    eng.instant(0)
    assert eng.reserved.runs["R1"].free == [3, 7, 11]
    too_big, small = resv_job(2, 2, submit=1), resv_job(3, 1, submit=1)
    too_big.pieces, small.pieces = (2,), (1,)
    eng.submit(too_big)
    eng.submit(small)
    eng.instant(1)
    assert too_big.state is JobState.QUEUED and small.units == [3]
    assert [j.id for j in eng.reserved.waiting()] == [2]


def test_a_new_run_has_no_free_nodes_before_its_window_opens() -> None:
    run = ResvRun(Reservation(id=1, start=10, end=20, width=2, queue="R1"))
    assert run.free == [] and run.running == {} and len(run.queue) == 0


def test_a_job_of_a_reservation_is_enqueued_and_withdrawn_in_its_queue() -> None:
    eng = engine()
    eng.add_reservation(Reservation(id=1, start=10, end=90, width=2, queue="R1"))
    job = resv_job(1, 1)
    eng.enqueue(job)
    assert [j.id for j in eng.reserved.waiting()] == [1]
    assert eng.machines[0].policy.waiting() == []
    eng.withdraw(job)
    assert eng.reserved.waiting() == []
