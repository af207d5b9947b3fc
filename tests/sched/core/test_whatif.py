"""The what-if simulator (batchd.sched.core.whatif) against a naive pure-Python version of its
rules, on hand cases, and against the real engine.

Engine comparisons: a random small trace runs on the engine up to a random time T with
every job running exactly its estimate; the machine and the queue at T go to the what-if;
then the engine runs to the end and each job's real start is compared with the what-if
start. The engine runs with kill=False and runtime = max(estimate, 1): that is how long
the policies believe a job holds its nodes (``Job.duration``), so a zero estimate holds
its nodes for one second on both sides (killed at its estimate, it would end in the
second it starts, which no planner assumes).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.reservation import Reservation
from batchd.sched.core.order import ORDERS
from batchd.sched.core.whatif import (
    conservative_starts,
    easy_starts,
    inputs_from,
    reservations_of,
)
from batchd.sched.kernels.profile import NEVER
from batchd.sched.policies.conservative import ConservativePolicy
from batchd.sched.policies.easy import EasyPolicy
from batchd.sched.registry import make_policy
from naive_whatif import dur, naive_easy

SETTINGS = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)

Resv = tuple[int, int, int]  # (start, end, width)


# --------------------------------------------------------------------------------------------
# The rules written out naively: lists, recomputed sums, no incremental state.


def _fits(capacity: int, busy: list[Resv], width: int, start: int, d: int) -> bool:
    points = {start} | {a for a, _, _ in busy if start < a < start + d}
    return all(capacity - sum(w for a, b, w in busy if a <= x < b) >= width for x in points)


def naive_conservative(
    now: int,
    capacity: int,
    ends: Sequence[int],
    rwidths: Sequence[int],
    widths: Sequence[int],
    estimates: Sequence[int],
    submits: Sequence[int],
    reservations: Sequence[Resv] = (),
) -> list[int]:
    """Each job in order at the first candidate time (not before, or an end) where it fits."""
    busy = [(now, e, w) for e, w in zip(ends, rwidths, strict=True) if e > now]
    busy += [(max(s, now), e, w) for s, e, w in reservations if e > max(s, now)]
    out = []
    for w, est, sub in zip(widths, estimates, submits, strict=True):
        if w > capacity:
            out.append(NEVER)
            continue
        nb, d = max(now, sub), dur(est)
        start = next(
            s
            for s in sorted({nb} | {b for _, b, _ in busy if b > nb})
            if _fits(capacity, busy, w, s, d)
        )
        busy.append((start, start + d, w))
        out.append(start)
    return out


# --------------------------------------------------------------------------------------------
# Random inputs against the naive rules.


ESTIMATES = st.integers(0, 15)
OFFSETS = st.one_of(st.integers(-5, 0), st.integers(-5, 0), st.integers(1, 25))  # most are there
RUNNING = st.lists(st.tuples(st.integers(0, 20), st.integers(1, 8)), max_size=5)

Case = tuple[int, int, list[int], list[int], list[int], list[int], list[int]]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """A machine of 1-8 nodes at ``now`` and up to 10 jobs in candidate order.

    Running jobs end up to 20 s after now (often at equal times; an end at now has
    ended already); some jobs are too wide for the machine, some are not there yet.
    """
    capacity = draw(st.integers(1, 8))
    now = draw(st.integers(0, 50))
    running: list[tuple[int, int]] = []
    used = 0
    for offset, w in draw(RUNNING):
        if used + w <= capacity:
            used += w
            running.append((now + offset, w))
    running.sort()
    fits = st.integers(1, capacity)
    width = st.one_of(fits, fits, fits, st.integers(capacity + 1, capacity + 3))
    jobs = draw(st.lists(st.tuples(width, ESTIMATES, OFFSETS), max_size=10))
    return (
        now,
        capacity,
        [e for e, _ in running],
        [w for _, w in running],
        [w for w, _, _ in jobs],
        [e for _, e, _ in jobs],
        [now + o for _, _, o in jobs],
    )


RESERVATIONS = st.lists(
    st.tuples(st.integers(-5, 25), st.integers(0, 10), st.integers(1, 8)), max_size=3
)


@settings(SETTINGS, max_examples=300)
@given(case=cases(), windows=RESERVATIONS)
def test_matches_naive_rules(case: Case, windows: list[Resv]) -> None:
    """Both simulations on random inputs; reservations (start, length, width) for conservative."""
    now, capacity, ends, rwidths, widths, estimates, submits = case
    easy = easy_starts(*case)
    assert easy.dtype == np.int64
    assert easy.tolist() == naive_easy(*case)
    cons = conservative_starts(*case)
    assert cons.tolist() == naive_conservative(*case)
    resv = [(now + s, now + s + d, min(w, capacity)) for s, d, w in windows]
    got = conservative_starts(*case, reservations=resv).tolist()
    assert got == naive_conservative(*case, reservations=resv)
    # Running ends out of order are sorted first.
    back = (ends[::-1], rwidths[::-1])
    queue = (widths, estimates, submits)
    assert easy_starts(now, capacity, *back, *queue).tolist() == easy.tolist()
    assert conservative_starts(now, capacity, *back, *queue).tolist() == cons.tolist()


# --------------------------------------------------------------------------------------------
# Edge cases by hand.


def both(*args: object) -> tuple[list[int], list[int]]:
    return easy_starts(*args).tolist(), conservative_starts(*args).tolist()  # type: ignore[arg-type]


def test_empty_queue() -> None:
    assert both(10, 4, [12, 15], [2, 1], [], [], []) == ([], [])
    assert easy_starts(0, 1, np.empty(0, np.int64), [], [], [], []).shape == (0,)


def test_nothing_running() -> None:
    # 4 idle nodes at 5: the 3-node job starts; the 2-node job needs it to end (15); the
    # 1-node job that arrives at 5 starts beside it (EASY: on one of the head's two extra
    # nodes; conservative: the 2-node job leaves a node free from 15 on).
    assert both(5, 4, [], [], [3, 2, 1], [10, 4, 20], [0, 0, 5]) == ([5, 15, 5], [5, 15, 5])


def test_jobs_wider_than_the_machine_never_start_and_block_nobody() -> None:
    easy, cons = both(0, 4, [10], [4], [5, 2, 9, 4], [3, 3, 3, 3], [0, 0, 0, 0])
    assert easy == [NEVER, 10, NEVER, 13] and cons == [NEVER, 10, NEVER, 13]


def test_zero_estimates_hold_their_nodes_one_second() -> None:
    # The first job (estimate 0) holds its node for [0, 1); the 2-node job starts at 1;
    # the last job (estimate 0) ends at 1 too, so it fits before it on the free node.
    assert both(0, 2, [], [], [1, 2, 1], [0, 5, 0], [0, 0, 0]) == ([0, 1, 0], [0, 1, 0])


def test_equal_end_times_count_together_for_the_shadow() -> None:
    # 1 node free, two jobs of 2 nodes end at 10. The head (3 nodes) reserves 10, when both
    # have ended: 5 free, 2 extra, so the 1-node 20 s job may take the free node now.
    # (Counting only the first end at 10 would leave no extra node.) The next 20 s job
    # finds no free node and starts beside the head at 10.
    args = (0, 5, [10, 10], [2, 2], [3, 1, 1], [5, 20, 20], [0, 0, 0])
    assert both(*args) == ([10, 0, 10], [10, 0, 10])


def test_extra_nodes_let_long_jobs_backfill() -> None:
    # 6 nodes, 4 busy until 10. Head needs 5 at 10: one node extra, which a long 1-node job
    # takes; the second long one must wait for the head to end.
    got = easy_starts(0, 6, [10], [4], [5, 1, 1], [5, 100, 100], [0, 0, 0])
    assert got.tolist() == [10, 0, 15]


def test_future_submits_join_the_queue_in_candidate_order() -> None:
    # At 3 a short job arrives ahead of the waiting wide job in candidate order: it is
    # served first at the next pass (EASY); conservative places it where it fits then.
    args = (0, 2, [5], [2], [1, 2], [1, 1], [3, 0])
    assert easy_starts(*args).tolist() == [5, 6]
    assert conservative_starts(*args).tolist() == [5, 6]
    # A job that arrives into an empty machine starts at its submit time.
    assert both(0, 2, [], [], [2], [5], [7]) == ([7], [7])


def test_running_end_at_now_has_ended() -> None:
    assert both(10, 2, [10], [2], [2], [5], [0]) == ([10], [10])


def test_reservations_are_kept_free() -> None:
    # 2 nodes reserved [5, 15) out of 3: a 2-node job of 10 s waits until 15; a 1-node
    # job fits now beside the reservation.
    resv = [(5, 15, 2)]
    got = conservative_starts(0, 3, [], [], [2, 1], [10, 10], [0, 0], reservations=resv)
    assert got.tolist() == [15, 0]
    # A window begun before now counts from now; one already over counts for nothing.
    got = conservative_starts(20, 3, [], [], [3], [5], [0], reservations=[(10, 22, 1), (5, 8, 3)])
    assert got.tolist() == [22]


class PendingView:
    """Just enough of a MachineView for reservations_of."""

    def __init__(self, pending: list[Resv]) -> None:
        self.pending = pending

    def reservations(self) -> list[Resv]:
        return self.pending


def test_reservations_of_a_view() -> None:
    assert reservations_of(PendingView([])).shape == (0, 3)  # type: ignore[arg-type]
    rows = reservations_of(PendingView([(5, 15, 2), (20, 30, 1)]))  # type: ignore[arg-type]
    assert rows.dtype == np.int64 and rows.tolist() == [[5, 15, 2], [20, 30, 1]]


def test_sequences_and_arrays_give_the_same_answer() -> None:
    lists = (0, 8, [3, 9], [4, 2], [6, 1, 2], [4, 8, 1], [0, 1, 2])
    arrays = tuple(np.array(a, dtype=np.int32) if isinstance(a, list) else a for a in lists)
    assert easy_starts(*lists).tolist() == easy_starts(*arrays).tolist()  # type: ignore[arg-type]
    strided = np.array([6, 0, 1, 0, 2, 0], dtype=np.int64)[::2]
    assert easy_starts(0, 8, [3, 9], [4, 2], strided, [4, 8, 1], [0, 1, 2]).tolist() == (
        easy_starts(*lists).tolist()
    )


def test_bad_shapes_are_refused() -> None:
    with pytest.raises(ValueError, match="2 running ends but 1 running widths"):
        easy_starts(0, 4, [1, 2], [1], [], [], [])
    with pytest.raises(ValueError, match="2 widths, 1 estimates and 2 submits"):
        conservative_starts(0, 4, [], [], [1, 1], [1], [0, 0])
    with pytest.raises(ValueError, match="one-dimensional"):
        easy_starts(0, 4, [], [], [[1]], [[1]], [[1]])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="widths must hold integers, got float64"):
        easy_starts(0, 4, [], [], [1.5], [1], [0])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="rows"):
        conservative_starts(0, 4, [], [], [1], [1], [0], reservations=[(1, 2)])  # type: ignore[list-item]


# --------------------------------------------------------------------------------------------
# Against the engine.

Spec = tuple[int, int, int]  # (submit, width, estimate); ids follow the list


GAPS = st.one_of(st.just(0), st.integers(0, 8))


@st.composite
def traces(draw: st.DrawFn) -> tuple[int, list[Spec], int]:
    """(nodes, jobs in submit order, T): 1-14 jobs on 1-8 nodes, T within the trace."""
    nodes = draw(st.integers(1, 8))
    rows = draw(
        st.lists(st.tuples(GAPS, st.integers(1, nodes), ESTIMATES), min_size=1, max_size=14)
    )
    spec: list[Spec] = []
    t = draw(st.integers(0, 3))
    for gap, w, e in rows:
        t += gap
        spec.append((t, w, e))
    return nodes, spec, draw(st.integers(0, t + 2))


def make_jobs(spec: Sequence[Spec]) -> list[Job]:
    # ids rise with submit times, so same-second arrivals come in key order (FCFS).
    return [
        Job(id=i, submit=s, width=w, estimate=e, runtime=dur(e))
        for i, (s, w, e) in enumerate(spec, 1)
    ]


def arrays(jobs: Sequence[Job]) -> tuple[list[int], list[int], list[int]]:
    return [j.width for j in jobs], [j.estimate for j in jobs], [j.submit for j in jobs]


# EASY keeps no state between passes but its queue, sorted by the order key: at every
# pass the jobs present are taken in key order. With the candidate order = every job
# waiting at T or submitted later, sorted by the policy's key, the what-if replays the
# engine's passes exactly, for any T and any arrivals.


def check_easy(order: str, nodes: int, spec: list[Spec], T: int) -> None:
    jobs = make_jobs(spec)
    policy = make_policy(f"{order}-easy")
    assert isinstance(policy, EasyPolicy)
    engine = Engine(Grid([Machine("m", nodes)]), [policy], kill=False)
    engine.load(jobs)
    engine.advance_to(T)
    m = engine.machines[0]
    key = ORDERS[order]
    waiting = policy.waiting()
    assert waiting == sorted(waiting, key=key)
    candidate = sorted(waiting + [j for j in jobs if j.submit > T], key=key)
    got = easy_starts(T, m.capacity, m.running_ends(), m.running_widths(), *arrays(candidate))
    assert easy_starts(*inputs_from(m, candidate)).tolist() == got.tolist()
    engine.run()
    assert [j.start for j in candidate] == got.tolist()
    event(
        f"easy: {min(len(candidate), 5)}+ jobs compared"
        if candidate
        else "easy: nothing to compare"
    )


# Conservative keeps a plan. Each arrival is placed at its earliest start in the plan in
# hand (its promise); when a job ends and the plan is not "settled" (an arrival went in
# ahead of waiting jobs in key order), the plan is rebuilt in key order. With exact
# estimates a settled plan never changes: a rebuild at a later time, onto jobs started as
# planned, gives every job the same start (its old slot is still free, nothing earlier
# became free). Hence:
#
# - The plan at T is always the what-if of the waiting jobs in the order the engine
#   placed them (key order at the last rebuild, then arrivals in arrival order), which the
#   test follows from the re-plan counts.
# - Later arrivals are placed in arrival order, each behind everything in the plan: the
#   candidate order is (placement order at T) + (jobs submitted after T by submit, id).
# - Exact for every job when no re-plan can change the plan after T: always for
#   fcfs-cons (arrivals are last in FCFS order, so the plan stays settled); for sjf/ljf
#   when the plan at T is settled and every later arrival comes after all waiting jobs
#   and all earlier arrivals in key order. Then the candidate order is also the key order.
#
# Where equality cannot hold: sjf/ljf with an arrival out of key order (a short job behind
# a long waiting one, or arriving shorter than an earlier arrival) or an unsettled plan at
# T. The next job end re-plans in key order from the running set of that moment, so
# starts depend on when the arrival came relative to the ends, which no single order
# placed once can reproduce: in key order the what-if puts the late short job ahead of
# the long waiting ones from the start, while the engine keeps their slots until the next
# end and only then re-plans, onto whatever started meanwhile. There the test checks what
# must still hold: the plan at T, the promise of every job placed before the first
# re-plan after T, and the start of every job started before it.


class Placements:
    """The order in which a conservative policy placed its waiting jobs."""

    def __init__(self, policy: ConservativePolicy) -> None:
        self.policy = policy
        self.order: list[Job] = []
        self.seen = replans(policy)

    def placed(self, job: Job | None = None) -> None:
        now = replans(self.policy)
        if now != self.seen:  # rebuilt since last seen: key order, then this arrival
            self.seen = now
            self.order = [j for j in self.policy.waiting() if j is not job]
        if job is not None:
            self.order.append(job)

    def waiting(self) -> list[Job]:
        self.placed()
        alive = {id(j) for j in self.policy.waiting()}
        return [j for j in self.order if id(j) in alive]


def replans(policy: ConservativePolicy) -> int:
    return policy.counts.rebuilds + policy.counts.compressions


# 0-2 advance reservations as (gap, length, width): one after the other, so each fits
# when it is made at time 0.
WINDOWS = st.lists(st.tuples(st.integers(0, 15), st.integers(1, 10), st.integers(1, 8)), max_size=2)


def reservations(nodes: int, windows: list[Resv]) -> list[Resv]:
    out: list[Resv] = []
    t = 0
    for gap, length, width in windows:
        t += gap
        out.append((t, t + length, min(width, nodes)))
        t += length
    return out


def check_conservative(order: str, nodes: int, spec: list[Spec], T: int, resv: list[Resv]) -> bool:
    """The checks above; True when every start had to match (and did)."""
    jobs = make_jobs(spec)
    policy = make_policy(f"{order}-cons")
    assert isinstance(policy, ConservativePolicy)
    engine = Engine(Grid([Machine("m", nodes)]), [policy], kill=False)
    for i, (s, e, w) in enumerate(resv, 1):
        engine.add_reservation(Reservation(id=i, start=s, end=e, width=w))
    engine.load(jobs)
    placements = Placements(policy)
    engine.on_submit.append(placements.placed)
    engine.advance_to(T)

    m = engine.machines[0]
    key = ORDERS[order]
    placed = placements.waiting()
    later = sorted((j for j in jobs if j.submit > T), key=lambda j: (j.submit, j.id))
    candidate = placed + later
    got = dict(
        zip(
            (j.id for j in candidate),
            conservative_starts(
                *inputs_from(m, candidate), reservations=reservations_of(m)
            ).tolist(),
            strict=True,
        )
    )
    plan = {j.id: s for j, s in policy.planned_starts(m)}
    # With nobody waiting there is no plan to keep: the next arrival finds a fresh one.
    settled = policy.settled or not policy.waiting()
    if settled:
        assert placed == policy.waiting()
    at_t = replans(policy)
    clean: dict[int, bool] = {}  # job id -> no re-plan since T when it started
    promised: dict[int, bool] = {}  # job id -> no re-plan since T when it was placed

    def started(job: Job) -> None:
        clean[job.id] = replans(policy) == at_t

    def placed_later(job: Job) -> None:
        promised[job.id] = replans(policy) == at_t

    engine.on_start.append(started)
    engine.on_submit.append(placed_later)
    engine.run()

    assert policy.counts.compressions == 0  # exact estimates: guarded never compresses
    # The plan at T, job by job.
    assert plan == {j.id: got[j.id] for j in placed}
    # Until the first re-plan after T the engine follows the what-if.
    for j in candidate:
        if clean[j.id]:
            assert j.start == got[j.id], j
    for j in later:
        if promised[j.id]:
            assert j.result.submit_plan == got[j.id], j
    # Where no re-plan can change anything, every start.
    keys = [key(j) for j in candidate]
    in_key_order = keys == sorted(keys)
    exact = order == "fcfs" or (settled and in_key_order)
    if exact:
        assert [j.start for j in candidate] == [got[j.id] for j in candidate]
        event("cons: exact" if candidate else "cons: nothing to compare")
    else:
        n_clean = sum(clean[j.id] for j in candidate)
        event(
            f"cons: {'settled' if settled else 'unsettled'} at T, out of key order; clean starts {n_clean}/{len(candidate)}"
        )
    event(f"cons: {len(resv)} reservations")
    return exact


CASE_A = (4, [(0, 2, 5), (0, 1, 20), (1, 4, 5), (2, 3, 5), (3, 1, 10)], 0)  # test_schedules a


@pytest.mark.parametrize("order", ["fcfs", "sjf", "ljf"])
@settings(SETTINGS, max_examples=150)
@given(trace=traces(), windows=WINDOWS)
@example(trace=CASE_A, windows=[])
def test_replays_the_engine(
    order: str, trace: tuple[int, list[Spec], int], windows: list[Resv]
) -> None:
    """One trace through {order}-easy and {order}-cons; reservations for the planner only."""
    nodes, spec, T = trace
    check_easy(order, nodes, spec, T)
    check_conservative(order, nodes, spec, T, reservations(nodes, windows))


@pytest.mark.parametrize("order", ["sjf", "ljf"])
@settings(SETTINGS, max_examples=100)
@given(trace=traces(), windows=WINDOWS)
def test_conservative_is_exact_when_jobs_arrive_in_key_order(
    order: str, trace: tuple[int, list[Spec], int], windows: list[Resv]
) -> None:
    """Estimates rising (sjf) or falling (ljf) with submit times: each arrival is last in
    key order, the plan stays settled, and every start must match at any T."""
    nodes, spec, T = trace
    estimates = sorted((e for _, _, e in spec), reverse=order == "ljf")
    spec = [(s, w, e) for (s, w, _), e in zip(spec, estimates, strict=True)]
    assert check_conservative(order, nodes, spec, T, reservations(nodes, windows))
