"""The engine's live transitions of running jobs (engine/core.py): terminated, requeued,
restored to the queue; timers, wake-ups a policy asks for, and nodes held by count."""

from __future__ import annotations

import random

import pytest

from batchd.engine.core import STUCK_AFTER, Engine, PlacementError, StuckJobsError
from batchd.engine.machine import MachineState
from batchd.model.job import UNSET, Job
from batchd.model.machine import Grid, Machine
from batchd.model.moldable import Moldable, Speedup
from batchd.model.states import JobState, StateError
from batchd.sched.core.order import ORDERS
from batchd.sched.core.policy import MachineView, Overflow, Placement
from batchd.sched.policies.inorder import InOrderPolicy
from batchd.sched.registry import make_policy

NODES = 4


def engine(policy: str = "fcfs", **kw: bool) -> Engine:
    return Engine(Grid([Machine("m", NODES)]), [make_policy(policy)], **kw)


def job(i: int, width: int = 1, submit: int = 0, runtime: int = 50, estimate: int = 100) -> Job:
    return Job(id=i, submit=submit, width=width, estimate=estimate, runtime=runtime)


def test_a_terminated_job_ends_now_and_frees_its_nodes() -> None:
    eng = engine()
    ended: list[int] = []
    eng.on_end.append(lambda j: ended.append(j.id))
    first, second = job(1, 4), job(2, 2)
    eng.submit(first)
    eng.submit(second)
    eng.instant(0)
    eng.advance_to(10)
    eng.terminate(first, "deleted")
    assert (first.state, first.end, first.result.outcome) == (JobState.FINISHED, 10, "deleted")
    assert ended == [1] and eng.machines[0].free == NODES
    eng.instant(10)
    assert second.start == 10
    eng.run()
    assert second.end == 60 and eng.ended == 2  # job 1's own end at 50 was forgotten
    with pytest.raises(ValueError, match="^job 1 is not running$"):
        eng.terminate(first, "deleted")


def test_an_instant_is_one_pass_and_leaves_an_end_in_that_second_for_the_next() -> None:
    # 4 nodes. Job 1 takes them all and runs 0 s; job 2 waits for them. The one pass of
    # the instant at 0 starts job 1, whose end (at 0 too) the next round handles: after
    # the instant job 2 still waits; the run then ends job 1 and starts job 2 at 0.
    eng = engine()
    first, second = job(1, 4, runtime=0), job(2, 4)
    eng.submit(first)
    eng.submit(second)
    eng.instant(0)
    assert (first.state, second.state) == (JobState.RUNNING, JobState.QUEUED)
    eng.run()
    assert (first.end, second.start, second.end) == (0, 0, 50)


def test_a_requeued_job_runs_again_from_the_start() -> None:
    eng = engine()
    first = job(1, 3, runtime=50)
    eng.submit(first)
    eng.instant(0)
    eng.advance_to(20)
    eng.requeue(first)
    assert first.state is JobState.QUEUED
    assert (first.start, first.end, first.units) == (UNSET, UNSET, [])
    assert first.result.started_by == "" and not first.result.killed
    m = eng.machines[0]
    assert m.free == NODES and m.running_count == 0
    assert [j.id for j in eng.waiting()] == [1]
    eng.instant(20)
    eng.run()
    assert (first.start, first.end, first.result.outcome) == (20, 70, "ok")
    assert eng.ended == 1


def test_a_requeue_puts_a_killed_job_back_unkilled() -> None:
    eng = engine()
    first = job(1, 1, runtime=500, estimate=100)
    eng.submit(first)
    eng.instant(0)
    assert first.result.killed  # it will reach its estimate
    eng.requeue(first)
    assert not first.result.killed


def test_only_a_running_job_is_requeued() -> None:
    eng = engine()
    waiting = job(1)
    with pytest.raises(ValueError, match="^job 1 is not running$"):
        eng.requeue(waiting)
    assert waiting.state is JobState.QUEUED


def test_a_requeued_moldable_job_waits_as_submitted() -> None:
    eng = engine("moldable-greedy")
    mold = Moldable(1, 4, Speedup("downey", 16, 0), 2, 40, 60)
    moldable = Job(id=1, submit=0, width=2, estimate=60, runtime=40, mold=mold)
    eng.submit(moldable)
    eng.instant(0)
    assert moldable.width == 4  # the policy gave it every free node
    eng.requeue(moldable)
    assert (moldable.width, moldable.runtime, moldable.estimate) == (2, 40, 60)


