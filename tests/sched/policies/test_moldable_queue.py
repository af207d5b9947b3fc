"""The moldable policies' queues: jobs that leave, the plans and widths they show, and the
step statistics, on small cases worked out by hand."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
from moldutil import mold_job
from spies import QuarterClock

from batchd.engine.core import Engine
from batchd.engine.machine import MachineState
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.moldable import Moldable, Speedup
from batchd.model.reservation import Reservation
from batchd.model.times import NEVER
from batchd.sched.core.plans import running_arrays_of
from batchd.sched.core.policy import BuildContext, Placement
from batchd.sched.core.profile import Profile
from batchd.sched.policies import moldable_iterative
from batchd.sched.policies.moldable_fairshare import MoldableFairshare, MoldRows
from batchd.sched.policies.moldable_greedy import MoldableGreedy, greedy_width
from batchd.sched.policies.moldable_iterative import (
    MoldableIterative,
    StepInput,
    StepResult,
    StepStats,
    job_shape,
)
from batchd.sched.registry import make_policy

LINEAR10 = Speedup("downey", 10, 0)  # S(n) = n up to 10 nodes
LINEAR4 = Speedup("downey", 4, 0)


def _engine(nodes: int, policy: object, jobs: list[Job]) -> Engine:
    engine = Engine(Grid([Machine("m", nodes)]), [policy])  # type: ignore[list-item]
    engine.load(jobs)
    return engine


# -- moldable-greedy -------------------------------------------------------------------------


def test_greedy_shows_chosen_widths_and_forgets_a_withdrawn_choice() -> None:
    # 10 nodes; a rigid job holds 6 until 100. Jobs 2, 3 and 4 (linear, 100 s on 2
    # nodes) come at 0, 1, 2. Job 2 takes the 4 free nodes now (50 s); job 3 those 4
    # from 50 (ends 100); job 4 finds nothing free before 100 and takes all 10 (20 s).
    policy = make_policy("moldable-greedy")
    assert isinstance(policy, MoldableGreedy)
    rigid = Job(1, 0, 6, 100, 100)
    a, b, c = (mold_job(i, i - 2, Moldable(1, 10, LINEAR10, 2, 100, 100)) for i in (2, 3, 4))
    engine = _engine(10, policy, [rigid, a, b, c])
    engine.advance_to(2)
    view = engine.machines[0]
    assert (a.start, a.width) == (0, 4)
    assert (policy.planned_width(b), policy.planned_width(c)) == (4, 10)
    assert policy.planned_starts(view) == [(b, 50), (c, 100)]
    # Job 3 leaves: its choice is forgotten (its requested width again), and the plan
    # made anew keeps job 4 at its chosen 10 nodes, so from 100 (at its requested 2
    # nodes it would start at 50).
    engine.withdraw(b)
    assert policy.planned_width(b) == 2
    assert b not in policy.chosen
    late = Job(5, 2, 1, 10, 10)  # rigid: never chosen a width, withdrawn all the same
    policy.job_submitted(view, late)
    policy.withdraw(view, late)
    assert policy.planned_starts(view) == [(c, 100)]
    engine.run()
    assert (c.start, c.width, c.end) == (100, 10, 120)
    assert b.start == -1


# -- moldable-fairshare ----------------------------------------------------------------------


def _linear(jid: int, submit: int, work: int) -> Job:
    return mold_job(jid, submit, Moldable(1, 10, LINEAR10, 1, work, work))


def _fairshare(nodes: int) -> MoldableFairshare:
    policy = make_policy("moldable-fairshare", None, BuildContext(nodes=nodes))
    assert isinstance(policy, MoldableFairshare)
    return policy


def test_fairshare_withdraw_frees_the_share_of_the_job_that_left() -> None:
    # 10 nodes full until 100; three equal jobs (work 1000): limits 3 each (10/3). When
    # job 4 leaves, the two left weigh half each: limits 5, both from 100 for 200 s.
    policy = _fairshare(10)
    rigid = Job(1, 0, 10, 100, 100)
    a, b, c = _linear(2, 1, 1000), _linear(3, 2, 1000), _linear(4, 3, 1000)
    engine = _engine(10, policy, [rigid, a, b, c])
    engine.advance_to(3)
    view = engine.machines[0]
    assert [s for _, s in policy.planned_starts(view)] == [100, 100, 100]
    assert [policy.planned_width(j) for j in (a, b, c)] == [3, 3, 3]
    spare, row = len(policy.table.spare), policy.rows.at(0, 2)
    engine.withdraw(c)
    assert policy.waiting() == [a, b]
    assert len(policy.table.spare) == spare + 1 and policy.table.spare[-1] == row  # free again
    assert policy.planned_width(c) == c.width  # no longer planned
    assert policy.planned_starts(view) == [(a, 100), (b, 100)]
    assert (policy.planned_width(a), policy.planned_width(b)) == (5, 5)
    engine.run()
    assert [(j.start, j.width, j.end) for j in (a, b)] == [(100, 5, 300), (100, 5, 300)]


def test_fairshare_refuses_to_withdraw_a_job_it_does_not_hold() -> None:
    policy = _fairshare(4)
    held = _linear(2, 5, 100)
    engine = _engine(4, policy, [Job(1, 0, 4, 100, 100), held])
    engine.advance_to(5)
    view = engine.machines[0]
    for stranger in (_linear(3, 9, 100), _linear(1, 0, 100), _linear(7, 5, 100)):
        with pytest.raises(KeyError, match=f"job {stranger.id} is not waiting in this queue"):
            policy.withdraw(view, stranger)
    assert policy.waiting() == [held]


def test_fairshare_plan_of_an_empty_queue() -> None:
    policy = _fairshare(4)
    engine = _engine(4, policy, [])
    view = engine.machines[0]
    assert policy.planned_starts(view) == []
    job = _linear(1, 0, 100)
    assert policy.planned_width(job) == job.width


def test_mold_rows_grow_and_reuse_the_rows_of_jobs_that_left() -> None:
    table = MoldRows(2)
    rigid = Job(1, 0, 3, 50, 40)
    rows = [table.add(rigid), table.add(_linear(2, 0, 100))]
    assert rows == [0, 1]
    assert table.ints[0].tolist() == [3, 3, 3, 50, 1, 0]
    assert table.floats[0].tolist() == [
        1.0,
        0.0,
        pytest.approx((3 * 50) ** 0.5),
    ]  # width x estimate
    assert table.ints[1].tolist() == [1, 10, 1, 100, 0, 0]
    assert table.floats[1].tolist() == [10.0, 0.0, 10.0]  # sqrt(100 s x S(1) = 1)
    rows += [table.add(_linear(3, 0, 400)), table.add(_linear(4, 0, 9))]  # full: it doubles
    assert (rows, len(table.ints), len(table.floats)) == ([0, 1, 2, 3], 4, 4)
    assert table.ints[:2].tolist() == [[3, 3, 3, 50, 1, 0], [1, 10, 1, 100, 0, 0]]
    assert table.add(_linear(5, 0, 9)) == 4  # and doubles again
    assert len(table.ints) == 8
    table.decide(1, 7)
    assert (table.decided(0), table.decided(1)) == (0, 7)
    table.free(1)
    assert table.add(_linear(6, 0, 9)) == 1
    assert table.add(_linear(7, 0, 9)) == 5


def test_mold_rows_weigh_the_work_on_the_requested_width() -> None:
    table = MoldRows(4)
    # 100 s on 2 nodes of a linear speedup: 200 processor-seconds of work.
    two = table.add(mold_job(1, 0, Moldable(1, 4, LINEAR4, 2, 100, 100)))
    assert table.floats[two].tolist() == [4.0, 0.0, pytest.approx(200**0.5)]
    # Without an estimate the work counts as 1 s on the requested width: S(2) = 2.
    unknown = table.add(mold_job(2, 0, Moldable(1, 4, LINEAR4, 2, 100, 0)))
    assert table.floats[unknown].tolist() == [4.0, 0.0, pytest.approx(2**0.5)]
    fixed = table.add(mold_job(3, 0, Moldable(1, 4, Speedup("fixed"), 2, 100, 100)))
    assert table.ints[fixed].tolist() == [1, 4, 2, 100, 1, 0]  # flat: no node helps
    assert table.floats[fixed][2] == pytest.approx(100**0.5)


# -- moldable-iterative ----------------------------------------------------------------------


def test_iterative_plan_in_hand_is_dropped_when_the_machine_changes() -> None:
    # 4 nodes held until 100; X (linear, 400 s on 1) plans all 4 from 100. Once the
    # machine changes the plan in hand no longer holds: X shows its requested width.
    policy = make_policy("moldable-iterative")
    assert isinstance(policy, MoldableIterative)
    x = mold_job(2, 1, Moldable(1, 4, LINEAR4, 1, 400, 400))
    engine = _engine(4, policy, [Job(1, 0, 4, 100, 100), x])
    engine.advance_to(1)
    assert policy.planned_width(x) == 4
    policy.invalidate()
    assert policy.planned_width(x) == 1
    assert policy.planned_starts(engine.machines[0]) == [(x, 100)]
    assert policy.planned_width(x) == 4  # planned again


def _result(trials: int, accepted: int) -> StepResult:
    return StepResult(None, None, trials, accepted)  # type: ignore[arg-type]


def test_step_statistics_summary() -> None:
    stats = StepStats()
    assert stats.summary() == {
        "steps": 0,
        "avg_queue": 0.0,
        "trials": 0,
        "accepted": 0,
        "step_seconds_mean": 0.0,
        "step_seconds_max": 0.0,
    }
    stats.add(4, _result(7, 2), 0.5)
    stats.add(3, _result(5, 1), 2.0)
    stats.add(3, _result(0, 0), 0.25)
    assert stats.summary() == {
        "steps": 3,
        "avg_queue": 3.3333,
        "trials": 12,
        "accepted": 3,
        "step_seconds_mean": 2.75 / 3,
        "step_seconds_max": 2.0,
    }


def test_fairshare_widths_before_a_plan_once_reserved_and_when_nothing_fits() -> None:
    # 3 nodes: a rigid job holds 2 until 100, and an advance reservation the third from 10
    # to 200. X (fixed runtime 50 s, 1..3 nodes, asks for 2) cannot start now (the free
    # node is taken at 10); from 100 it fits on 1 or 2 nodes alike and is reserved on
    # the narrowest, 1.
    policy = _fairshare(3)
    fixed = Moldable(1, 3, Speedup("fixed", 1, 0), 2, 50, 50)
    x = mold_job(2, 0, fixed)
    engine = Engine(Grid([Machine("m", 3)]), [policy])
    engine.add_reservation(Reservation(id=1, start=10, end=200, width=1))
    engine.load([Job(1, 0, 2, 100, 100), x])
    engine.advance_to(0)
    assert policy.reservation == (x, 100)
    assert policy.planned_width(x) == 1  # decided, though no plan was asked for
    engine.run()
    assert (x.start, x.width) == (100, 1)


def test_fairshare_width_of_a_job_not_yet_decided_nor_planned() -> None:
    # Queued, with no pass run and no plan made: its requested width.
    policy = _fairshare(4)
    job = mold_job(2, 0, Moldable(1, 4, LINEAR4, 2, 100, 100))
    policy.job_submitted(MachineState(0, Machine("m", 4), policy, kill=True), job)
    assert policy.waiting() == [job]
    assert policy.planned_width(job) == 2


def test_fairshare_plan_shows_width_one_and_requested_width_when_nothing_fits() -> None:
    # 4 nodes full until 100, 2 of them out of service. Four equal jobs (linear, ask for
    # 2 nodes, 1..4) have limits of 1 node each (4 nodes / 4); a fifth needs 3 nodes at
    # least and never fits on the 2 in service: no start, shown at its requested width.
    policy = _fairshare(4)
    equal = [mold_job(i, i, Moldable(1, 4, LINEAR4, 2, 100, 100)) for i in (2, 3, 4, 5)]
    wide = mold_job(6, 6, Moldable(3, 4, LINEAR4, 3, 100, 100))
    engine = _engine(4, policy, [Job(1, 0, 2, 100, 100), *equal, wide])
    engine.node_out(0, 2)
    engine.node_out(0, 3)
    engine.advance_to(6)
    plan = dict(policy.planned_starts(engine.machines[0]))
    assert plan[wide] == NEVER
    assert [policy.planned_width(j) for j in equal] == [1, 1, 1, 1]
    assert policy.planned_width(wide) == 3


def test_greedy_width_on_an_idle_machine() -> None:
    idle = Profile.of_running(4, 0, [], [], room=4)
    # A fixed runtime ignores A: every width ends alike, so the narrowest, 1.
    fixed = mold_job(1, 0, Moldable(1, 4, Speedup("fixed", 4, 0), 2, 100, 100))
    assert greedy_width(fixed, idle, 0) == 1
    # Linear speedup to 4: the widest ends soonest.
    assert greedy_width(mold_job(2, 0, Moldable(1, 4, LINEAR4, 2, 100, 100)), idle, 0) == 4
    # No width of 5..6 ever fits on 4 nodes: the requested width; a rigid job keeps its own.
    wide = mold_job(3, 0, Moldable(5, 6, LINEAR10, 6, 100, 100))
    assert greedy_width(wide, idle, 0) == 6
    assert greedy_width(Job(4, 0, 3, 100, 100), idle, 0) == 3


def test_greedy_plans_a_job_without_an_estimate_for_one_second() -> None:
    # 2 idle nodes. Job 1 has no estimate: every width lasts 1 s, so it takes 1 node (it
    # asked for 2) for [0, 1). Job 2 wants both nodes: it is planned at 1.
    policy = make_policy("moldable-greedy")
    assert isinstance(policy, MoldableGreedy) and policy.name == "moldable-greedy"
    view = MachineState(0, Machine("m", 2), policy, kill=True)
    unknown = mold_job(1, 0, Moldable(1, 2, LINEAR4, 2, 100, 0))
    rigid = Job(2, 0, 2, 50, 50)
    policy.job_submitted(view, unknown)
    policy.job_submitted(view, rigid)
    assert policy.planned_width(unknown) == 1
    assert (unknown.result.submit_plan, rigid.result.submit_plan) == (0, 1)


def test_fairshare_queue_stays_in_submit_order_whatever_the_arrival_order() -> None:
    # A job put back in the queue (released, altered) may come after a later one: it
    # still goes before it. Rigid widths 1 and 3 on 4 idle nodes: both start now.
    policy = _fairshare(4)
    assert (policy.name, policy.reservation) == ("moldable-fairshare", None)
    view = MachineState(0, Machine("m", 4), policy, kill=True)
    late, early = Job(2, 5, 3, 50, 50), Job(1, 3, 1, 100, 100)
    policy.job_submitted(view, late)
    policy.job_submitted(view, early)
    assert policy.waiting() == [early, late]
    assert policy.planned_starts(view) == [(early, 0), (late, 0)]
    assert (policy.planned_width(early), policy.planned_width(late)) == (1, 3)
    policy.withdraw(view, early)
    assert policy.waiting() == [late]
    unplanned = Job(3, 9, 1, 10, 10)  # withdrawn before any plan showed it
    policy.job_submitted(view, unplanned)
    policy.withdraw(view, unplanned)
    assert policy.waiting() == [late]


@pytest.mark.parametrize(
    ("context", "shape"), [(None, [(0, 5, 20)] * 2), (20, [(0, 10, 10), (10, 10, 20)])]
)
def test_fairshare_system_size_is_the_machine_or_the_one_built_for(
    context: int | None, shape: list[tuple[int, int, int]]
) -> None:
    # Two equal jobs (work 100) on 10 nodes: half the system each. Built without a size,
    # the system is the machine's 10 nodes (5 each, side by side); built for 20 nodes,
    # each may take 10 and they run one after the other.
    policy = make_policy("moldable-fairshare", None, BuildContext(nodes=context))
    assert isinstance(policy, MoldableFairshare)
    jobs = [_linear(1, 0, 100), _linear(2, 0, 100)]
    _engine(10, policy, jobs).run()
    assert [(j.start, j.width, j.end) for j in jobs] == shape


def test_iterative_step_input_and_plan_after_a_partial_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 4 nodes; at 0 R (rigid, 2 nodes, 100 s), M (1..4, linear, 200 s on 1) and W (rigid,
    # 4 nodes, 10 s). Fig. 6: M on 2 beside R until 100 (ends 100 + 100 + 110 = 310);
    # on 3 it would wait for R. R and M start; W keeps its plan: all 4 nodes at 100.
    # Each step reads the clock twice, a quarter second apart.
    monkeypatch.setattr(moldable_iterative, "time", QuarterClock())
    policy = make_policy("moldable-iterative")
    assert isinstance(policy, MoldableIterative)
    steps: list[StepInput] = []
    policy.on_step = steps.append
    r, w = Job(1, 0, 2, 100, 100), Job(3, 0, 4, 10, 10)
    m = mold_job(2, 0, Moldable(1, 4, LINEAR4, 1, 200, 200))
    engine = _engine(4, policy, [r, m, w])
    engine.advance_to(0)
    assert [(j.start, j.width) for j in (r, m)] == [(0, 2), (0, 2)]
    assert policy.planned_width(w) == 4
    plan = policy.planned_starts(engine.machines[0])
    assert plan == [(w, 100)] and type(plan[0][1]) is int  # a second count, as qstat shows
    assert len(steps) == 1 and steps[0].now == 0
    assert steps[0].shapes.tolist() == [[2, 2, 2, 100, 1], [1, 4, 1, 200, 0], [4, 4, 4, 10, 1]]
    engine.run()
    assert (w.start, w.end) == (100, 110)
    summary = policy.report()["moldable_iterative"]
    assert summary["step_seconds_max"] == 0.25
    assert summary["step_seconds_mean"] == 0.25


def test_fairshare_plans_around_more_reservations_than_jobs() -> None:
    # 4 nodes; five advance reservations of one node each, [10, 20) to [50, 60). A job
    # of work 8 (linear) takes all 4 nodes now: 2 s, done before the first one.
    policy = _fairshare(4)
    engine = Engine(Grid([Machine("m", 4)]), [policy])
    for k in range(5):
        engine.add_reservation(Reservation(id=k + 1, start=10 * (k + 1), end=10 * (k + 2), width=1))
    job = _linear(1, 0, 8)
    engine.load([job])
    engine.run()
    assert (job.start, job.width, job.end) == (0, 4, 2)


def test_job_shape_of_rigid_moldable_and_fixed_jobs() -> None:
    assert job_shape(Job(1, 0, 3, 50, 50)) == ((3, 3, 3, 50, 1), (1.0, 0.0))
    linear = mold_job(2, 0, Moldable(1, 4, LINEAR4, 2, 100, 100))
    assert job_shape(linear) == ((1, 4, 2, 100, 0), (4.0, 0.0))
    # A fixed runtime is fixed whatever A it carries.
    fixed = mold_job(3, 0, Moldable(1, 4, Speedup("fixed", 4, 0), 2, 100, 100))
    assert job_shape(fixed) == ((1, 4, 2, 100, 1), (4.0, 0.0))


def _three_jobs_of_1000_then_one_of_16000() -> tuple[
    MoldableFairshare, Engine, MachineState, list[Job]
]:
    # 10 nodes full until 100. Jobs 2, 3, 4 (work 1000 each, at 1, 2, 3) have limits of
    # 3 nodes at 3; job 5 (work 16000) comes at 4.
    policy = _fairshare(10)
    jobs = [_linear(2, 1, 1000), _linear(3, 2, 1000), _linear(4, 3, 1000)]
    jobs.append(_linear(5, 4, 16000))
    engine = _engine(10, policy, [Job(1, 0, 10, 100, 100), *jobs])
    engine.advance_to(3)
    view = engine.machines[0]
    policy.planned_starts(view)
    assert [policy.planned_width(j) for j in jobs[:3]] == [3, 3, 3]
    return policy, engine, view, jobs


def test_fairshare_limits_follow_the_queue_through_an_arrival_and_a_departure() -> None:
    # Job 5 comes and job 3 leaves: weights sqrt(1000), sqrt(1000), sqrt(16000),
    # 31.6 + 31.6 + 126.5 = 189.7 of 10 nodes: limits 1, 1 and 6.
    policy, engine, view, (a, b, c, big) = _three_jobs_of_1000_then_one_of_16000()
    engine.advance_to(4)
    engine.withdraw(b)
    policy.planned_starts(view)
    assert [policy.planned_width(j) for j in (a, c, big)] == [1, 1, 6]


def test_fairshare_limits_of_a_newcomer_after_jobs_started() -> None:
    # 10 nodes. Two rigid jobs of 4 nodes start at 0 (until 100). At 1 a job of work 1000
    # (linear) comes alone: its limit is the whole system, so it ends soonest on all 10
    # nodes from 100 (at 200), not on the 2 free ones now (at 501), nor on 5 (at 300).
    policy = _fairshare(10)
    a, b = Job(1, 0, 4, 100, 100), Job(2, 0, 4, 100, 100)
    job = _linear(3, 1, 1000)
    _engine(10, policy, [a, b, job]).run()
    assert (job.start, job.width, job.end) == (100, 10, 200)


def test_fairshare_limits_after_two_departures_and_an_arrival() -> None:
    # Job 4 leaves: 5 each. Job 5 comes and job 3 leaves: weights sqrt(1000) and
    # sqrt(16000) = 4 x sqrt(1000), a fifth and four fifths of 10 nodes: 2 and 8.
    policy, engine, view, (a, b, c, big) = _three_jobs_of_1000_then_one_of_16000()
    engine.withdraw(c)
    policy.planned_starts(view)
    assert [policy.planned_width(j) for j in (a, b)] == [5, 5]
    engine.advance_to(4)
    engine.withdraw(b)
    policy.planned_starts(view)
    assert [policy.planned_width(j) for j in (a, big)] == [2, 8]


# -- the plan in hand, on a machine shown second by second ----------------------------------


@dataclass
class _View:
    """A machine as the engine shows it to its policy at ``now``: running jobs by
    estimated end (an end not after ``now`` is a job past its estimate, shown as
    ending at ``now + 1``), no advance reservations."""

    capacity: int
    now: int = 0
    ends: list[int] = field(default_factory=list)
    widths: list[int] = field(default_factory=list)
    index: int = 0

    @property
    def free(self) -> int:
        return self.capacity - sum(self.widths)

    @property
    def overrun(self) -> bool:
        return bool(self.ends) and self.ends[0] <= self.now

    def running_ends(self) -> list[int]:
        return [max(end, self.now + 1) for end in self.ends]

    def running_widths(self) -> list[int]:
        return self.widths

    def running_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return running_arrays_of(self)

    def reservations(self) -> list[tuple[int, int, int]]:
        return []


def _steps(policy: MoldableIterative) -> int:
    steps: int = policy.report()["moldable_iterative"]["steps"]
    return steps


def _x_on(view: _View) -> tuple[MoldableIterative, Job]:
    """moldable-iterative after X (rigid, 4 nodes, 50 s) came and a pass started nothing."""
    policy = make_policy("moldable-iterative")
    assert isinstance(policy, MoldableIterative)
    x = Job(2, 0, 4, 50, 50)
    policy.job_submitted(view, x)
    assert policy.schedule(view) == []
    return policy, x


def _planned_behind_a_running_job() -> tuple[MoldableIterative, Job, _View]:
    # 4 nodes held until 100 (estimated) by a running job; X comes at 0. The pass at 0
    # makes one step: X from 100, nothing starts now.
    view = _View(4, 0, [100], [4])
    policy, x = _x_on(view)
    assert policy.planned_starts(view) == [(x, 100)]
    assert _steps(policy) == 1
    return policy, x, view


def test_iterative_keeps_the_plan_in_hand_at_its_first_start() -> None:
    # At 100 the running job is gone as planned and nothing new was reported: the plan
    # in hand holds (no second step) and starts X now, as it planned.
    policy, x, view = _planned_behind_a_running_job()
    view.now, view.ends, view.widths = 100, [], []
    assert policy.planned_starts(view) == [(x, 100)]
    assert policy.schedule(view) == [Placement(x, 0, 4)]
    assert _steps(policy) == 1


def test_iterative_plans_again_once_a_planned_start_passed_without_a_pass() -> None:
    # No pass ran at 100, when X was to start. At 120, with nothing new reported, the
    # plan in hand is out of date: a second step starts X now on the 4 free nodes.
    policy, x, view = _planned_behind_a_running_job()
    view.now, view.ends, view.widths = 120, [], []
    assert policy.schedule(view) == [Placement(x, 0, 4)]
    assert _steps(policy) == 2
    assert policy.waiting() == []


def test_iterative_plans_again_when_a_job_runs_past_its_estimate() -> None:
    # 4 nodes; R (4 nodes, estimate 100, runs 150: not killed) starts at 0 (step 1); X
    # (4 nodes, 50 s) comes at 1 and is planned from 100 (step 2). A pass at 100 with
    # nothing new (as the daemon runs after a change elsewhere) finds R past its
    # estimate: its end is a guess, now + 1 = 101, so step 3 plans X at 101 and starts
    # nothing on the nodes R still holds. X starts when R ends, at 150.
    policy = make_policy("moldable-iterative")
    assert isinstance(policy, MoldableIterative)
    r, x = Job(1, 0, 4, 100, 150), Job(2, 1, 4, 50, 50)
    engine = Engine(Grid([Machine("m", 4)]), [policy], kill=False)
    engine.load([r, x])
    engine.advance_to(1)
    assert policy.planned_starts(engine.machines[0]) == [(x, 100)]
    assert _steps(policy) == 2
    engine.instant(100)
    assert _steps(policy) == 3
    assert policy.waiting() == [x]
    assert policy.planned_starts(engine.machines[0]) == [(x, 101)]  # a guess: step 4
    engine.run()
    assert (x.start, x.end) == (150, 200)


def test_iterative_plans_again_after_a_plan_made_on_a_guess() -> None:
    # 4 nodes; the running job's estimate ended at 100 and it still runs: the pass at
    # 100 guesses its end at 101 and plans X (4 nodes, 50 s) there. At 101 its estimate
    # is known to end at 200 (no longer past it, no end reported): the guessed plan
    # does not hold, X is planned at 200 and nothing starts on the busy nodes.
    view = _View(4, 100, [100], [4])
    policy, x = _x_on(view)
    assert policy.planned_starts(view) == [(x, 101)]  # still past it: a step each
    assert _steps(policy) == 2
    view.now, view.ends = 101, [200]
    assert policy.schedule(view) == []
    assert _steps(policy) == 3
    assert policy.planned_starts(view) == [(x, 200)]
    assert _steps(policy) == 3  # no longer a guess: the plan in hand holds


@pytest.mark.parametrize(
    ("newcomers", "starts", "widths"),
    [
        # Five equal jobs: limits 10/5 = 2 each (A keeps its 3). A on 3 from 100; B, C,
        # D on 2 from 100 (end 600; on 1 node now they would end at 1001); E on 2 from
        # 434, when A ends (934, before 1001 on the free node now).
        (2, [100, 100, 100, 100, 434], [3, 2, 2, 2, 2]),
        # D alone: four equal jobs, limits 10/4 -> 2 each (A keeps its 3); 3 + 2 + 2 + 2
        # nodes at 100, nothing now. (One arrival brings a version stepped back to
        # where the limits of three jobs were computed.)
        (1, [100, 100, 100, 100], [3, 2, 2, 2]),
    ],
)
def test_fairshare_limits_of_newcomers_after_a_reservation_decided_a_width(
    newcomers: int, starts: list[int], widths: list[int]
) -> None:
    # 10 nodes, 9 of them held until 100. A, B, C (work 1000, linear) come at 0: limits
    # 10/3 -> 3 each. A is reserved on its limit, 3 nodes from 100 (ends 434; on the
    # one free node now it would end at 1000), and that width is decided; B and C on the
    # free node would end later than on 3 from 100: nothing starts. Then at 1 one or two
    # more jobs of work 1000 come, and a pass.
    policy = _fairshare(10)
    view = _View(10, 0, [100], [9])
    jobs = [_linear(2, 0, 1000), _linear(3, 0, 1000), _linear(4, 0, 1000)]
    for job in jobs:
        policy.job_submitted(view, job)
    assert policy.schedule(view) == []
    assert policy.reservation == (jobs[0], 100)
    assert policy.planned_width(jobs[0]) == 3
    view.now = 1
    for jid in range(5, 5 + newcomers):
        jobs.append(_linear(jid, 1, 1000))
        policy.job_submitted(view, jobs[-1])
    assert policy.schedule(view) == []
    assert policy.planned_starts(view) == list(zip(jobs, starts, strict=True))
    assert [policy.planned_width(j) for j in jobs] == widths
