"""The event core and its clocks: time, errors, event order, several machines."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from batchd.engine.clock import RealClock, ScaledClock, VirtualClock
from batchd.engine.core import Engine, PlacementError, StuckJobsError
from batchd.model.job import Job
from batchd.model.machine import FOLD_FROM, Grid, Machine, NodePool, node_runs
from batchd.model.states import JobState, StateError, change_state
from batchd.sched.core.policy import BuildContext, MachineView, Placement, Policy
from batchd.sched.registry import make_policy, policy_names
from batchd.workload import synthetic_jobs


def job(i: int, submit: int, width: int, estimate: int, runtime: int, machine: int = 0) -> Job:
    return Job(
        id=i, submit=submit, width=width, estimate=estimate, runtime=runtime, machine=machine
    )


def one_machine(nodes: int, policy: str = "fcfs", **kw: object) -> Engine:
    return Engine(Grid([Machine("m", nodes)]), [make_policy(policy)], **kw)  # type: ignore[arg-type]


class FakeWall:
    """A wall clock that moves only when the test says so."""

    def __init__(self, t: float = 50.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


# --------------------------------------------------------------------------------------------
# Clocks


def test_virtual_clock_moves_forward_only() -> None:
    clock = VirtualClock(start=5)
    assert clock.now() == 5
    clock.set(5)
    clock.set(12)
    assert clock.now() == 12
    with pytest.raises(ValueError, match="cannot go back from 12 to 11"):
        clock.set(11)
    assert clock.now() == 12


async def test_virtual_clock_sleep_until() -> None:
    clock = VirtualClock(start=10)
    wake = asyncio.Event()
    await clock.sleep_until(20, wake)
    assert clock.now() == 20
    await clock.sleep_until(15, wake)  # a time already passed: no going back
    assert clock.now() == 20
    # None: wait only for the wake-up.
    waiter = asyncio.create_task(clock.sleep_until(None, wake))
    await asyncio.sleep(0.01)
    assert not waiter.done()
    wake.set()
    await asyncio.wait_for(waiter, timeout=2)
    assert clock.now() == 20


def test_clocks_start_at_zero_unless_told() -> None:
    virtual = VirtualClock()
    assert (virtual.start, virtual.now()) == (0, 0)
    assert VirtualClock(start=9).start == 9
    wall = FakeWall(3.0)
    scaled = ScaledClock(wall=wall)
    assert (scaled.speed, scaled.start, scaled.now()) == (1.0, 0, 0)
    wall.t = 5.5
    assert scaled.now() == 2


async def test_virtual_clock_sleep_does_not_wait_on_the_wall() -> None:
    clock = VirtualClock()
    began = time.monotonic()
    await clock.sleep_until(1_000_000, asyncio.Event())
    assert clock.now() == 1_000_000
    assert time.monotonic() - began < 0.5


def test_scaled_clock_maps_wall_time() -> None:
    wall = FakeWall(50.0)
    clock = ScaledClock(speed=10, start=1000, wall=wall)
    assert clock.now() == 1000
    wall.t = 50.25  # 0.25 s of wall time at speed 10: 2.5 emulated seconds, floored
    assert clock.now() == 1002
    assert clock.wall_delay(1010) == pytest.approx(0.75)  # 1010 is 1.0 s after the start
    assert clock.wall_delay(1000) == 0.0  # in the past: no waiting
    wall.t = 60.0
    assert clock.now() == 1100
    assert clock.wall_delay(1100) == 0.0


@pytest.mark.parametrize("speed", [0, -1.5])
def test_scaled_clock_refuses_bad_speed(speed: float) -> None:
    with pytest.raises(ValueError, match="clock speed must be > 0"):
        ScaledClock(speed=speed)


def test_real_clock_is_epoch_seconds() -> None:
    clock = RealClock()
    assert clock.speed == 1.0
    assert abs(clock.now() - time.time()) < 2


async def test_scaled_clock_sleep_returns_early_when_woken() -> None:
    wall = FakeWall(0.0)
    clock = ScaledClock(speed=1, start=0, wall=wall)
    wake = asyncio.Event()
    asyncio.get_running_loop().call_later(0.05, wake.set)
    began = time.monotonic()
    await clock.sleep_until(1000, wake)  # 1000 s away on the (frozen) wall clock
    assert time.monotonic() - began < 5
    assert wake.is_set()


async def test_scaled_clock_sleep_until_due_time() -> None:
    wall = FakeWall(0.0)
    clock = ScaledClock(speed=100, start=0, wall=wall)
    wake = asyncio.Event()
    began = time.monotonic()
    await clock.sleep_until(5, wake)  # 0.05 wall seconds; nobody wakes it: times out quietly
    assert 0.03 < time.monotonic() - began < 5
    wall.t = 1.0
    began = time.monotonic()
    await clock.sleep_until(50, wake)  # already due: returns at once
    assert time.monotonic() - began < 0.5


async def test_scaled_clock_sleep_of_one_second_waits() -> None:
    clock = ScaledClock(speed=1, start=0, wall=FakeWall(0.0))
    wake = asyncio.Event()
    sleeper = asyncio.create_task(clock.sleep_until(1, wake))  # one wall second away
    await asyncio.sleep(0.05)
    assert not sleeper.done()
    wake.set()
    await asyncio.wait_for(sleeper, timeout=5)


async def test_scaled_clock_sleep_none_waits_for_wake() -> None:
    """No due time: it sleeps until woken, however long that takes, and not a moment less."""
    clock = ScaledClock(speed=1, start=0, wall=FakeWall())
    wake = asyncio.Event()
    sleeper = asyncio.create_task(clock.sleep_until(None, wake))
    await asyncio.sleep(0.1)
    assert not sleeper.done()  # a sleep that returned at once would be done here
    wake.set()
    await asyncio.wait_for(sleeper, timeout=5)


async def test_virtual_clock_sleep_none_waits_for_wake() -> None:
    clock = VirtualClock(start=7)
    wake = asyncio.Event()
    sleeper = asyncio.create_task(clock.sleep_until(None, wake))
    await asyncio.sleep(0.05)
    assert not sleeper.done()
    wake.set()
    await asyncio.wait_for(sleeper, timeout=5)
    assert clock.now() == 7


# --------------------------------------------------------------------------------------------
# Engine errors


def test_job_wider_than_machine_is_refused() -> None:
    engine = one_machine(4)
    with pytest.raises(ValueError, match="job 7 asks for 5 nodes; the machine has 4"):
        engine.load([job(7, 0, 5, 10, 10)])
    with pytest.raises(ValueError, match="job 8 asks for 5 nodes; the machine has 4"):
        engine.submit(job(8, 0, 5, 10, 10))
    with pytest.raises(ValueError, match="job 9 asks for 0 nodes"):
        engine.submit(job(9, 0, 0, 10, 10))
    with pytest.raises(ValueError, match="job 3 names machine 1, which does not exist"):
        engine.load([job(3, 0, 1, 10, 10, machine=1)])
    # Nothing was queued by the refused calls.
    engine.run()
    assert engine.finished == [] and engine.submitted == 0


def test_an_engine_that_keeps_no_finished_jobs() -> None:
    """A daemon's engine hands finished jobs on (on_end) and keeps none, replays keep all."""
    jobs = [job(i, 10 * i, 1 + i % 3, 50, 20 + i) for i in range(1, 40)]
    kept, dropped = one_machine(4), one_machine(4, keep_finished=False)
    seen: list[int] = []
    dropped.on_end.append(lambda j: seen.append(j.id))
    counts: list[int] = []
    for engine, copy in (
        (kept, jobs),
        (dropped, [job(j.id, j.submit, j.width, 50, j.runtime) for j in jobs]),
    ):
        engine.load(copy)
        engine.run(progress=counts.append)
    assert dropped.finished == [] and dropped.ended == kept.ended == len(jobs)
    assert sorted(seen) == sorted(j.id for j in kept.finished)
    assert counts[-1] == len(jobs)


