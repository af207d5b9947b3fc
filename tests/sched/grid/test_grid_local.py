"""Hierarchical, decentral and job-pool grids (Hamscher et al.'s grid paper, sec. 3.2, 3.3), schedules by hand.

Jobs are (id, submit, width, runtime), estimate = runtime; ``home`` is the SWF
partition field (1-based machine). Expected tables are (machine, start, end).
"""

from __future__ import annotations

import pytest
from gridutil import job, run_grid, table

from batchd.engine.core import Engine
from batchd.model.machine import Grid, Machine
from batchd.sched.grid import make_grid
from batchd.sched.grid.local import PoolGrid


# hierarchical, machines m0 (4) and m1 (8), local fcfs-easy, all at t=0, 100 s:
# J1 w2, J2 w2, J3 w4. Strategies count a machine's idle nodes less those asked for
# by the jobs already handed to it.
# equalutil-max: J1 util 0 = 0 -> m0; J2: m0 (4-2)/4 > m1 0 -> m1;
#   J3: m0 2/4 > m1 2/8 -> m1. All start at 0 (m0: 2 of 4, m1: 6 of 8).
# bestfit-max: J1 left m0 2, m1 6 -> m0; J2 left m0 0 -> m0; J3: m0 -4, m1 4 -> m1.
@pytest.mark.parametrize(
    ("select", "machines"), [("equalutil-max", (0, 1, 1)), ("bestfit-max", (0, 0, 1))]
)
def test_hierarchical_strategies(select: str, machines: tuple[int, ...]) -> None:
    jobs = [job(1, 0, 2, 100), job(2, 0, 2, 100), job(3, 0, 4, 100)]
    _, _, out = run_grid("hierarchical", [4, 8], jobs, select=select)
    assert table(out) == {i + 1: (m, 0, 100) for i, m in enumerate(machines)}


def test_hierarchical_random_is_seeded_and_fits() -> None:
    jobs = [job(i, i, 1 + i % 4, 50) for i in range(1, 30)]
    a = table(run_grid("hierarchical", [2, 4, 8], jobs, seed=5, select="random-max")[2])
    jobs = [job(i, i, 1 + i % 4, 50) for i in range(1, 30)]
    b = table(run_grid("hierarchical", [2, 4, 8], jobs, seed=5, select="random-max")[2])
    assert a == b
    assert len({m for m, _, _ in a.values()}) == 3
    assert all([2, 4, 8][m] >= 1 + i % 4 for i, (m, _, _) in a.items())


# Local policies per machine: m0 has 1 node, m1 4; every job below is wider than m0,
# so all go to m1. J1 w2 100 s, J2 w4 100 s, J3 w2 50 s, all at t=0.
# m1 fcfs-easy: J1 [0,100); J2 blocked, shadow 100, extra 0; J3 ends 50 <= 100 ->
#   backfills [0,50); J2 [100,200).
# m1 fcfs (local.m1=fcfs): J1 [0,100); J2 waits and J3 behind it: J2 [100,200),
#   J3 [200,250).
@pytest.mark.parametrize(
    ("params", "j3"),
    [({}, (1, 0, 50)), ({"local.m1": "fcfs"}, (1, 200, 250))],
)
def test_hierarchical_local_policy_per_machine(params: dict[str, str], j3: tuple) -> None:
    jobs = [job(1, 0, 2, 100), job(2, 0, 4, 100), job(3, 0, 2, 50)]
    layer, _, out = run_grid("hierarchical", [1, 4], jobs, select="bestfit-max", **params)
    assert table(out) == {1: (1, 0, 100), 2: (1, 100, 200), 3: j3}
    assert [p.name for p in layer.local] == ["fcfs-easy", params.get("local.m1", "fcfs-easy")]


# decentral, m0 and m1 of 4 nodes, migration 1.5, homes from the partition field:
# J1 t0 w4 100 s home m0 -> starts at home [0,100).
# J2 t0 w2 100 s home m0: m0 full -> moves to m1, the first machine that can start it,
#   runtime and estimate 100 * 1.5 = 150 -> m1 [0,150).
# J3 t0 w4 10 s home m0: m0 full, m1 has 2 free -> waits at home (head of m0's queue).
# J4 t5 w2 10 s home m1: m1 has 2 free -> starts at home [5,15).
# J3 is offered again at every pass as head of m0's queue: m1 never has 4 free before
#   t=100, when m0 starts it at home [100,110).
def test_decentral_moves_at_arrival_else_waits_home() -> None:
    jobs = [
        job(1, 0, 4, 100, home=1),
        job(2, 0, 2, 100, home=1),
        job(3, 0, 4, 10, home=1),
        job(4, 5, 2, 10, home=2),
    ]
    layer, _, out = run_grid("decentral", [4, 4], jobs, migration="1.5")
    assert table(out) == {1: (0, 0, 100), 2: (1, 0, 150), 3: (0, 100, 110), 4: (1, 5, 15)}
    assert layer.stats.migrations == 1
    assert layer.original == {2: (100, 100)}


