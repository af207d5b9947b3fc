"""Whole schedules of tiny hand-made traces, worked out by hand for every relevant policy.

Each trace is in ``tests/data/sched_*.swf``; jobs are written below as
(id, submit, width, estimate, runtime). Every expected table is a literal, derived
by hand in the comment above it (not produced by running the code). Notation:
[a,b) is a job's interval, "free" the idle nodes, "shadow" the EASY reservation time.
"""

from __future__ import annotations

import pytest

from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.states import JobState
from batchd.replay import ReplayOptions, run_replay
from batchd.sched.registry import make_policy
from paths import DATA

Table = dict[int, tuple[int, int]]


def replay(
    name: str,
    policy: str,
    nodes: int,
    *,
    params: dict[str, str] | None = None,
    kill: bool = True,
) -> dict[int, Job]:
    result = run_replay(
        ReplayOptions(
            trace=str(DATA / name), policy=policy, params=params or {}, nodes=nodes, kill=kill
        )
    )
    jobs = {j.id: j for j in result.jobs}
    assert all(j.state is JobState.FINISHED for j in jobs.values())
    return jobs


def schedule(jobs: dict[int, Job]) -> Table:
    return {i: (j.start, j.end) for i, j in sorted(jobs.items())}


def nodes_of(jobs: dict[int, Job]) -> dict[int, list[int]]:
    return {i: j.units for i, j in sorted(jobs.items())}


def run_engine(spec: list[tuple[int, int, int, int, int]], nodes: int, policy: str) -> Table:
    jobs = [Job(id=i, submit=s, width=w, estimate=e, runtime=r) for i, s, w, e, r in spec]
    engine = Engine(Grid([Machine("m", nodes)]), [make_policy(policy)])
    engine.load(jobs)
    engine.run()
    return {j.id: (j.start, j.end) for j in sorted(jobs, key=lambda j: j.id)}


# --------------------------------------------------------------------------------------------
# a. EASY protects only the head; conservative protects every queued job.
#
# sched_easy_vs_cons.swf, 4 nodes:
#   1: (0, 2, 5, 5)   2: (0, 1, 20, 20)   3: (1, 4, 5, 5)   4: (2, 3, 5, 5)   5: (3, 1, 10, 10)

# EASY: t0 jobs 1 [0,5) nodes 0-1 and 2 [0,20) node 2 start; free 1.
# t1 job 3 (w4) is the head: 3 free at 5, 4 at 20 -> shadow 20, extra 0.
# t2 job 4 (w3) > free 1: no. t3 job 5 (w1) fits, 3+10=13 <= 20 -> backfilled [3,13) node 3.
# t5 job 1 ends: free 2 < 3, job 4 still waits. t13 job 5 ends: free 3, 13+5=18 <= 20
# -> job 4 [13,18) on nodes 0,1,3. t20 job 2 ends -> job 3 [20,25) on all nodes.
# sjf-easy and ljf-easy give the same times (3 before 4 on equal estimates by submit;
# ljf puts 5 first at t3 but it simply fits). Only the node sets differ for ljf-easy: at t0
# it starts 2 (estimate 20) before 1, so 2 gets node 0 and 1 gets nodes 1-2; at t13 the
# free nodes are 1,2,3 for job 4.
EASY_A: Table = {1: (0, 5), 2: (0, 20), 3: (20, 25), 4: (13, 18), 5: (3, 13)}
EASY_A_NODES = {1: [0, 1], 2: [2], 3: [0, 1, 2, 3], 4: [0, 1, 3], 5: [3]}
LJF_EASY_A_NODES = {1: [1, 2], 2: [0], 3: [0, 1, 2, 3], 4: [1, 2, 3], 5: [3]}

# Conservative (fcfs order): t1 job 3 planned [20,25) (4 nodes only after job 2).
# t2 job 4 (w3): 3 free on [5,20) -> planned [5,10). t3 job 5 (w1, 10 s): 1 free on [3,5)
# but 0 on [5,10) (job 4), 3 on [10,20), 0 on [20,25) -> planned [10,20); EASY's backfill
# at 3 would have delayed job 4. t5 job 1 ends at its estimate: the plan stands, job 4
# starts on nodes 0,1,3; t10 job 5 starts on node 0; t20 job 3.
CONS_A: Table = {1: (0, 5), 2: (0, 20), 3: (20, 25), 4: (5, 10), 5: (10, 20)}
CONS_A_NODES = {1: [0, 1], 2: [2], 3: [0, 1, 2, 3], 4: [0, 1, 3], 5: [0]}
CONS_A_PROMISES = {1: 0, 2: 0, 3: 20, 4: 5, 5: 10}