def test_folded_units_are_the_runs_of_the_ids_each_job_held() -> None:
    """With ``fold_units`` a finished job of FOLD_FROM units or more keeps them as runs
    and lets its ids go: the runs the ids of the same schedule make, fragmented ones
    among them; a narrower job keeps its ids."""

    def jobs() -> list[Job]:
        return [job(i, 3 * i, 1 + (53 * i) % 160, 40, 5 + (11 * i) % 37) for i in range(1, 160)]

    ids, folded = one_machine(256, "fcfs-easy"), one_machine(256, "fcfs-easy", fold_units=True)
    for engine in (ids, folded):
        engine.load(jobs())
        engine.run()
    by_id = {j.id: j for j in ids.finished}
    assert len(folded.finished) == len(by_id) == 159
    for j in folded.finished:
        held = by_id[j.id]
        assert (j.start, j.end) == (held.start, held.end) and held.result.ran_on == ()
        assert j.unit_runs() == held.unit_runs() == node_runs(held.units)
        if j.width >= FOLD_FROM:
            assert j.units == [] and j.result.ran_on == node_runs(held.units)
            assert sum(j.result.ran_on[1::2]) == j.width
        else:
            assert j.units == held.units and j.result.ran_on == ()
    wide = [j for j in folded.finished if j.width >= FOLD_FROM]
    assert any(len(j.result.ran_on) > 2 for j in wide)  # some in two runs or more
    assert len(wide) < len(folded.finished)