# The re-offer rule: J1 t0 w4 100 s home m0 [0,100); J2 t0 w4 30 s home m1 [0,30);
# J3 t0 w4 10 s home m0 waits at home (m1 full). t=30: J2 ends; m0's pass cannot
# start J3, J3 heads m0's queue -> offered -> moves to m1, 10 * 1.5 = 15 -> [30,45).
def test_decentral_head_is_offered_again() -> None:
    jobs = [job(1, 0, 4, 100, home=1), job(2, 0, 4, 30, home=2), job(3, 0, 4, 10, home=1)]
    layer, _, out = run_grid("decentral", [4, 4], jobs, migration="1.5")
    assert table(out) == {1: (0, 0, 100), 2: (1, 0, 30), 3: (1, 30, 45)}
    assert layer.stats.migrations == 1


def test_decentral_homes_without_partition_are_seeded() -> None:
    def homes(seed: int, mode: str) -> list[int]:
        jobs = [job(i, i * 1000, 1, 10) for i in range(1, 41)]  # never waits: runs at home
        return [j.machine for j in run_grid("decentral", [2, 6], jobs, seed=seed, home=mode)[2]]

    assert homes(1, "random") == homes(1, "random")
    assert homes(1, "random") != homes(2, "random")
    assert set(homes(1, "random")) == {0, 1}
    # weighted: m1 has 3/4 of the nodes, so most homes
    assert homes(1, "weighted").count(1) > 20


def pool_jobs() -> list:
    # m0, m1 of 4 nodes, every home m0: J1 w4 100 s, J2 w2 50 s, J3 w4 10 s,
    # J4 w2 100 s, J5 w2 20 s, all at t=0.
    return [
        job(1, 0, 4, 100, home=1),
        job(2, 0, 2, 50, home=1),
        job(3, 0, 4, 10, home=1),
        job(4, 0, 2, 100, home=1),
        job(5, 0, 2, 20, home=1),
    ]


# pool, push=blocked, discipline=easy: t=0 m0 starts J1 [0,100) at home; J2..J5 could
# not start at home -> pushed (4 pushes). m0 has no free node. m1 pulls in pool order:
# J2 fits (free 4 -> 2) [0,50); J3 (w4) does not: reservation on m1 at 50 (J2's end,
# 2+2 = 4), extra 0; J4 (ends 100 > 50, w2 > 0) not pulled; J5 (ends 20 <= 50) pulled
# [0,20). t=20: J5 ends, m1 free 2: J3 still blocked (shadow 50), J4 still would delay.
# t=50: m1 free 4: J3 [50,60); J4 blocked (free 0). t=60: J4 pulled [60,160).
def test_pool_easy() -> None:
    layer, _, out = run_grid("pool", [4, 4], pool_jobs(), discipline="easy")
    assert table(out) == {
        1: (0, 0, 100),
        2: (1, 0, 50),
        3: (1, 50, 60),
        4: (1, 60, 160),
        5: (1, 0, 20),
    }
    assert (layer.stats.pool_pushes, layer.stats.pool_pulls, layer.stats.migrations) == (4, 4, 4)


# discipline=fcfs: m1 pulls in order while the next job fits: J2 [0,50), then J3 does
# not fit: stop. t=50: J3 [50,60), J4 does not fit: stop. t=60: J4 [60,160), J5 [60,80).
def test_pool_fcfs() -> None:
    _, _, out = run_grid("pool", [4, 4], pool_jobs(), discipline="fcfs")
    assert table(out) == {
        1: (0, 0, 100),
        2: (1, 0, 50),
        3: (1, 50, 60),
        4: (1, 60, 160),
        5: (1, 60, 80),
    }


# push=all, discipline=fcfs, migration 2: every job goes to the pool at arrival.
# t=0: m0 pulls J1 (w4, its home) [0,100), then is full. m1 pulls J2 (not its home:
# 50 * 2 = 100) [0,100), J3 does not fit: stop. t=100: both free. m0 pulls J3 (home)
# [100,110), J4 (w2 > 0 free) no: stop. m1 pulls J4 (200 s) [100,300), J5 (40 s)
# [100,140).
def test_pool_push_all() -> None:
    layer, _, out = run_grid(
        "pool", [4, 4], pool_jobs(), discipline="fcfs", push="all", migration="2"
    )
    assert table(out) == {
        1: (0, 0, 100),
        2: (1, 0, 100),
        3: (0, 100, 110),
        4: (1, 100, 300),
        5: (1, 100, 140),
    }
    assert (layer.stats.pool_pushes, layer.stats.pool_pulls, layer.stats.migrations) == (5, 5, 3)