# ljf-cons (replan=rebuild): the promises are the same (job 5 placed at 10), but job 5
# (estimate 10) goes ahead of 3 and 4 in LJF order, so at t5 (job 1 ends) the rebuild onto
# job 2 (1 node until 20) puts 5 at [5,15), 3 at [20,25), and 4 (w3) finds 3 free nodes
# only from 15 -> [15,20): job 4 loses its promise of 5.
LJF_CONS_A: Table = {1: (0, 5), 2: (0, 20), 3: (20, 25), 4: (15, 20), 5: (5, 15)}


@pytest.mark.parametrize("policy", ["fcfs-easy", "sjf-easy", "ljf-easy"])
def test_a_easy_backfills_past_the_second_job(policy: str) -> None:
    jobs = replay("sched_easy_vs_cons.swf", policy, 4)
    assert schedule(jobs) == EASY_A
    assert nodes_of(jobs) == (LJF_EASY_A_NODES if policy == "ljf-easy" else EASY_A_NODES)


@pytest.mark.parametrize(
    ("policy", "params"),
    [
        ("fcfs-cons", {}),
        ("fcfs-cons", {"replan": "rebuild"}),
        ("fcfs-cons", {"replan": "compress"}),
        ("fcfs-cons", {"replan": "guarded"}),
        ("sjf-cons", {}),
    ],
)
def test_a_conservative_protects_every_job(policy: str, params: dict[str, str]) -> None:
    jobs = replay("sched_easy_vs_cons.swf", policy, 4, params=params)
    assert schedule(jobs) == CONS_A
    assert nodes_of(jobs) == CONS_A_NODES
    assert {i: j.result.submit_plan for i, j in jobs.items()} == CONS_A_PROMISES


def test_a_ljf_cons_rebuild_reorders() -> None:
    jobs = replay("sched_easy_vs_cons.swf", "ljf-cons", 4)
    assert schedule(jobs) == LJF_CONS_A
    assert {i: j.result.submit_plan for i, j in jobs.items()} == CONS_A_PROMISES


def test_a_policies_without_planning_leave_submit_plan_unset() -> None:
    jobs = replay("sched_easy_vs_cons.swf", "fcfs-easy", 4)
    assert {j.result.submit_plan for j in jobs.values()} == {-1}
    assert {j.result.started_by for j in jobs.values()} == {"fcfs-easy"}


# --------------------------------------------------------------------------------------------
# b. SJF and LJF orders, with ties by submit time and then by id.
#
# sched_sjf_ljf.swf, 2 nodes, every job takes the whole machine (no backfilling possible);
# file order 1 2 3 6 5 4, so same-second arrivals are not in id order:
#   1: (0, 2, 10, 10)  2: (1, 2, 5, 5)  3: (2, 2, 3, 3)
#   6: (3, 2, 8, 8)    5: (3, 2, 5, 5)  4: (3, 2, 8, 8)
# Job 1 runs [0,10); at 10 the other five run one after the other in policy order.

# SJF key (estimate, submit, id): 3 (3), 2 (5, t1), 5 (5, t3), 4 (8, t3, id 4), 6 (8, t3, id 6)
# -> 3 [10,13), 2 [13,18), 5 [18,23), 4 [23,31), 6 [31,39).
SJF_B: Table = {1: (0, 10), 2: (13, 18), 3: (10, 13), 4: (23, 31), 5: (18, 23), 6: (31, 39)}

# LJF key (-estimate, submit, id): 4 (8, id 4), 6 (8, id 6), 2 (5, t1), 5 (5, t3), 3 (3)
# -> 4 [10,18), 6 [18,26), 2 [26,31), 5 [31,36), 3 [36,39).
LJF_B: Table = {1: (0, 10), 2: (26, 31), 3: (36, 39), 4: (10, 18), 5: (31, 36), 6: (18, 26)}

