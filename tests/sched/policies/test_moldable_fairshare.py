"""moldable-fairshare and moldable-efficiency (Sabin et al.'s moldable paper, sec. 4.1 and Fig. 1): schedules
computed by hand, the efficiency transfer on its own, the registry's refusals, and
invariants on random moldable traces (widths in range, runtimes from the model, no node
used twice, the reservation never delayed)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from moldutil import random_trace

from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.moldable import FIXED, Moldable, Speedup
from batchd.model.reservation import Reservation
from batchd.sched.core.policy import BuildContext, MachineView, Placement
from batchd.sched.kernels.fairshare import efficiency_transfer
from batchd.sched.policies.moldable_fairshare import MoldableFairshare, MoldRows
from batchd.sched.registry import PolicyError, make_policy

FAIRSHARE = "moldable-fairshare"
EFFICIENCY = "moldable-efficiency"
LINEAR8 = Speedup("downey", 8, 0)  # S(n) = n up to 8 nodes
LINEAR10 = Speedup("downey", 10, 0)
FLAT2 = Speedup("downey", 2, 0)  # S = 1, 2, 2, 2, ...: nothing gained past 2 nodes


def _mold_job(jid: int, submit: int, mold: Moldable) -> Job:
    return Job(jid, submit, mold.width, mold.estimate, mold.runtime, mold=mold)


def _linear(jid: int, submit: int, work: int, speed: Speedup = LINEAR10, high: int = 10) -> Job:
    """A job asking for 1 node for ``work`` seconds, exact estimate, on 1..``high``."""
    return _mold_job(jid, submit, Moldable(1, high, speed, 1, work, work))


def _policy(nodes: int, name: str, params: dict[str, str] | None = None) -> MoldableFairshare:
    policy = make_policy(name, params, BuildContext(nodes=nodes))
    assert isinstance(policy, MoldableFairshare)
    return policy


def _run(
    nodes: int, jobs: list[Job], name: str = FAIRSHARE, params: dict[str, str] | None = None
) -> Engine:
    engine = Engine(Grid([Machine("m", nodes)]), [_policy(nodes, name, params)])
    engine.load(jobs)
    engine.run()
    return engine


def _shape(jobs: list[Job]) -> list[tuple[int, int, int]]:
    return [(j.start, j.width, j.end) for j in jobs]


# -- schedules by hand -----------------------------------------------------------------


def test_the_fair_share_limit_binds_and_overbooking_serialises() -> None:
    # Two equal jobs (100 s of work each, linear speedup) on 10 nodes: each weighs half,
    # so with obf = 1 each may take 5 nodes and both run side by side for 20 s. With
    # obf = 2 the first takes all 10 (10 s) and the second, whose soonest end is then
    # on 10 nodes from t = 10, is reserved at 10 and runs from 10 to 20: sec. 4.2's
    # example, an average turnaround of 15 instead of 20.
    jobs = [_linear(1, 0, 100), _linear(2, 0, 100)]
    _run(10, jobs)
    assert _shape(jobs) == [(0, 5, 20), (0, 5, 20)]
    jobs = [_linear(1, 0, 100), _linear(2, 0, 100)]
    _run(10, jobs, params={"obf": "2"})
    assert _shape(jobs) == [(0, 10, 10), (10, 10, 20)]


def test_the_limit_follows_the_square_root_of_the_weight() -> None:
    # Work 400, 100, 100: square roots 20, 10, 10, so fractions 1/2, 1/4, 1/4 of 8 nodes:
    # limits 4, 2, 2 (in proportion to the weights it would be 5, 1, 1). Each ends
    # soonest on its limit, now.
    jobs = [_linear(1, 0, 400, LINEAR8, 8), _linear(2, 0, 100, LINEAR8, 8)]
    jobs.append(_linear(3, 0, 100, LINEAR8, 8))
    _run(8, jobs)
    assert _shape(jobs) == [(0, 4, 100), (0, 2, 50), (0, 2, 50)]


def test_efficiency_moves_limit_nodes_from_a_flat_speedup_to_a_steep_one() -> None:
    # Equal weights on 8 nodes: fair limits 4 and 4. The first job gains nothing past 2
    # nodes, the second scales linearly. With ef = 0.5 (limits between 2 and 6) Fig. 1
    # moves two nodes: 4 -> 3 -> 2 for the flat job (it loses S(4) - S(3) = 0, then
    # S(3) - S(2) = 0), 4 -> 5 -> 6 for the steep one (it gains 1 each time).
    def jobs() -> list[Job]:
        return [
            _mold_job(1, 0, Moldable(1, 8, FLAT2, 1, 100, 100)),
            _mold_job(2, 0, Moldable(1, 8, LINEAR8, 1, 100, 100)),
        ]

    # Fair share: the flat job takes 2 (50 s; 3 and 4 nodes end no sooner), the steep
    # one its limit of 4 (25 s).
    fair = jobs()
    _run(8, fair)
    assert _shape(fair) == [(0, 2, 50), (0, 4, 25)]
    # Efficiency: the steep one takes 6 (ceil(100 / 6) = 17 s).
    eff = jobs()
    _run(8, eff, EFFICIENCY, {"ef": "0.5"})
    assert _shape(eff) == [(0, 2, 50), (0, 6, 17)]
    # ef = 0 is the fair share.
    zero = jobs()
    _run(8, zero, EFFICIENCY, {"ef": "0"})
    assert _shape(zero) == _shape(fair)


def test_the_reservation_decides_the_width_and_backfilling_respects_it() -> None:
    # 10 nodes. A rigid job holds 8 until 100. Job 2 (work 1000, linear) weighs
    # sqrt(1000) against sqrt(8 x 100) for the rigid one: limit floor(10 x 0.528) = 5.
    # On the 2 free nodes it would end at 500; on 5 from 100 at 300 (3: 434, 4: 350): it
    # is reserved at 5 nodes from 100, and that width is decided.
    rigid = Job(1, 0, 8, 100, 100)
    big = _linear(2, 0, 1000)
    small = _linear(3, 1, 300)
    policy = _policy(10, FAIRSHARE)
    engine = Engine(Grid([Machine("m", 10)]), [policy])
    engine.load([rigid, big, small])
    engine.advance_to(0)
    assert policy.reservation == (big, 100)
    assert policy.planned_width(big) == 5
    assert policy.planned_starts(engine.machines[0]) == [(big, 100)]
    # Job 3 (work 300) arrives at 1: limit 3 beside job 2. On 2 nodes now it ends at 151,
    # using after 100 two of the 5 nodes job 2 leaves free: sooner than 1 node (301) or 3
    # nodes from 100 (200). Job 2 still starts at 100 on its 5 nodes.
    engine.run()
    assert _shape([rigid, big, small]) == [(0, 8, 100), (100, 5, 300), (1, 2, 151)]


def test_a_job_wider_than_the_nodes_in_service_does_not_block_the_others() -> None:
    wide = _mold_job(1, 0, Moldable(3, 4, FIXED, 3, 50, 50))
    narrow = _mold_job(2, 1, Moldable(1, 4, FIXED, 1, 50, 50))
    engine = Engine(Grid([Machine("m", 4)]), [_policy(4, FAIRSHARE)])
    engine.node_out(0, 0)
    engine.node_out(0, 1)
    engine.load([wide, narrow])
    engine.advance_to(10)
    assert (narrow.start, narrow.width) == (1, 1)  # fixed speedup: the narrowest width
    assert wide.start < 0
    # Back to 3 nodes in service: it starts when the narrow job gives its node back.
    engine.node_in(0, 0)
    engine.run()
    assert (wide.start, wide.width) == (51, 3)


def test_advance_reservations_are_honoured() -> None:
    # All 10 nodes are reserved from 50 to 100. A job of work 400 would end soonest on 10
    # nodes now (40 s); work 1000 cannot end by 50 on any width, so it waits for 100.
    engine = Engine(Grid([Machine("m", 10)]), [_policy(10, FAIRSHARE)])
    engine.add_reservation(Reservation(id=1, start=50, end=100, width=10))
    short, long = _linear(1, 0, 400), _linear(2, 10, 1000)
    engine.load([short, long])
    engine.run()
    assert _shape([short, long]) == [(0, 10, 40), (100, 10, 200)]


# -- the efficiency transfer (Fig. 1) on its own -----------------------------------------


def _table(jobs: list[Job]) -> tuple[MoldRows, np.ndarray]:
    table = MoldRows(4)
    rows = np.array([table.add(j) for j in jobs], dtype=np.int64)
    return table, rows


def test_equal_slopes_move_nothing_and_bounds_hold() -> None:
    table, rows = _table([_linear(1, 0, 100, LINEAR8, 8), _linear(2, 0, 100, LINEAR8, 8)])
    limits = np.array([4, 3], dtype=np.int64)
    movable = np.ones(2, dtype=np.bool_)
    assert efficiency_transfer(limits, movable, rows, table.ints, table.floats, 1.0, 8) == 0
    assert limits.tolist() == [4, 3]
    # A flat job gives a steep one all it may: down to 1 (ef = 1), and the steep one up
    # to at most 2 x 4 = 8 nodes, here the system.
    table, rows = _table([_linear(1, 0, 100, FLAT2, 8), _linear(2, 0, 100, LINEAR8, 8)])
    limits = np.array([4, 4], dtype=np.int64)
    efficiency_transfer(limits, movable, rows, table.ints, table.floats, 1.0, 8)
    assert limits.tolist() == [2, 6]  # the flat one loses S(2) - S(1) = 1 below 2: no gain


def test_identical_jobs_a_node_apart_settle_without_looping() -> None:
    # Two identical concave speedups. Taken literally, Fig. 1 compares one slope per job,
    # at its limit: on limits 10 and 11 it hands a node from the one on 11 (flatter
    # there) to the one on 10, and back, for ever. Compared by what a node is worth to
    # each (S(11) - S(10) lost, the same gained) nothing moves; on 10 and 12 one node
    # moves and both settle on 11.
    concave = Speedup("downey", 64, 1.5)
    table, rows = _table([_linear(1, 0, 100, concave, 64), _linear(2, 0, 100, concave, 64)])
    movable = np.ones(2, dtype=np.bool_)
    for before, moved, after in (([10, 11], 0, [10, 11]), ([10, 12], 1, [11, 11])):
        limits = np.array(before, dtype=np.int64)
        assert efficiency_transfer(limits, movable, rows, table.ints, table.floats, 0.5, 64) == (
            moved
        )
        assert limits.tolist() == after


def test_rigid_and_decided_jobs_keep_their_limits() -> None:
    table, rows = _table([_linear(1, 0, 100, FLAT2, 8), _linear(2, 0, 100, LINEAR8, 8)])
    limits = np.array([4, 4], dtype=np.int64)
    movable = np.array([False, True])
    efficiency_transfer(limits, movable, rows, table.ints, table.floats, 1.0, 8)
    assert limits.tolist() == [4, 4]


# -- the registry ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "params", "says"),
    [
        (FAIRSHARE, {"obf": "0"}, "parameter obf='0': Input should be greater than 0"),
        (FAIRSHARE, {"obf": "-1"}, "parameter obf='-1'"),
        (FAIRSHARE, {"obf": "lots"}, "parameter obf='lots'"),
        (FAIRSHARE, {"obf": "nan"}, "parameter obf='nan'"),
        (FAIRSHARE, {"obf": "inf"}, "parameter obf='inf'"),
        (FAIRSHARE, {"ef": "0.5"}, "unknown parameter 'ef' (allowed: obf)"),
        (EFFICIENCY, {"ef": "1.5"}, "parameter ef='1.5': Input should be less than or equal to 1"),
        (EFFICIENCY, {"ef": "-0.1"}, "parameter ef='-0.1'"),
        (EFFICIENCY, {"efficiency": "1"}, "unknown parameter 'efficiency' (allowed: obf, ef)"),
    ],
)
def test_bad_parameters_are_refused_by_name(name: str, params: dict[str, str], says: str) -> None:
    with pytest.raises(PolicyError, match=f"policy {name}: ") as err:
        make_policy(name, params)
    assert says in str(err.value)


def test_the_defaults() -> None:
    fair = _policy(8, FAIRSHARE)
    eff = _policy(8, EFFICIENCY)
    assert (fair.obf, fair.ef, eff.obf, eff.ef) == (1.0, 0.0, 1.0, 0.5)
    assert eff.order() == "FCFS"
    assert _policy(8, EFFICIENCY, {"obf": "4", "ef": "1"}).ef == 1.0


# -- invariants on random traces ---------------------------------------------------------


def _watched(policy: MoldableFairshare) -> dict[int, int]:
    """The first start each job was reserved at, recorded after every pass."""
    promised: dict[int, int] = {}
    schedule = policy.schedule

    def watching(view: MachineView) -> list[Placement]:
        out = schedule(view)
        if policy.reservation is not None:
            job, start = policy.reservation
            promised.setdefault(job.id, start)
        return out

    policy.schedule = watching  # type: ignore[method-assign]
    return promised


SETTINGS: list[tuple[str, dict[str, str]]] = [
    (FAIRSHARE, {}),
    (FAIRSHARE, {"obf": "4"}),
    (EFFICIENCY, {}),
    (EFFICIENCY, {"obf": "4", "ef": "1"}),
    (EFFICIENCY, {"obf": "0.5", "ef": "0.25"}),
]


@pytest.mark.parametrize(("name", "params"), SETTINGS)
@pytest.mark.parametrize("seed", range(5))
def test_invariants_on_random_moldable_traces(name: str, params: dict[str, str], seed: int) -> None:
    rng = random.Random(seed)
    nodes = rng.randint(1, 24)
    jobs = random_trace(rng, nodes, 60, longest=300, rounded=True)
    requested = {j.id: (j.width, j.runtime) for j in jobs}
    policy = _policy(nodes, name, params)
    promised = _watched(policy)
    engine = Engine(Grid([Machine("m", nodes)]), [policy])
    engine.load(jobs)
    engine.run()  # a width outside a job's range would be a PlacementError
    assert len(engine.finished) == len(jobs)
    assert promised, "no job was ever reserved: the trace tests nothing"
    busy: dict[int, list[tuple[int, int]]] = {}
    for job in jobs:
        assert len(job.units) == job.width
        if job.mold is None:
            assert (job.width, job.runtime) == requested[job.id]
        else:
            assert job.mold.allows(job.width)
            assert job.runtime == job.mold.runtime_on(job.width)
            assert job.end - job.start == min(job.runtime, job.mold.estimate_on(job.width))
        if job.id in promised:
            assert job.start <= promised[job.id], "a reserved job started later than promised"
        for node in job.units:
            busy.setdefault(node, []).append((job.start, job.end))
    for spans in busy.values():
        spans.sort()
        for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
            assert start >= end, "a node was used twice at once"


def _starts(engine: Engine) -> list[tuple[int, int, int]]:
    return sorted((j.id, j.start, j.width) for j in engine.finished)


@pytest.mark.parametrize("seed", range(8))
def test_rigid_jobs_are_scheduled_as_fcfs_easy_schedules_them(seed: int) -> None:
    def trace() -> list[Job]:
        rng = random.Random(seed)
        out, t = [], 0
        for i in range(150):
            t += rng.choice([0, 0, rng.randint(1, 60)])
            est = rng.randint(1, 300)
            out.append(Job(i + 1, t, rng.randint(1, 32), est, rng.randint(0, est + 50)))
        return out

    easy = Engine(Grid([Machine("m", 32)]), [make_policy("fcfs-easy")])
    easy.load(trace())
    easy.run()
    assert _starts(_run(32, trace())) == _starts(easy)


@pytest.mark.parametrize("seed", range(4))
def test_ef_zero_gives_the_fair_share_schedule(seed: int) -> None:
    def trace() -> list[Job]:
        return random_trace(random.Random(seed), 16, 60, longest=300, rounded=True)

    fair = _run(16, trace(), FAIRSHARE, {"obf": "2"})
    eff = _run(16, trace(), EFFICIENCY, {"obf": "2", "ef": "0"})
    assert _starts(fair) == _starts(eff)


def test_the_plan_shows_decided_and_planned_widths() -> None:
    # The machine is full until 100; two equal jobs (work 1000, linear) arrive at 1 and 2.
    rigid = Job(1, 0, 10, 100, 100)
    a = _linear(2, 1, 1000)
    b = _linear(3, 2, 1000)
    policy = _policy(10, FAIRSHARE)
    engine = Engine(Grid([Machine("m", 10)]), [policy])
    engine.load([rigid, a, b])
    engine.advance_to(2)
    # No node was free since job 2 came: nothing is decided yet. The plan puts job 2 and
    # job 3 (equal weights: limits 5 each) side by side on 5 nodes from 100 (200 s).
    plan = policy.planned_starts(engine.machines[0])
    assert plan == [(a, 100), (b, 100)]
    assert (policy.planned_width(a), policy.planned_width(b)) == (5, 5)
    engine.run()
    assert _shape([a, b]) == [(100, 5, 300), (100, 5, 300)]