def test_submit_before_now_is_refused() -> None:
    engine = one_machine(4)
    engine.load([job(1, 0, 1, 5, 5)])
    engine.advance_to(10)
    assert engine.now == 10
    with pytest.raises(ValueError, match=r"job 2 is submitted at 5, before now \(10\)"):
        engine.submit(job(2, 5, 1, 5, 5))
    with pytest.raises(ValueError, match="job 3 is submitted at 9, before now"):
        engine.load([job(3, 9, 1, 5, 5)])
    engine.submit(job(4, 10, 1, 5, 5))  # now itself is fine
    engine.run()
    assert [(j.id, j.start, j.end) for j in engine.finished] == [(1, 0, 5), (4, 10, 15)]


def test_engine_needs_one_policy_per_machine() -> None:
    grid = Grid([Machine("a", 2), Machine("b", 2)])
    with pytest.raises(ValueError, match="2 machines need as many policies, got 1"):
        Engine(grid, [make_policy("fcfs")])


def test_machine_model_errors() -> None:
    with pytest.raises(ValueError, match="at least one node"):
        NodePool(0)
    pool = NodePool(3)
    assert pool.allocate(2) == [0, 1]
    with pytest.raises(ValueError, match="asked for 2 nodes, only 1 are free"):
        pool.allocate(2)
    pool.release([0])
    assert pool.free_ids() == [0, 2]
    with pytest.raises(ValueError, match="at least one machine"):
        Grid([])
    with pytest.raises(ValueError, match="unique"):
        Grid([Machine("a", 1), Machine("a", 2)])
    assert Grid([Machine("a", 1), Machine("b", 2)]).index("b") == 1


def test_state_changes_are_checked() -> None:
    j = job(1, 0, 1, 1, 1)
    change_state(j, JobState.RUNNING)
    with pytest.raises(StateError, match="job 1: cannot go from RUNNING to HELD"):
        change_state(j, JobState.HELD)
    change_state(j, JobState.FINISHED)
    with pytest.raises(StateError, match="job 1: cannot go from FINISHED to QUEUED"):
        change_state(j, JobState.QUEUED)


# --------------------------------------------------------------------------------------------
# Event order within one second


def test_same_second_order_ends_submissions_one_pass() -> None:
    # The trace of case d in test_schedules.py (3 nodes).
    spec = [(1, 0, 3, 5, 5), (2, 5, 2, 4, 4), (3, 5, 1, 4, 4), (4, 9, 3, 2, 0), (5, 9, 3, 1, 1)]
    policy = make_policy("fcfs")
    engine = Engine(Grid([Machine("m", 3)]), [policy])
    log: list[tuple[int, str, int]] = []
    passes: list[int] = []
    engine.on_end.append(lambda j: log.append((engine.now, "end", j.id)))
    engine.on_submit.append(lambda j: log.append((engine.now, "submit", j.id)))
    engine.on_start.append(lambda j: log.append((engine.now, "start", j.id)))
    schedule = policy.schedule

    def counted(view: MachineView) -> list[Job]:
        passes.append(view.now)
        return schedule(view)

    policy.schedule = counted  # type: ignore[method-assign]
    engine.load([job(*s) for s in spec])
    engine.run()
    assert log == [
        (0, "submit", 1),
        (0, "start", 1),
        # t5: the end comes first, so both newcomers start on the freed nodes at once
        (5, "end", 1),
        (5, "submit", 2),
        (5, "submit", 3),
        (5, "start", 2),
        (5, "start", 3),
        (9, "end", 2),
        (9, "end", 3),
        (9, "submit", 4),
        (9, "submit", 5),
        (9, "start", 4),
        # job 4 runs 0 s: it ends in a second round at 9, and job 5 starts in that round
        (9, "end", 4),
        (9, "start", 5),
        (10, "end", 5),
    ]
    # One pass per round: 0, 5, 9 (twice: the zero-length job), 10.
    assert passes == [0, 5, 9, 9, 10]