# FCFS key (submit, id): 2, 3, 4, 5, 6 -> 2 [10,15), 3 [15,18), 4 [18,26), 5 [26,31), 6 [31,39).
FCFS_B: Table = {1: (0, 10), 2: (10, 15), 3: (15, 18), 4: (18, 26), 5: (26, 31), 6: (31, 39)}

# fcfs-cons places same-second arrivals in arrival order: 2 at 10, 3 at 15, then at t3
# 6 [18,26), 5 [26,31), 4 [31,39). At 10 (job 1 ends) a rebuild in FCFS order gives FCFS_B,
# which would put 6 at 31 > its plan 18; guarded therefore compresses instead, which keeps
# every planned start (nothing can move earlier: the machine is busy without a gap).
FCFS_CONS_GUARDED_B: Table = {
    1: (0, 10),
    2: (10, 15),
    3: (15, 18),
    4: (31, 39),
    5: (26, 31),
    6: (18, 26),
}
FCFS_CONS_B_PROMISES = {1: 0, 2: 10, 3: 15, 4: 31, 5: 26, 6: 18}
# The promises of sjf-cons: 2 at 10; 3 (w2) after 2 -> 15; then 6, 5, 4 in arrival order
# at 18, 26, 31 (each at the end of the plan); the rebuild at 10 then gives SJF_B.
SJF_CONS_B_PROMISES = {1: 0, 2: 10, 3: 15, 4: 31, 5: 26, 6: 18}


@pytest.mark.parametrize("policy", ["sjf-easy", "sjf-cons"])
def test_b_sjf_order(policy: str) -> None:
    jobs = replay("sched_sjf_ljf.swf", policy, 2)
    assert schedule(jobs) == SJF_B
    if policy == "sjf-cons":
        assert {i: j.result.submit_plan for i, j in jobs.items()} == SJF_CONS_B_PROMISES


@pytest.mark.parametrize("policy", ["ljf-easy", "ljf-cons"])
def test_b_ljf_order(policy: str) -> None:
    assert schedule(replay("sched_sjf_ljf.swf", policy, 2)) == LJF_B


@pytest.mark.parametrize(
    ("policy", "params"),
    [("fcfs", {}), ("fcfs-easy", {}), ("fcfs-cons", {"replan": "rebuild"})],
)
def test_b_fcfs_order(policy: str, params: dict[str, str]) -> None:
    assert schedule(replay("sched_sjf_ljf.swf", policy, 2, params=params)) == FCFS_B


@pytest.mark.parametrize("replan", ["guarded", "compress"])
def test_b_fcfs_cons_keeps_arrival_order_promises(replan: str) -> None:
    jobs = replay("sched_sjf_ljf.swf", "fcfs-cons", 2, params={"replan": replan})
    assert schedule(jobs) == FCFS_CONS_GUARDED_B
    assert {i: j.result.submit_plan for i, j in jobs.items()} == FCFS_CONS_B_PROMISES


# --------------------------------------------------------------------------------------------
# c. A job killed at its estimate, and the same trace without killing.
#
# sched_kill.swf, 2 nodes:  1: (0, 1, 5, 10)  2: (0, 2, 3, 3)  3: (1, 1, 2, 2)

# fcfs-easy, kill: job 1 [0,5) on node 0 (killed at 0+5); job 2 (w2) head, shadow 5,
# extra 0; t1 job 3 fits and 1+2=3 <= 5 -> [1,3); t5 job 2 [5,8).
# fcfs-cons, kill: job 2 planned [5,8), job 3 placed [1,3) -> the same schedule.
KILL_BACKFILL: Table = {1: (0, 5), 2: (5, 8), 3: (1, 3)}
# Without killing job 1 runs its 10 s: job 3 still backfills at 1 (shadow still 5 then);
# job 2 waits for the real end, [10,13).
NOKILL_BACKFILL: Table = {1: (0, 10), 2: (10, 13), 3: (1, 3)}
# fcfs: job 3 waits behind job 2. kill: 1 [0,5), 2 [5,8), 3 [8,10);
# no kill: 1 [0,10), 2 [10,13), 3 [13,15).
KILL_FCFS: Table = {1: (0, 5), 2: (5, 8), 3: (8, 10)}
NOKILL_FCFS: Table = {1: (0, 10), 2: (10, 13), 3: (13, 15)}


