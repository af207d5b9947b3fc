"""What a live daemon changes in the machines while jobs run (engine/control.py): a
machine's policy, nodes out of and back in service, reservations; what runs and waits."""

from __future__ import annotations

import pytest

from batchd.engine.control import check_machine
from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.reservation import Reservation, ResvState
from batchd.sched.core.policy import BuildContext
from batchd.sched.registry import make_policy


def job(i: int, width: int, submit: int = 0, runtime: int = 50, machine: int = 0) -> Job:
    return Job(id=i, submit=submit, width=width, estimate=100, runtime=runtime, machine=machine)


def test_a_policy_built_for_another_machine_is_refused() -> None:
    policy = make_policy("fcfs", {}, BuildContext(machine=1))
    with pytest.raises(
        ValueError,
        match=r"^policy fcfs was built for machine 1, not 0 \(build it with "
        r"BuildContext\(machine=\.\.\.\)\)$",
    ):
        check_machine(policy, 0)
    check_machine(policy, 1)
    eng = Engine(Grid([Machine("m", 4)]), [make_policy("fcfs")])
    old = eng.machines[0].policy
    with pytest.raises(ValueError, match="built for machine 1, not 0"):
        eng.set_policy(0, policy)
    assert eng.machines[0].policy is old


def test_a_new_policy_takes_the_waiting_jobs_in_submission_order() -> None:
    eng = Engine(Grid([Machine("m", 4)]), [make_policy("sjf-easy")])
    eng.submit(job(1, 4))
    for i, (submit, runtime) in enumerate([(2, 90), (1, 10), (2, 5), (1, 60)], start=2):
        other = job(i, 2, submit=submit, runtime=runtime)
        other.estimate = runtime
        eng.submit(other)
    eng.run(until=2)
    old = eng.machines[0].policy
    assert [j.id for j in old.waiting()] == [4, 3, 5, 2]  # shortest first
    views: list[object] = []
    withdraw = old.withdraw
    old.withdraw = lambda view, j: views.append(view) or withdraw(view, j)  # type: ignore[method-assign,func-returns-value]
    fcfs = make_policy("fcfs")
    submitted = fcfs.job_submitted
    fcfs.job_submitted = lambda view, j: views.append(view) or submitted(view, j)  # type: ignore[method-assign,func-returns-value]
    assert eng.set_policy(0, fcfs) is old
    assert eng.machines[0].policy is fcfs
    assert old.waiting() == []
    assert [j.id for j in fcfs.waiting()] == [3, 5, 2, 4]  # by submission, then id
    assert [j.id for j in eng.waiting()] == [3, 5, 2, 4]
    assert len(views) == 8 and all(v is eng.machines[0] for v in views)


def test_a_node_out_of_service_is_not_given_and_comes_back() -> None:
    eng = Engine(Grid([Machine("m", 4)]), [make_policy("fcfs")])
    calls: list[str] = []
    eng.machines[0].policy.invalidate = lambda: calls.append("plan")  # type: ignore[method-assign]
    running = job(1, 2)
    eng.submit(running)
    eng.instant(0)
    assert running.units == [0, 1]
    m = eng.machines[0]
    eng.node_out(0, 1)  # busy: its job keeps running, the node will not come back
    eng.node_out(0, 3)  # free: leaves the free nodes at once
    assert calls == ["plan", "plan"]
    assert m.free == 1 and m.capacity == 2
    assert m.running_widths() == [1]
    eng.node_in(0, 3)
    assert calls == ["plan"] * 3
    assert m.free == 2 and m.capacity == 3 and m.running_widths() == [1]
    eng.node_in(0, 1)
    assert m.capacity == 4 and m.running_widths() == [2]
    wide = job(2, 4, submit=1)
    eng.submit(wide)
    eng.run()
    assert wide.start == running.end == 50


def test_reservations_are_added_and_removed_through_the_machines() -> None:
    eng = Engine(Grid([Machine("m", 4)]), [make_policy("fcfs")])
    resv = Reservation(id=1, start=10, end=60, width=3, queue="R1")
    eng.add_reservation(resv)
    assert eng.machines[0].reservations() == [(10, 60, 3)]
    eng.advance_to(20)
    assert resv.state is ResvState.RUNNING and eng.machines[0].free == 1
    eng.remove_reservation(resv)
    assert resv.state is ResvState.FINISHED and eng.machines[0].free == 4


def test_what_runs_and_waits_on_every_machine() -> None:
    grid = Grid([Machine("a", 2), Machine("b", 2)])
    policies = [make_policy("fcfs"), make_policy("fcfs", {}, BuildContext(machine=1))]
    eng = Engine(grid, policies)
    resv = Reservation(id=1, start=0, end=100, width=1, machine=1, queue="R1")
    eng.add_reservation(resv)
    eng.submit(job(1, 2, submit=3))
    eng.submit(job(2, 1, submit=1, machine=1))
    eng.submit(job(3, 1, submit=2, machine=1))
    eng.submit(job(4, 2, submit=3))
    eng.submit(job(5, 1, submit=4, machine=1))
    in_resv = job(6, 1, submit=0, machine=1)
    in_resv.queue = "R1"
    eng.submit(in_resv)
    eng.run(until=4)
    assert [j.id for j in eng.running()] == [6, 2, 1]  # by start: 0, 1, 3
    assert [j.id for j in eng.waiting()] == [4, 3, 5]  # machine a's, then b's