def test_live_submissions_and_advance_to() -> None:
    engine = one_machine(2, "fcfs-easy")
    engine.submit(job(1, 3, 2, 4, 4))
    engine.submit(job(2, 3, 1, 2, 2))
    assert engine.next_event_time() == 3
    engine.advance_to(2)
    assert engine.now == 2 and engine.finished == [] and engine.waiting() == []
    engine.advance_to(5)
    assert engine.now == 5
    assert [j.id for j in engine.running()] == [1]
    assert [j.id for j in engine.waiting()] == [2]
    engine.run()
    assert [(j.id, j.start, j.end) for j in engine.finished] == [(1, 3, 7), (2, 7, 9)]
    assert engine.submitted == 2


# --------------------------------------------------------------------------------------------
# StuckJobsError


def test_stuck_jobs_error_when_a_policy_never_starts() -> None:
    class Hoarder(Policy):
        name = "hoarder"

        def __init__(self) -> None:
            self.queue: list[Job] = []

        def job_submitted(self, view: MachineView, job: Job) -> None:
            self.queue.append(job)

        def schedule(self, view: MachineView) -> list[Placement]:
            return []

        def waiting(self) -> list[Job]:
            return list(self.queue)

        def withdraw(self, view: MachineView, job: Job) -> None:
            self.queue.remove(job)

    engine = Engine(Grid([Machine("m", 2)]), [Hoarder()])
    engine.load([job(1, 0, 1, 5, 5), job(2, 1, 1, 5, 5)])
    with pytest.raises(StuckJobsError, match="2 jobs were still waiting"):
        engine.run()
    engine.run(until=100)  # with a horizon it is no error to stop with jobs waiting


class Misplacer(Policy):
    """Places every waiting job as its ``shape`` says: (machine, width) or None for its own."""

    name = "misplacer"

    def __init__(self, shape: tuple[int, int] | None) -> None:
        self.queue: list[Job] = []
        self.shape = shape

    def job_submitted(self, view: MachineView, job: Job) -> None:
        self.queue.append(job)

    def schedule(self, view: MachineView) -> list[Placement]:
        out = [Placement(j, *self.shape) if self.shape else self.place(j) for j in self.queue]
        self.queue = []
        return out

    def waiting(self) -> list[Job]:
        return list(self.queue)

    def withdraw(self, view: MachineView, job: Job) -> None:
        self.queue.remove(job)


@pytest.mark.parametrize(
    ("shape", "says"),
    [
        ((1, 2), "on machine 1 with 2 nodes; it waits on machine 0 for 2"),
        ((0, 1), "on machine 0 with 1 nodes; it waits on machine 0 for 2"),
    ],
)
def test_the_engine_refuses_a_placement_the_job_cannot_take(
    shape: tuple[int, int], says: str
) -> None:
    engine = Engine(Grid([Machine("m", 4)]), [Misplacer(shape)])
    engine.load([job(1, 0, 2, 5, 5)])
    with pytest.raises(PlacementError, match=says):
        engine.run()
    assert engine.machines[0].pool.free == 4  # nothing was allocated


def test_the_engine_refuses_more_nodes_than_are_free() -> None:
    engine = Engine(Grid([Machine("m", 3)]), [Misplacer(None)])
    engine.load([job(1, 0, 2, 5, 5), job(2, 0, 2, 5, 5)])
    with pytest.raises(PlacementError, match="placed job 2 .* 1 are free"):
        engine.run()
    assert engine.machines[0].pool.free == 1  # job 1 runs; job 2 took nothing


def test_a_policy_built_for_another_machine_is_refused() -> None:
    grid = Grid([Machine("a", 2), Machine("b", 2)])
    with pytest.raises(ValueError, match="built for machine 0, not 1"):
        Engine(grid, [make_policy("fcfs"), make_policy("fcfs")])


def synthetic_cases() -> Iterator[tuple[str, dict[str, str] | None]]:
    for name in policy_names():
        yield name, None
        if name.endswith("-cons"):
            for replan in ("rebuild", "compress", "guarded"):
                yield name, {"replan": replan}