@pytest.mark.parametrize(
    ("policy", "kill", "expected"),
    [
        ("fcfs-easy", True, KILL_BACKFILL),
        ("fcfs-easy", False, NOKILL_BACKFILL),
        ("fcfs-cons", True, KILL_BACKFILL),
        ("fcfs-cons", False, NOKILL_BACKFILL),
        ("fcfs", True, KILL_FCFS),
        ("fcfs", False, NOKILL_FCFS),
    ],
)
def test_c_kill_at_estimate(policy: str, kill: bool, expected: Table) -> None:
    jobs = replay("sched_kill.swf", policy, 2, kill=kill)
    assert schedule(jobs) == expected
    assert {i: j.result.killed for i, j in jobs.items()} == {1: kill, 2: False, 3: False}


def test_c_no_kill_breaks_a_conservative_promise() -> None:
    # Job 2 was promised 5 (job 1's estimated end); without killing it starts at 10.
    jobs = replay("sched_kill.swf", "fcfs-cons", 2, kill=False)
    assert (jobs[2].result.submit_plan, jobs[2].start) == (5, 10)


# --------------------------------------------------------------------------------------------
# d. Simultaneous events: ends, then submissions, then one pass; a zero-length job.
#
# sched_same_second.swf, 3 nodes:
#   1: (0, 3, 5, 5)  2: (5, 2, 4, 4)  3: (5, 1, 4, 4)  4: (9, 3, 2, 0)  5: (9, 3, 1, 1)
# t5: job 1 ends before 2 and 3 arrive, so both start at 5 on the freed nodes (0-1 and 2).
# t9: 2 and 3 end, 4 and 5 arrive; job 4 (w3) starts and ends at 9 (runtime 0); in the
# next round at 9 its nodes are free again and job 5 starts at 9 too.
SAME_SECOND: Table = {1: (0, 5), 2: (5, 9), 3: (5, 9), 4: (9, 9), 5: (9, 10)}
SAME_SECOND_NODES = {1: [0, 1, 2], 2: [0, 1], 3: [2], 4: [0, 1, 2], 5: [0, 1, 2]}
# sjf-easy serves 5 (estimate 1) before 4 (estimate 2): 5 [9,10), then 4 [10,10).
SAME_SECOND_SJF_EASY: Table = {1: (0, 5), 2: (5, 9), 3: (5, 9), 4: (10, 10), 5: (9, 10)}
# sjf-cons: 4 is placed first (arrival order) at [9,11) and is due at once; 5 is placed
# after it at 11 (its promise). Job 4 ends at 9, early -> re-plan -> 5 starts at 9.
# fcfs-cons/ljf-cons: same, 4 before 5 in their order anyway.


@pytest.mark.parametrize(
    "policy", ["fcfs", "fcfs-easy", "ljf-easy", "fcfs-cons", "sjf-cons", "ljf-cons"]
)
def test_d_same_second(policy: str) -> None:
    jobs = replay("sched_same_second.swf", policy, 3)
    assert schedule(jobs) == SAME_SECOND
    assert nodes_of(jobs) == SAME_SECOND_NODES
    if policy.endswith("-cons"):
        # Jobs 2 and 3 are placed after job 1's end at the same second.
        assert {i: j.result.submit_plan for i, j in jobs.items()} == {1: 0, 2: 5, 3: 5, 4: 9, 5: 11}


def test_d_same_second_sjf_easy() -> None:
    assert schedule(replay("sched_same_second.swf", "sjf-easy", 3)) == SAME_SECOND_SJF_EASY