def test_a_job_requeued_while_the_daemon_was_down_is_reset() -> None:
    eng = engine()
    was = job(1, 2)
    was.state, was.start, was.units = JobState.RUNNING, 5, [0, 1]
    was.result.started_by, was.result.killed = "fcfs", True
    eng.restore_requeued(was)
    assert was.state is JobState.QUEUED
    assert (was.start, was.units, was.result.started_by, was.result.killed) == (
        UNSET,
        [],
        "",
        False,
    )
    assert eng.waiting() == []  # not queued yet: enqueue puts it there
    eng.enqueue(was)
    assert eng.waiting() == [was]
    eng.withdraw(was)
    assert eng.waiting() == []


def test_a_job_is_enqueued_only_on_a_machine_that_takes_it() -> None:
    eng = engine()
    wide = job(1, NODES + 1)
    with pytest.raises(ValueError, match="asks for 5 nodes"):
        eng.enqueue(wide)
    assert eng.waiting() == []


def test_timers_run_in_order_after_the_second_s_ends() -> None:
    eng = engine()
    log: list[tuple[int, str]] = []
    eng.on_end.append(lambda j: log.append((eng.now, f"end {j.id}")))
    eng.submit(job(1, runtime=10))
    eng.call_at(10, lambda: log.append((eng.now, "a")))
    eng.call_at(5, lambda: log.append((eng.now, "b")))
    eng.call_at(10, lambda: log.append((eng.now, "c")))
    eng.call_at(7, lambda: log.append((eng.now, "cancelled"))).cancel()
    assert eng.next_event_time() == 0
    eng.instant(0)
    assert eng.next_event_time() == 5
    eng.run()
    assert log == [(5, "b"), (10, "end 1"), (10, "a"), (10, "c")]
    eng.call_at(10, lambda: None)  # now itself is fine
    with pytest.raises(ValueError, match=r"^cannot set a timer at 9, before now \(10\)$"):
        eng.call_at(9, lambda: None)


def test_time_never_goes_back() -> None:
    eng = engine()
    eng.advance_to(10)
    eng.advance_to(5)  # already past: nothing changes
    assert eng.now == 10 and eng.machines[0].now == 10
    with pytest.raises(RuntimeError, match="^time cannot go back from 10 to 9$"):
        eng.instant(9)


def test_an_instant_without_events_still_makes_a_pass() -> None:
    eng = Engine(Grid([Machine("m", NODES)]), [make_policy("fcfs")])
    held = job(1)
    eng.advance_to(3)
    eng.enqueue(held)  # released: waits for the next pass
    eng.instant(3)
    assert held.start == 3 and eng.machines[0].now == 3


def test_load_merges_with_jobs_not_yet_submitted() -> None:
    eng = engine()
    eng.load([job(1, submit=0), job(3, submit=20)])
    eng.run(until=5)
    eng.load([job(4, submit=30), job(2, submit=10)])
    order: list[int] = []
    eng.on_submit.append(lambda j: order.append(j.id))
    eng.run()
    assert order == [2, 3, 4] and eng.submitted == 4
    eng2 = engine()
    eng2.load([])
    eng2.load([job(2, submit=4), job(1, submit=3)])
    assert eng2.next_event_time() == 3


def test_a_live_submission_ahead_of_the_trace_comes_first() -> None:
    eng = engine()
    order: list[tuple[int, int]] = []
    eng.on_submit.append(lambda j: order.append((eng.now, j.id)))
    eng.load([job(1, submit=10), job(2, submit=20)])
    eng.submit(job(3, submit=5))
    eng.submit(job(4, submit=10))
    assert eng.next_event_time() == 5
    eng.run()
    assert order == [(5, 3), (10, 1), (10, 4), (20, 2)]


class Window(InOrderPolicy):
    """FCFS that wakes at ``times`` and then ends or requeues the jobs ``verdicts`` names."""

    wakes = True

    def __init__(self, times: list[int], verdicts: dict[int, Overflow]) -> None:
        super().__init__("fcfs", ORDERS["fcfs"])
        self.times = times
        self.verdicts = verdicts
        self.asked: list[int] = []

    def next_wakeup(self, now: int) -> int | None:
        self.asked.append(now)
        later = [t for t in self.times if t > now]
        return later[0] if later else None

    def expired(self, view: MachineView) -> list[tuple[Job, Overflow]]:
        running = [h for h in view.holders() if isinstance(h, Job)]  # type: ignore[attr-defined]
        return [(j, self.verdicts[j.id]) for j in running if j.id in self.verdicts]


