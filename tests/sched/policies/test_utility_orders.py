"""prio-fifo and utility-easy (Lee's utility paper): schedules of tiny job sets worked out by hand.

Jobs are (id, submit, width, estimate, runtime) with a priority class or a utility
function beside; [a,b) is a job's interval, "free" the idle nodes, "shadow" the EASY
reservation time. Every expected table is derived by hand in the comment above it.
"""

from __future__ import annotations

import pytest

from batchd.engine.core import Engine
from batchd.engine.machine import MachineState
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.utility import Utility
from batchd.sched.core.order import prio_key
from batchd.sched.policies.current_utility import (
    current_utility,
    per_node_hour,
    utility_rate_key,
)
from batchd.sched.policies.utility_easy import UtilityEasy
from batchd.sched.registry import make_policy

Table = dict[int, tuple[int, int]]


def run(jobs: list[Job], nodes: int, policy: str) -> Table:
    engine = Engine(Grid([Machine("m", nodes)]), [make_policy(policy)])
    engine.load(jobs)
    engine.run()
    return {j.id: (j.start, j.end) for j in sorted(jobs, key=lambda j: j.id)}


# --------------------------------------------------------------------------------------------
# prio-fifo, 4 nodes; (id, submit, width, estimate = runtime, class):
#   1: (0, 4, 10, c2)  2: (1, 2, 10, c2)  3: (2, 3, 10, c0)  4: (3, 1, 5, c1)  5: (4, 1, 20, c2)
#
# t0 job 1 [0,10) on all nodes. t10 job 1 ends, free 4; the order is 3 (c0), 4 (c1), 2 and
# 5 (c2, by submit): 3 [10,20) (free 1) and 4 [10,15) (free 0) start in order. t15 job 4
# ends, free 1: head 2 (w2) does not fit; shadow 20 (job 3 gives 3 nodes: 4 free), extra
# 2; job 5 (w1) ends at 35 > 20 but fits in the extra nodes -> [15,35). t20 job 3 ends,
# free 3 -> job 2 [20,30).
PRIO: Table = {1: (0, 10), 2: (20, 30), 3: (10, 20), 4: (10, 15), 5: (15, 35)}

# fcfs-easy on the same jobs ignores the classes: t10 job 2 [10,20) starts (free 2); head
# 3 (w3) gets the shadow 20 (job 2's end: 4 free), extra 1; 4 ends by 20 -> [10,15); 5
# ends at 30 > 20 but takes the extra node -> [10,30). t20 job 2 ends, free 3 -> job 3
# [20,30): the class-0 job starts 10 s later than under prio-fifo.
FCFS: Table = {1: (0, 10), 2: (10, 20), 3: (20, 30), 4: (10, 15), 5: (10, 30)}


def _classed() -> list[Job]:
    spec = [(1, 0, 4, 10, 2), (2, 1, 2, 10, 2), (3, 2, 3, 10, 0), (4, 3, 1, 5, 1), (5, 4, 1, 20, 2)]
    return [
        Job(id=i, submit=s, width=w, estimate=e, runtime=e, priority_class=c)
        for i, s, w, e, c in spec
    ]


def test_prio_fifo_serves_the_classes_strictly_with_easy_within() -> None:
    assert run(_classed(), 4, "prio-fifo") == PRIO


def test_fcfs_easy_ignores_the_classes() -> None:
    assert run(_classed(), 4, "fcfs-easy") == FCFS


def test_prio_fifo_order_puts_the_pbs_priority_before_the_class() -> None:
    a = Job(id=1, submit=0, width=1, estimate=1, runtime=1, priority_class=0)
    b = Job(id=2, submit=5, width=1, estimate=1, runtime=1, priority_class=3, priority=10)
    c = Job(id=3, submit=1, width=1, estimate=1, runtime=1, priority_class=3)
    d = Job(id=4, submit=0, width=1, estimate=1, runtime=1, priority_class=3)
    assert [j.id for j in sorted([a, b, c, d], key=prio_key)] == [2, 1, 4, 3]


# --------------------------------------------------------------------------------------------
# utility-easy, 2 nodes; (id, submit, width, estimate = runtime, utility):
#   1: (0, 2, 10, none)  2: (1, 1, 10, 0:100,100:0)  3: (2, 2, 10, 0:1000,1000:0)
#   4: (3, 1, 20, 0:50,30:0)
#
# t0 job 1 [0,10). At t10, started now each would end at: 2 at 20 (19 s after submit:
# worth 81, per node-hour 81 x 3600 / 10 = 29,160), 3 at 20 (18 s: 982, x 3600 / 20 =
# 176,760), 4 at 30 (27 s: 5, x 3600 / 20 = 900): the order is 3, 2, 4. Job 3 [10,20)
# takes both nodes. At t20 the order is made again: 2 (ends 30, 29 s: 71) before 4 (ends
# 40, 37 s: past its last point, 0); both fit: 2 [20,30) and 4 [20,40).
UTILITY: Table = {1: (0, 10), 2: (20, 30), 3: (10, 20), 4: (20, 40)}