# --------------------------------------------------------------------------------------------
# e. fcfs without backfilling stops at the first job that does not fit.
#
# sched_fcfs_head.swf, 4 nodes:
#   1: (0, 3, 10, 10)  2: (1, 2, 5, 5)  3: (2, 1, 3, 3)  4: (3, 4, 1, 1)  5: (4, 1, 1, 1)
# fcfs: 1 [0,10) nodes 0-2; 2 (w2) does not fit in 1 free node, so 3 (w1, fits) waits too.
# t10: 2 [10,15) nodes 0-1 and 3 [10,13) node 2 start in one pass; 4 (w4) does not fit in
# the 1 free node and stops the pass, so 5 (w1) waits although it fits.
# t15: 4 [15,16); t16: 5 [16,17).
FCFS_E: Table = {1: (0, 10), 2: (10, 15), 3: (10, 13), 4: (15, 16), 5: (16, 17)}
FCFS_E_NODES = {1: [0, 1, 2], 2: [0, 1], 3: [2], 4: [0, 1, 2, 3], 5: [0]}
# fcfs-easy: head 2 gets shadow 10 (4 free then, extra 2); 3 backfills at 2 (2+3=5 <= 10)
# on node 3; t5 (3 ends) 5 backfills [5,6) on node 3 (5+1 <= 10); t10 2 starts, 4 is the
# new head (shadow 15); t15 4 [15,16).
EASY_E: Table = {1: (0, 10), 2: (10, 15), 3: (2, 5), 4: (15, 16), 5: (5, 6)}
EASY_E_NODES = {1: [0, 1, 2], 2: [0, 1], 3: [3], 4: [0, 1, 2, 3], 5: [3]}


def test_e_fcfs_stops_at_the_head() -> None:
    jobs = replay("sched_fcfs_head.swf", "fcfs", 4)
    assert schedule(jobs) == FCFS_E
    assert nodes_of(jobs) == FCFS_E_NODES


def test_e_easy_backfills_the_same_trace() -> None:
    jobs = replay("sched_fcfs_head.swf", "fcfs-easy", 4)
    assert schedule(jobs) == EASY_E
    assert nodes_of(jobs) == EASY_E_NODES


# --------------------------------------------------------------------------------------------
# EASY's second rule: a long job backfills onto the nodes the head leaves over at the
# shadow time, and consumes them.
#
# sched_easy_extra.swf, 4 nodes:  1: (0, 2, 10, 10)  2: (1, 3, 5, 5)  3: (2, 1, 20, 20)
#                                  4: (2, 1, 20, 20)
# t1 head 2 (w3): 4 free at 10 -> shadow 10, extra 1. t2: 3 fits, 2+20 > 10 but
# w1 <= extra 1 -> backfilled [2,22) on node 2, extra 0; 4 fits the last free node but
# neither rule holds -> waits. t10: 2 [10,15) on nodes 0,1,3; 4 does not fit.
# t15: 4 [15,35) on node 0.
# Conservative reaches the same: 3 is placed at 2 (1 node left on [10,15) under job 2),
# 4 at 15.
EXTRA: Table = {1: (0, 10), 2: (10, 15), 3: (2, 22), 4: (15, 35)}
EXTRA_NODES = {1: [0, 1], 2: [0, 1, 3], 3: [2], 4: [0]}


@pytest.mark.parametrize("policy", ["fcfs-easy", "sjf-easy", "fcfs-cons"])
def test_easy_extra_nodes(policy: str) -> None:
    jobs = replay("sched_easy_extra.swf", policy, 4)
    assert schedule(jobs) == EXTRA
    assert nodes_of(jobs) == EXTRA_NODES