def test_a_policy_is_woken_at_its_time_to_end_or_requeue_jobs() -> None:
    policy = Window([15, 30], {1: "kill", 2: "requeue"})
    eng = Engine(Grid([Machine("m", NODES)]), [policy])
    requeued: list[tuple[int, int]] = []
    eng.on_requeue.append(lambda j: requeued.append((eng.now, j.id)))
    killed, again = job(1, 2, runtime=100, estimate=200), job(2, 2, runtime=100, estimate=200)
    eng.submit(killed)
    eng.submit(again)
    eng.run(until=15)
    assert (killed.state, killed.end, killed.result.outcome) == (JobState.FINISHED, 15, "overflow")
    assert requeued == [(15, 2)]
    assert again.start == 15  # back in the queue, started in the pass of that second
    policy.verdicts = {}
    eng.run()
    assert again.end == 115


def test_one_wake_up_timer_per_machine_moved_when_the_policy_asks_another_time() -> None:
    policy = Window([40], {})
    eng = Engine(Grid([Machine("m", NODES)]), [policy])
    woken: list[int] = []
    expired = policy.expired
    policy.expired = lambda view: woken.append(eng.now) or expired(view)  # type: ignore[method-assign,func-returns-value]
    eng.instant(0)
    eng.instant(1)  # asks the same time again: one timer
    assert len([t for t in eng._timers if not t[2].cancelled]) == 1
    policy.times = [20]
    eng.instant(2)
    assert len([t for t in eng._timers if not t[2].cancelled]) == 1
    eng.run()
    assert woken == [20]
    assert eng.next_event_time() is None