# fcfs-easy: t10 job 2 (free 1); head 3 (w2) gets the shadow 20, extra 0; job 4 would end
# at 30 > 20 -> waits. t20 job 3 [20,30); t30 job 4 [30,50).
UTILITY_FCFS: Table = {1: (0, 10), 2: (10, 20), 3: (20, 30), 4: (30, 50)}


def _valued() -> list[Job]:
    functions = {2: "0:100,100:0", 3: "0:1000,1000:0", 4: "0:50,30:0"}
    spec = [(1, 0, 2, 10), (2, 1, 1, 10), (3, 2, 2, 10), (4, 3, 1, 20)]
    return [
        Job(
            id=i,
            submit=s,
            width=w,
            estimate=e,
            runtime=e,
            utility=Utility.parse(functions[i]) if i in functions else None,
        )
        for i, s, w, e in spec
    ]


def test_utility_easy_orders_by_current_utility_per_node_hour_at_each_pass() -> None:
    assert run(_valued(), 2, "utility-easy") == UTILITY
    assert run(_valued(), 2, "fcfs-easy") == UTILITY_FCFS


def test_current_utility_is_what_a_start_now_earns() -> None:
    jobs = {j.id: j for j in _valued()}
    assert current_utility(jobs[2], 10) == 81.0
    assert per_node_hour(jobs[3], 10) == pytest.approx(982 * 3600 / 20)
    assert current_utility(jobs[4], 20) == 0.0  # ends 37 s after submission, past 30
    assert current_utility(jobs[1], 10) == 0.0  # no function: worth nothing


def test_a_new_order_must_hold_exactly_the_waiting_jobs() -> None:
    policy = UtilityEasy()
    view = MachineState(0, Machine("m", 2), policy, kill=True)
    a, b, c = _valued()[:3]
    policy.job_submitted(view, a)
    policy.job_submitted(view, b)
    for bad in ([a], [a, c], [a, a]):
        with pytest.raises(ValueError, match="exactly the waiting jobs"):
            policy.reorder(bad)
    assert policy.waiting() == [a, b]  # a refused order changes nothing
    policy.reorder([b, a])
    assert policy.waiting() == [b, a]


def test_utility_easy_orders_two_jobs_and_leaves_one_alone() -> None:
    # At 10 job 3 earns 176,760 per node-hour and job 2 29,160 (worked out above).
    policy = UtilityEasy()
    assert policy.name == "utility-easy"
    view = MachineState(10, Machine("m", 2), policy, kill=True)
    jobs = {j.id: j for j in _valued()}
    policy.job_submitted(view, jobs[2])
    assert policy.choose(view) is None  # one job: no order to choose
    policy.job_submitted(view, jobs[3])
    assert policy.choose(view) == [jobs[3], jobs[2]]


def test_utility_rate_key_puts_the_pbs_priority_first() -> None:
    # Job 2 earns less per node-hour than job 3, but its priority is higher.
    jobs = {j.id: j for j in _valued()}
    urgent = Job(2, 1, 1, 10, 10, utility=Utility.parse("0:100,100:0"), priority=5)
    assert sorted([jobs[3], urgent], key=utility_rate_key(10)) == [urgent, jobs[3]]
    assert sorted([urgent, jobs[3]], key=utility_rate_key(10)) == [urgent, jobs[3]]


class AlwaysSorted(UtilityEasy):
    """utility-easy as written in the seed: the whole queue sorted at every pass."""

    def choose(self, view):  # type: ignore[no-untyped-def]
        jobs = self.queue.jobs
        return sorted(jobs, key=utility_rate_key(view.now)) if len(jobs) >= 2 else None


@pytest.mark.parametrize("seed", range(30))
def test_utility_easy_sorts_only_when_the_order_can_change(seed: int) -> None:
    # Deep queues of jobs mostly without a utility function, some with one, some with
    # a PBS priority, some submitted in the same second: the order kept between passes
    # while every waiting job is worth 0 serves the jobs as sorting at each pass does.
    import random

    rng = random.Random(seed)
    spec = []
    t = 0
    for i in range(1, 120):
        t += rng.choice([0, 0, 1, rng.randint(0, 30)])
        valued = rng.random() < (0.0 if seed % 3 == 0 else 0.15)
        spec.append((i, t, rng.randint(1, 4), rng.randint(1, 60), rng.randint(0, 60), valued))

    def jobs() -> list[Job]:
        return [
            Job(
                id=i, submit=s, width=w, estimate=e, runtime=r,
                priority=rng_priority(i),
                utility=Utility([(0, 100.0 * w), (3 * e + 10, 0.0)]) if valued else None,
            )
            for i, s, w, e, r, valued in spec
        ]  # fmt: skip

    def rng_priority(i: int) -> int:
        return 5 if (i * 7 + seed) % 11 == 0 else 0

    tables = []
    for policy in (UtilityEasy(), AlwaysSorted()):
        js = jobs()
        engine = Engine(Grid([Machine("m", 4)]), [policy])
        engine.load(js)
        engine.run()
        tables.append({j.id: (j.start, j.end, tuple(j.units)) for j in js})
    assert tables[0] == tables[1]