# --------------------------------------------------------------------------------------------
# f. fcfs-cons with replan=rebuild breaks a submission promise; guarded/compress do not.
#
# sched_replan.swf, 2 nodes (found by random search, then verified by hand):
#   1: (1, 1, 3, 2)  2: (2, 2, 6, 5)  3: (2, 1, 1, 1)  4: (2, 1, 1, 1)
# t1: 1 placed [1,4) (estimate 3), starts on node 0.
# t2: 2 (w2, 6 s) needs both nodes -> placed [4,10); 3 fits on node 1 over [2,3) -> placed 2
# and starts; 4: [2,3) full, [3,4) 1 free -> placed [3,4). Promises 1, 4, 2, 3.
# t3: 1 ends early (runtime 2) and 3 ends. Rebuild in FCFS order onto an empty machine:
# 2 [3,9), then 4 finds no node until 9 -> 4 is pushed from 3 to 9 (a list-scheduling
# anomaly). 2 starts at 3 on nodes 0-1, ends at 8 (runtime 5) -> re-plan -> 4 [8,9).
REBUILD_F: Table = {1: (1, 3), 2: (3, 8), 3: (2, 3), 4: (8, 9)}
REBUILD_F_NODES = {1: [0], 2: [0, 1], 3: [1], 4: [0]}
# guarded at t3: the rebuild would put 4 at 9 > 3, so compress the promises instead:
# 2 cannot move before 4 (1 node taken on [3,4) by 4's slot) and keeps 4; 4 keeps 3.
# 4 [3,4) on node 0. t4 (4 ended at its estimate): rebuild gives 2 at 4 = its promise,
# accepted; 2 [4,9). compress: the same.
GUARDED_F: Table = {1: (1, 3), 2: (4, 9), 3: (2, 3), 4: (3, 4)}
PROMISES_F = {1: 1, 2: 4, 3: 2, 4: 3}


def test_f_rebuild_breaks_a_promise() -> None:
    jobs = replay("sched_replan.swf", "fcfs-cons", 2, params={"replan": "rebuild"})
    assert schedule(jobs) == REBUILD_F
    assert nodes_of(jobs) == REBUILD_F_NODES
    assert {i: j.result.submit_plan for i, j in jobs.items()} == PROMISES_F
    assert jobs[4].start > jobs[4].result.submit_plan


@pytest.mark.parametrize("params", [{}, {"replan": "guarded"}, {"replan": "compress"}])
def test_f_guarded_and_compress_keep_promises(params: dict[str, str]) -> None:
    jobs = replay("sched_replan.swf", "fcfs-cons", 2, params=params)
    assert schedule(jobs) == GUARDED_F
    assert {i: j.result.submit_plan for i, j in jobs.items()} == PROMISES_F
    assert all(j.start <= j.result.submit_plan for j in jobs.values())


# The 12-job instance from the spec (5 nodes), kept as a regression: under rebuild job 7
# was promised 18 and started 26; guarded and compress keep every promise.
def test_f_known_instance() -> None:
    rebuild = replay("sched_replan_known.swf", "fcfs-cons", 5, params={"replan": "rebuild"})
    assert (rebuild[7].result.submit_plan, rebuild[7].start) == (18, 26)
    for replan in ("guarded", "compress"):
        jobs = replay("sched_replan_known.swf", "fcfs-cons", 5, params={"replan": replan})
        assert all(j.start <= j.result.submit_plan for j in jobs.values()), replan


# --------------------------------------------------------------------------------------------
# The same cases built directly on the engine (no SWF), as in the spec's construction.


def test_engine_construction_matches_replay() -> None:
    spec = [(1, 0, 2, 5, 5), (2, 0, 1, 20, 20), (3, 1, 4, 5, 5), (4, 2, 3, 5, 5), (5, 3, 1, 10, 10)]
    assert run_engine(spec, 4, "fcfs-easy") == EASY_A
    assert run_engine(spec, 4, "fcfs-cons") == CONS_A


def test_node_sets_lowest_ids_first() -> None:
    # 5 nodes: the w2 job gets [0,1], then the w3 job [2,3,4]; once the first ends, nodes
    # 0 and 1 are free and each later w1 job gets the lowest free id.
    spec = [(1, 0, 2, 4, 4), (2, 0, 3, 10, 10), (3, 4, 1, 2, 2), (4, 5, 1, 2, 2)]
    jobs = [Job(id=i, submit=s, width=w, estimate=e, runtime=r) for i, s, w, e, r in spec]
    engine = Engine(Grid([Machine("m", 5)]), [make_policy("fcfs")])
    engine.load(jobs)
    engine.run()
    # 1 [0,4) on 0-1; 2 [0,10) on 2-4; at 4 job 1 ends, 3 takes node 0; at 5 job 4 takes 1.
    assert {j.id: j.units for j in jobs} == {1: [0, 1], 2: [2, 3, 4], 3: [0], 4: [1]}
    assert {j.id: (j.start, j.end) for j in jobs} == {
        1: (0, 4),
        2: (0, 10),
        3: (4, 6),
        4: (5, 7),
    }