@pytest.mark.parametrize(("policy", "params"), list(synthetic_cases()))
@pytest.mark.parametrize("kill", [True, False])
def test_no_stuck_jobs_on_synthetic_workloads(
    policy: str, params: dict[str, str] | None, kill: bool
) -> None:
    for seed in (1, 2):
        jobs = synthetic_jobs(250, nodes=16, seed=seed)
        engine = Engine(Grid([Machine("m", 16)]), [make_policy(policy, params)], kill=kill)
        engine.load(jobs)
        engine.run()  # raises StuckJobsError if a job is left waiting
        assert len(engine.finished) == len(jobs)
        assert all(j.state is JobState.FINISHED for j in jobs)


STUCK_SPEC = [(1, 0, 3, 1, 7), (2, 0, 2, 1, 0), (3, 0, 3, 2, 7), (4, 1, 1, 5, 9), (5, 1, 3, 3, 1)]


def test_overrun_then_rebuild() -> None:
    """Capacity 3, kill=False, fcfs-cons replan=rebuild; jobs (id, submit, width, est, run).

    t0: 1 (w3) runs [0,7) though its estimate is 1. t1: 1 is past its estimate, the plan
    assumes it ends at 2. t7: 1 ends; rebuild onto the empty machine: 2 [7,8) due, 3 [8,10),
    4 [10,15), 5 [15,18). 2 runs 0 s and ends in a second round at 7 -> rebuild: 3 [7,9)
    starts (really runs 7 s, to 14), 4 [9,14), 5 [14,17). t14: 3 ends -> 4 starts, runs 9 s
    to 23 (no event at its estimated end 19). t23: 5 [23,24).
    """
    jobs = [job(*s) for s in STUCK_SPEC]
    policy = make_policy("fcfs-cons", {"replan": "rebuild"})
    engine = Engine(Grid([Machine("m", 3)]), [policy], kill=False)
    engine.load(jobs)
    engine.run()
    assert {j.id: (j.start, j.end) for j in jobs} == {
        1: (0, 7),
        2: (7, 7),
        3: (7, 14),
        4: (14, 23),
        5: (23, 24),
    }


@pytest.mark.parametrize("params", [None, {"replan": "guarded"}, {"replan": "compress"}])
def test_no_stuck_jobs_after_an_overrun(params: dict[str, str] | None) -> None:
    """The same trace with fcfs-cons' default (guarded) and with compress.

    At t7 (job 1 ends) the plan made during job 1's overrun has starts in the past
    (2, 3 and 5). Compressing those promises clamped to now would need 6 nodes of 3 at 7
    and move jobs later, to times with no event, so nothing would run again; a plan with
    starts in the past is rebuilt instead, whatever the replan mode.
    """
    jobs = [job(*s) for s in STUCK_SPEC]
    engine = Engine(Grid([Machine("m", 3)]), [make_policy("fcfs-cons", params)], kill=False)
    engine.load(jobs)
    engine.run()
    assert len(engine.finished) == 5


# --------------------------------------------------------------------------------------------
# Several machines


def test_machines_of_a_grid_run_independently() -> None:
    grid = Grid([Machine("a", 2), Machine("b", 3)])
    engine = Engine(
        grid, [make_policy("fcfs"), make_policy("fcfs-easy", context=BuildContext(machine=1))]
    )
    jobs = [
        job(1, 0, 2, 10, 10, machine=0),  # fills a until 10
        job(2, 1, 1, 2, 2, machine=0),  # waits on a although b has room from 6
        job(3, 0, 3, 5, 5, machine=1),  # fills b until 5
        job(4, 1, 3, 1, 1, machine=1),  # b: [5,6)
        job(5, 6, 1, 1, 1, machine=1),  # b: free at once -> [6,7), node 0 of b
    ]
    engine.load(jobs)
    engine.run()
    got = {j.id: (j.start, j.end, j.units, j.result.started_by) for j in jobs}
    assert got == {
        1: (0, 10, [0, 1], "fcfs"),
        2: (10, 12, [0], "fcfs"),
        3: (0, 5, [0, 1, 2], "fcfs-easy"),
        4: (5, 6, [0, 1, 2], "fcfs-easy"),
        5: (6, 7, [0], "fcfs-easy"),
    }
    assert engine.machines[0].pool.free == 2 and engine.machines[1].pool.free == 3
    assert engine.machines[0].running_count == 0 and engine.machines[1].running_count == 0