def overflow_jobs() -> list:
    # m0, m1 of 4 nodes, all at t=0 in this order (home 1-based):
    # J1 w4 100 s m1, J2 w4 100 s m1, J3 w2 30 s m1, J4 w2 200 s m1,
    # J5 w2 100 s m0, J6 w4 10 s m0.
    return [
        job(1, 0, 4, 100, home=2),
        job(2, 0, 4, 100, home=2),
        job(3, 0, 2, 30, home=2),
        job(4, 0, 2, 200, home=2),
        job(5, 0, 2, 100, home=1),
        job(6, 0, 4, 10, home=1),
    ]


# push=overflow, backlog 1 (a machine keeps at most its own nodes' worth of waiting
# jobs). t=0: m1 starts J1 [0,100) and is full; J2 stays at home (0 + 4 <= 4 nodes
# waiting); J3 (4 + 2 > 4) and J4 (4 + 2 > 4) go to the pool. m0 starts J5 [0,100),
# free 2; J6 stays at home (0 + 4 <= 4), its own head.
# easy: m0 backfills from its queue first (nothing fits), then pulls from the pool
# without delaying J6's reservation (shadow 100, when J5 ends; extra 0): J3 ends at
# 30 <= 100 -> pulled [0,30); J4 would end at 200 > 100 -> not pulled, at 0 nor at 30.
# t=100: m0 starts J6 [100,110), m1 J2 [100,200). t=110: m0 idle, no own job
# waiting: pulls J4 [110,310).
# fcfs: m0 pulls for the 2 nodes its FCFS pass left idle, its own J6 waiting or not:
# J3 [0,30); t=30 J4 [30,230); J6 waits for 4 free nodes: t=230, [230,240).
@pytest.mark.parametrize(
    ("discipline", "j4", "j6"),
    [("easy", (0, 110, 310), (0, 100, 110)), ("fcfs", (0, 30, 230), (0, 230, 240))],
)
def test_pool_overflow_local_backlog_first(
    discipline: str, j4: tuple[int, int, int], j6: tuple[int, int, int]
) -> None:
    layer, _, out = run_grid(
        "pool", [4, 4], overflow_jobs(), discipline=discipline, push="overflow"
    )
    assert table(out) == {
        1: (1, 0, 100),
        2: (1, 100, 200),
        3: (0, 0, 30),
        4: j4,
        5: (0, 0, 100),
        6: j6,
    }
    assert (layer.stats.pool_pushes, layer.stats.pool_pulls, layer.stats.migrations) == (2, 2, 2)


# backlog 2: m1 keeps J2 (4), J3 (6) and J4 (8 <= 8 nodes): the pool stays empty and
# m0 idles from 110 on while m1 works through its own queue (easy): t=100 J2
# [100,200); t=200 J3 [200,230), J4 [200,400).
def test_pool_overflow_larger_backlog_keeps_jobs_home() -> None:
    layer, _, out = run_grid(
        "pool", [4, 4], overflow_jobs(), discipline="easy", push="overflow", backlog="2"
    )
    assert table(out) == {
        1: (1, 0, 100),
        2: (1, 100, 200),
        3: (1, 200, 230),
        4: (1, 200, 400),
        5: (0, 0, 100),
        6: (0, 100, 110),
    }
    assert (layer.stats.pool_pushes, layer.stats.pool_pulls) == (0, 0)


# backlog 0 keeps nothing at home: the schedule of push=blocked.
@pytest.mark.parametrize("discipline", ["easy", "fcfs"])
def test_pool_overflow_without_backlog_is_push_blocked(discipline: str) -> None:
    for jobs in (pool_jobs, overflow_jobs):
        blocked = table(run_grid("pool", [4, 4], jobs(), discipline=discipline)[2])
        overflow = run_grid(
            "pool", [4, 4], jobs(), discipline=discipline, push="overflow", backlog="0"
        )
        assert table(overflow[2]) == blocked


# After a daemon restart the waiting jobs come back with their homes (resume): with
# push=overflow a job goes back to its home's queue if the backlog rule keeps it there
# (J1 w4: 0 + 4 <= 4), else to the pool (J2 w2: 4 + 2 > 4); push=blocked puts both
# into the pool, as before.
@pytest.mark.parametrize(
    ("push", "home_queue", "pool"), [("overflow", [1], [2]), ("blocked", [], [1, 2])]
)
def test_pool_resume_after_restart(push: str, home_queue: list[int], pool: list[int]) -> None:
    layer = make_grid("pool", {"push": push}, [("m0", 4), ("m1", 4)], seed=0)
    assert isinstance(layer, PoolGrid)
    engine = Engine(Grid([Machine("m0", 4), Machine("m1", 4)]), layer.ports)
    layer.attach(engine.machines)
    for j in (job(1, 0, 4, 100), job(2, 0, 2, 100)):
        layer.resume(j, 0)
    assert [j.id for j in layer.waiting_on(0)] == home_queue + pool
    assert [j.id for j in layer.local[0].waiting()] == home_queue