def test_stuck_jobs_are_named_after_a_year_without_progress() -> None:
    policy = Window([], {})
    policy.schedule = lambda view: []  # type: ignore[method-assign]
    policy.explain = lambda j, now: "the gate is shut"  # type: ignore[method-assign,assignment]
    eng = Engine(Grid([Machine("m", NODES)]), [policy])
    for i in (1, 2):
        eng.submit(job(i, submit=3))
    # A timer every day keeps time moving: only a year of it without a start is stuck.
    every(eng, 86_400, 86_400, STUCK_AFTER // 86_400 + 2000)
    with pytest.raises(
        StuckJobsError,
        match=r"^2 jobs have waited since 3 with nothing running and nothing left to arrive: "
        r"no window lets them run \(job 1: the gate is shut\)$",
    ) as caught:
        eng.run()
    assert STUCK_AFTER + 3 <= eng.now < STUCK_AFTER + 3 + 1100 * 86_400
    del caught


def test_nodes_held_by_count_when_no_unit_is_kept() -> None:
    eng = engine(keep_units=False)
    first, second = job(1, 3, runtime=10), job(2, 2, runtime=10)
    eng.submit(first)
    eng.submit(second)
    eng.instant(0)
    m = eng.machines[0]
    assert m.free == 1 and first.units == [] and m.running_widths() == [3]
    eng.run()
    assert (second.start, second.end) == (10, 20) and m.free == NODES
    assert first.units == second.units == []
    again = job(3, 4, submit=20)
    eng.submit(again)
    eng.instant(20)
    eng.requeue(again)
    assert m.free == NODES and m.running_count == 0


def test_units_are_dropped_after_the_end_when_not_kept_on_shared_nodes() -> None:
    eng = Engine(Grid([Machine("m", 8, slots_per_node=4)]), [make_policy("fcfs")], keep_units=False)
    one = Job(id=1, submit=0, width=2, estimate=10, runtime=10, pieces=(2,))
    seen: list[list[int]] = []
    eng.on_end.append(lambda j: seen.append(list(j.units)))
    eng.submit(one)
    eng.run()
    assert seen == [[0, 1]] and one.units == []


def test_a_zero_estimate_holds_its_nodes_for_a_second_in_the_plan() -> None:
    eng = engine(kill=False)
    zero = job(1, 2, runtime=5, estimate=0)
    eng.submit(zero)
    eng.instant(0)
    assert eng.machines[0].running_ends() == [1]
    eng.run()
    assert zero.end == 5 and eng.machines[0].running_count == 0


def test_an_estimate_is_a_kill_only_when_the_engine_kills() -> None:
    for kill, end in ((True, 30), (False, 90)):
        eng = engine(kill=kill)
        long = job(1, 1, runtime=90, estimate=30)
        eng.submit(long)
        eng.run()
        assert (long.end, long.result.killed) == (end, kill)
        assert long.result.outcome == ("walltime" if kill else "ok")


def test_a_negative_runtime_ends_at_once() -> None:
    eng = engine()
    odd = job(1, 1, runtime=-1, estimate=30)
    eng.submit(odd)
    eng.run()
    assert odd.end == 0


def test_a_placement_the_policy_widened_reshapes_a_moldable_job() -> None:
    class Widen(InOrderPolicy):
        def schedule(self, view: MachineView) -> list[Placement]:
            placed = super().schedule(view)
            return [Placement(p.job, p.machine, 3) for p in placed]

    eng = Engine(Grid([Machine("m", NODES)]), [Widen("fcfs", ORDERS["fcfs"])])
    mold = Moldable(1, 3, Speedup("fixed"), 1, 30, 60)
    moldable = Job(id=1, submit=0, width=1, estimate=60, runtime=30, mold=mold)
    eng.submit(moldable)
    eng.instant(0)
    assert moldable.width == 3 and len(moldable.units) == 3


def test_jobs_submitted_live_for_one_second_arrive_in_submission_order() -> None:
    eng = engine()
    order: list[int] = []
    eng.on_submit.append(lambda j: order.append(j.id))
    for i in (4, 2, 9):
        eng.submit(job(i, submit=5))
    eng.run()
    assert order == [4, 2, 9]


def test_ends_pushed_for_one_second_are_handled_in_that_order() -> None:
    eng = engine()
    ended: list[int] = []
    eng.on_end.append(lambda j: ended.append(j.id))
    for i, unit in ((3, 0), (1, 1), (2, 2)):
        was = job(i, 1, runtime=40)
        was.state, was.start, was.units = JobState.RUNNING, 0, [unit]
        eng.restore_running(was)
    eng.run()
    assert ended == [3, 1, 2]


def test_a_timer_knows_its_time_and_starts_live() -> None:
    eng = engine()
    timer = eng.call_at(7, lambda: None)
    assert timer.when == 7 and timer.cancelled is False
    timer.cancel()
    assert timer.cancelled is True


def test_a_widening_beyond_a_moldable_job_s_range_is_refused() -> None:
    class Widen(InOrderPolicy):
        def schedule(self, view: MachineView) -> list[Placement]:
            return [Placement(p.job, p.machine, 4) for p in super().schedule(view)]

    eng = Engine(Grid([Machine("m", NODES)]), [Widen("fcfs", ORDERS["fcfs"])])
    mold = Moldable(1, 3, Speedup("fixed"), 1, 30, 60)
    eng.submit(Job(id=1, submit=0, width=1, estimate=60, runtime=30, mold=mold))
    with pytest.raises(PlacementError, match="it waits on machine 0 for 1-3 nodes, 4 are free"):
        eng.instant(0)


def test_a_pass_holding_jobs_back_on_shared_nodes_gives_them_the_machine() -> None:
    views: list[object] = []
    policy = make_policy("fcfs")
    submitted = policy.job_submitted

    def seen(view: MachineView, j: Job) -> None:
        views.append(view)
        submitted(view, j)

    policy.job_submitted = seen  # type: ignore[method-assign,assignment]
    eng = Engine(Grid([Machine("m", 8, slots_per_node=2)]), [policy])
    first = Job(id=1, submit=0, width=4, estimate=9, runtime=9, pieces=(1, 1, 1, 1))  # a core each
    eng.submit(first)
    eng.instant(0)
    two = Job(id=2, submit=1, width=2, estimate=9, runtime=9, pieces=(2,))  # no whole node
    behind = [Job(id=i, submit=1, width=1, estimate=9, runtime=9, pieces=(1,)) for i in (3, 4)]
    for j in (two, *behind):
        eng.submit(j)
    eng.instant(1)
    # The pass placed all three on the four free cores; nothing passes the unplaced job.
    assert [j.id for j in eng.waiting()] == [2, 3, 4]
    assert eng.machines[0].unplaced == {2}
    assert len(views) >= 6 and all(v is eng.machines[0] for v in views)


def test_a_terminated_job_leaves_the_other_jobs_ends_alone() -> None:
    eng = engine()
    short, long = job(1, 1, runtime=10), job(2, 1, runtime=50)
    eng.submit(short)
    eng.submit(long)
    eng.instant(0)
    eng.terminate(long, "deleted")
    eng.run()
    assert (short.end, short.result.outcome) == (10, "ok")
    assert eng.ended == 2


@pytest.mark.parametrize(
    ("runtime", "end", "outcome"), [(-1, 5, "ok"), (0, 5, "ok"), (1, 6, "ok"), (100, 105, "ok")]
)
def test_a_restored_job_ends_after_its_runtime(runtime: int, end: int, outcome: str) -> None:
    eng = engine()
    was = job(1, 1, runtime=runtime, estimate=100)
    was.state, was.start, was.units = JobState.RUNNING, 5, [0]
    eng.advance_to(5)
    eng.restore_running(was)
    eng.run()
    assert (was.end, was.result.outcome, was.result.killed) == (end, outcome, False)


def test_the_policy_learns_of_a_requeue_on_its_machine() -> None:
    eng = engine()
    views: list[object] = []
    policy = eng.machines[0].policy
    ended = policy.job_ended
    policy.job_ended = lambda view, j: views.append(view) or ended(view, j)  # type: ignore[method-assign,func-returns-value]
    first = job(1, 2)
    eng.submit(first)
    eng.instant(0)
    eng.requeue(first)
    assert views == [eng.machines[0]]


def test_the_policy_is_given_its_machine_when_a_job_is_enqueued_or_withdrawn() -> None:
    eng = engine()
    views: list[object] = []
    policy = eng.machines[0].policy
    submitted, withdraw = policy.job_submitted, policy.withdraw
    policy.job_submitted = lambda view, j: views.append(view) or submitted(view, j)  # type: ignore[method-assign,func-returns-value]
    policy.withdraw = lambda view, j: views.append(view) or withdraw(view, j)  # type: ignore[method-assign,func-returns-value]
    waiting = job(1)
    eng.enqueue(waiting)
    eng.withdraw(waiting)
    assert views == [eng.machines[0]] * 2 and eng.waiting() == []


def test_the_holder_of_a_unit() -> None:
    eng = engine()
    first = job(1, 2)
    eng.submit(first)
    eng.instant(0)
    m = eng.machines[0]
    assert m.holder_of(1) is first
    assert m.holder_of(3) is None


class Stuck(Window):
    """Starts nothing; explains why as ``why`` says, noting what it was asked."""

    def __init__(self, why: str) -> None:
        super().__init__([], {})
        self.why = why
        self.explained: list[tuple[int, int]] = []

    def schedule(self, view: MachineView) -> list[Placement]:
        return []

    def explain(self, job: Job, now: int) -> str:
        self.explained.append((job.id, now))
        return self.why


def every(eng: Engine, step: int, first: int, count: int) -> None:
    """Timers that keep time moving: the stuck check runs every 1,024 rounds."""
    for k in range(count):
        eng.call_at(first + step * k, lambda: None)


def test_a_stuck_job_without_an_explanation_does_not_fit() -> None:
    policy = Stuck("")
    eng = Engine(Grid([Machine("m", NODES)]), [policy])
    eng.submit(job(1))
    every(eng, 86_400, 86_400, STUCK_AFTER // 86_400 + 1100)
    with pytest.raises(StuckJobsError, match=r"\(job 1: it does not fit\)$"):
        eng.run()
    assert policy.explained == [(1, eng.now)]


def test_jobs_that_waited_less_than_a_year_are_not_stuck_yet() -> None:
    """Late in emulated time, a job that waited for months is no stuck job."""
    eng = Engine(Grid([Machine("m", NODES)]), [Stuck("never")])
    eng.submit(job(1, submit=STUCK_AFTER))
    every(eng, 3600, STUCK_AFTER + 3600, 1100)
    with pytest.raises(StuckJobsError, match="^1 jobs were still waiting when no event was left$"):
        eng.run()


def test_a_job_is_stuck_after_exactly_a_year() -> None:
    """Checked every 1,024 seconds with events: the 1,024th is a year after the arrival."""
    eng = Engine(Grid([Machine("m", NODES)]), [Stuck("never")])
    eng.submit(job(1))
    for t in range(1, 1023):
        eng.call_at(t, lambda: None)
    eng.call_at(STUCK_AFTER, lambda: None)
    eng.call_at(STUCK_AFTER + 1, lambda: None)
    with pytest.raises(StuckJobsError, match="have waited since 0"):
        eng.run()
    assert eng.now == STUCK_AFTER


def test_jobs_still_to_arrive_may_yet_unblock_the_stuck() -> None:
    eng = Engine(Grid([Machine("m", NODES)]), [Stuck("never")])
    eng.submit(job(1))
    every(eng, 86_400, 86_400, STUCK_AFTER // 86_400 + 1100)
    late = STUCK_AFTER + 2000 * 86_400
    eng.submit(job(2, submit=late))
    with pytest.raises(StuckJobsError, match="^2 jobs were still waiting when no event was left$"):
        eng.run()
    assert eng.now == late


def test_a_job_past_its_estimate_is_planned_to_end_in_a_second() -> None:
    eng = engine(kill=False)
    over, later = job(1, 1, runtime=100, estimate=5), job(2, 1, runtime=100, estimate=60)
    eng.submit(over)
    eng.submit(later)
    eng.advance_to(10)
    m = eng.machines[0]
    assert m.overrun and m.running_ends() == [11, 60]
    ends, widths = m.running_arrays()
    assert ends.tolist() == [11, 60] and widths.tolist() == m.running_widths()


@pytest.mark.parametrize("keep_from", [1, 16, 256])
@pytest.mark.parametrize("seed", range(3))
def test_the_running_jobs_as_arrays_follow_every_start_and_end(
    seed: int, keep_from: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # More jobs run at once than the arrays' first room (64), and end in any order; the
    # arrays are kept from keep_from running jobs, dropped below half as many.
    monkeypatch.setattr(MachineState, "KEEP_ARRAYS_FROM", keep_from)
    rng = random.Random(seed)
    eng = Engine(Grid([Machine("m", 300)]), [make_policy("fcfs-cons")])
    m = eng.machines[0]
    m.running_arrays()
    seen = []

    def check(job: Job) -> None:
        ends, widths = m.running_arrays()
        assert ends.tolist() == m.running_ends() and widths.tolist() == m.running_widths()
        seen.append(len(ends))

    eng.on_start.append(check)
    eng.on_end.append(check)
    for i in range(1, 400):
        runtime, estimate = rng.randint(0, 900), rng.randint(1, 900)
        eng.submit(job(i, rng.randint(1, 4), rng.randint(0, 2000), runtime, estimate))
    eng.run()
    assert len(seen) == 2 * 399 and max(seen) > 64


def test_a_zero_estimate_in_nodes_held_by_count() -> None:
    eng = engine(kill=False, keep_units=False)
    zero = job(1, 2, runtime=5, estimate=0)
    eng.submit(zero)
    eng.run()
    assert zero.end == 5 and eng.machines[0].free == NODES


def test_a_policy_that_starts_a_job_not_queued_is_refused() -> None:
    class Eager(InOrderPolicy):
        """Places a held job too: a bug the engine must not let pass."""

        def __init__(self, extra: Job) -> None:
            super().__init__("fcfs", ORDERS["fcfs"])
            self.extra = extra

        def schedule(self, view: MachineView) -> list[Placement]:
            return [Placement(self.extra, 0, self.extra.width)]

    held = job(7)
    held.state = JobState.HELD
    eng = Engine(Grid([Machine("m", NODES)]), [Eager(held)])
    with pytest.raises(StateError, match="^job 7: cannot go from HELD to RUNNING$"):
        eng.instant(0)


def test_the_policy_is_given_its_machine_when_a_job_ends() -> None:
    eng = engine()
    views: list[object] = []
    policy = eng.machines[0].policy
    ended = policy.job_ended
    policy.job_ended = lambda view, j: views.append(view) or ended(view, j)  # type: ignore[method-assign,func-returns-value]
    eng.submit(job(1, 2, runtime=5))
    eng.run()
    assert views == [eng.machines[0]]


def test_a_requeued_job_left_waiting_is_stuck_since_it_started() -> None:
    """A start is progress: a job started at 3 and requeued at 5 has waited since 3."""

    class Once(Window):
        def schedule(self, view: MachineView) -> list[Placement]:
            if view.now < 3 or self.verdicts.get(0):
                return []
            placed = super().schedule(view)
            if placed:
                self.verdicts[0] = "requeue"  # started once: never again
            return placed

    policy = Once([5], {1: "requeue"})
    eng = Engine(Grid([Machine("m", NODES)]), [policy])
    started = job(1, runtime=100, estimate=200)
    eng.submit(started)
    every(eng, 1, 1, 4)  # passes at 1 .. 4: it starts at 3
    every(eng, 86_400, 86_400, STUCK_AFTER // 86_400 + 1100)
    with pytest.raises(StuckJobsError, match="^1 jobs have waited since 3 "):
        eng.run()


def test_a_grid_port_takes_any_width_but_none() -> None:
    eng = engine()
    eng.machines[0].policy.grid_wide = True
    eng.submit(job(1, NODES * 3))  # wider than the machine: the port sends it on
    with pytest.raises(ValueError, match="^job 2 asks for 0 nodes; the machine has 4$"):
        eng.submit(job(2, 0))


def test_a_live_arrival_after_the_trace_s_next_job_waits_its_turn() -> None:
    eng = engine()
    seen: list[tuple[int, int]] = []
    eng.on_submit.append(lambda j: seen.append((eng.now, j.id)))
    eng.load([job(1, submit=10)])
    eng.submit(job(2, submit=30))
    eng.run()
    assert seen == [(10, 1), (30, 2)]


def test_the_end_of_a_terminated_job_is_no_event() -> None:
    eng = engine()
    gone = job(1, runtime=50)
    eng.submit(gone)
    eng.instant(0)
    eng.advance_to(10)
    eng.terminate(gone, "deleted")
    assert eng.next_event_time() is None


def test_progress_is_reported_every_1024_rounds() -> None:
    eng = engine()
    eng.load([job(i, submit=i, runtime=0) for i in range(2100)])
    counts: list[int] = []
    eng.run(progress=counts.append)
    # Two rounds a second: each zero-length job ends in a round of its own.
    assert counts == [512, 1024, 1536, 2048, 2100]


def test_a_job_started_while_a_node_is_out_gives_back_its_own() -> None:
    eng = engine()
    eng.node_out(0, 0)
    started = job(1, 2)
    eng.submit(started)
    eng.instant(0)
    assert started.units == [1, 2]
    assert eng.machines[0].running_widths() == [2]


def test_a_new_engine_s_machines_start_at_second_0_with_its_kill_rule() -> None:
    grid = Grid([Machine("m", NODES)])
    for kill in (True, False):
        eng = Engine(grid, [make_policy("fcfs")], kill=kill)
        assert eng.grid is grid
        assert [(m.now, m.kill) for m in eng.machines] == [(0, kill)]


def test_a_job_enqueued_and_never_started_is_stuck_since_second_0() -> None:
    eng = Engine(Grid([Machine("m", NODES)]), [Stuck("never")])
    eng.enqueue(job(1))  # released: it never arrived through a submission
    every(eng, 86_400, 86_400, STUCK_AFTER // 86_400 + 1100)
    with pytest.raises(StuckJobsError, match="^1 jobs have waited since 0 "):
        eng.run()


def test_a_second_handled_at_once_skips_a_terminated_job_s_end_only() -> None:
    eng = engine()
    gone, stays = job(1, runtime=50), job(2, runtime=50)
    eng.submit(gone)
    eng.submit(stays)
    eng.instant(0)
    eng.advance_to(10)
    eng.terminate(gone, "deleted")
    eng.instant(50)
    assert (stays.state, stays.end) == (JobState.FINISHED, 50)
    assert (gone.end, eng.ended) == (10, 2)


def test_the_running_jobs_as_arrays_count_only_nodes_in_service() -> None:
    eng = engine("fcfs-cons")
    m = eng.machines[0]
    wide = job(1, 3, estimate=100)
    eng.submit(wide)
    eng.instant(0)
    assert m.running_arrays()[1].tolist() == [3]
    eng.node_out(0, wide.units[0])  # drained: it does not come back when the job ends
    assert m.running_widths() == [2] and m.running_arrays()[1].tolist() == [2]
    eng.node_in(0, wide.units[0])
    assert m.running_arrays()[1].tolist() == [3]
