"""Central single-site grid scheduling (Hamscher et al.'s grid paper, sec. 3.1, 4.1, 4.2), schedules by hand.

Machines are m0, m1, ... in config order; jobs are (id, submit, width, runtime)
with estimate = runtime unless said. Every expected table is (machine, start, end)
worked out in the comment above it. "free" is idle nodes, "left" what a machine
keeps free once the job is counted, "util" (nodes - free) / nodes.
"""

from __future__ import annotations

import numpy as np
import pytest
from gridutil import job, run_grid, table

from batchd.sched.core.plans import running_arrays_of
from batchd.sched.grid import make_grid


def three_small() -> list:
    # J1 w2, J2 w2, J3 w1, all at t=0 for 100 s, on m0 (4 nodes) and m1 (8 nodes).
    return [job(1, 0, 2, 100), job(2, 0, 2, 100), job(3, 0, 1, 100)]


# bestfit-free, at the pass of t=0 in FCFS order:
#   J1: left m0 4-2=2, m1 8-2=6 -> m0 (m0 free 2)
#   J2: left m0 0, m1 6 -> m0 (m0 free 0)
#   J3: only m1 can start it -> m1
# biggestfree-free: J1 m1 (8 > 4; m1 free 6), J2 m1 (6 > 4; free 4),
#   J3: m0 4 = m1 4, tie -> the first listed, m0
# equalutil-free: J1 util 0 = 0 -> m0 (util 2/4); J2: m0 2/4 > m1 0 -> m1 (util 2/8);
#   J3: m1 2/8 < m0 2/4 -> m1
# earliest: the first machine that can start it now: J1 m0, J2 m0 (free 2), J3 m1
# M_max strategies choose at arrival; "free" then counts the nodes of the jobs
# already assigned and waiting (all three arrive before the pass):
#   bestfit-max: J1 left m0 2, m1 6 -> m0 (m0 counts 2 free); J2 left m0 0 -> m0;
#     J3: left m0 0-1=-1, m1 7 -> the smallest non-negative, m1
#   equalutil-max: J1 tie -> m0; J2: m0 2/4 > m1 0 -> m1; J3: m1 2/8 < 2/4 -> m1
#   biggestfree-max: J1 m1 (8); J2 m1 (6 > 4); J3: m0 4 = m1 4 -> m0
@pytest.mark.parametrize(
    ("select", "machines"),
    [
        ("bestfit-free", (0, 0, 1)),
        ("biggestfree-free", (1, 1, 0)),
        ("equalutil-free", (0, 1, 1)),
        ("earliest", (0, 0, 1)),
        ("bestfit-max", (0, 0, 1)),
        ("equalutil-max", (0, 1, 1)),
        ("biggestfree-max", (1, 1, 0)),
    ],
)
@pytest.mark.parametrize("scheduler", ["fcfs", "easy", "cons"])
def test_selection_strategies(select: str, machines: tuple[int, ...], scheduler: str) -> None:
    _, _, jobs = run_grid("central", [4, 8], three_small(), scheduler=scheduler, select=select)
    assert table(jobs) == {i + 1: (m, 0, 100) for i, m in enumerate(machines)}


@pytest.mark.parametrize("select", ["random-free", "random-max"])
def test_random_selection_is_seeded(select: str) -> None:
    got = {
        seed: table(run_grid("central", [4, 8], three_small(), seed=seed, select=select)[2])
        for seed in range(6)
    }
    again = table(run_grid("central", [4, 8], three_small(), seed=3, select=select)[2])
    assert again == got[3]
    assert len({tuple(sorted(t.items())) for t in got.values()}) > 1  # seeds differ
    if select == "random-free":  # M_free: every job starts at once somewhere
        for t in got.values():
            assert all(start == 0 for _, start, _ in t.values())


def blocked_head() -> list:
    # m0 4 nodes, m1 8. J1 w8 100 s, J2 w6 50 s, J3 w2 10 s, all at t=0.
    return [job(1, 0, 8, 100), job(2, 0, 6, 50), job(3, 0, 2, 10)]


# fcfs, bestfit-free: J1 -> m1 (the only machine wide enough) [0,100). J2 (w6) fits
# only m1, busy: the head waits, and J3 does not pass it although m0 is idle.
# t=100: J2 -> m1 [100,150) (m1 free 2); J3: left m0 2, m1 0 -> m1 [100,110).
def test_fcfs_head_waits_nothing_passes() -> None:
    _, _, jobs = run_grid("central", [4, 8], blocked_head(), scheduler="fcfs")
    assert table(jobs) == {1: (1, 0, 100), 2: (1, 100, 150), 3: (1, 100, 110)}


# easy: J2 blocked -> reservation on m1 at 100 (shadow), extra 8-6 = 2. J3 fits m0
# now (not the reserved machine) -> m0 [0,10). J2 m1 [100,150).
# cons: J2 planned on m1 at 100; J3 starts at 0 on m0, the one machine with room now.
# random: every job that can start now starts: J3 on m0 at 0.
@pytest.mark.parametrize("scheduler", ["easy", "cons", "random"])
def test_backfill_passes_blocked_head(scheduler: str) -> None:
    _, _, jobs = run_grid("central", [4, 8], blocked_head(), scheduler=scheduler)
    assert table(jobs) == {1: (1, 0, 100), 2: (1, 100, 150), 3: (0, 0, 10)}


def reservation_case() -> list:
    # m0 and m1 of 4 nodes. J1 w4 100 s, J2 w3 50 s, J3 w4 10 s, J4 w1 100 s,
    # J5 w1 40 s, all at t=0.
    return [
        job(1, 0, 4, 100),
        job(2, 0, 3, 50),
        job(3, 0, 4, 10),
        job(4, 0, 1, 100),
        job(5, 0, 1, 40),
    ]


# easy, bestfit-free. t=0: J1 left m0 0 = m1 0 -> m0 [0,100). J2 -> m1 (m1 free 1).
# J3 (w4) fits nowhere: shadows m0 100 (extra 0), m1 50 (1+3 = 4, extra 0) -> m1 at 50.
# J4 (w1, ends 100 > 50, w1 > extra 0) may not take m1's last node: waits.
# J5 (w1, ends 40 <= 50) backfills on m1 [0,40).
# t=40: J5 ends; J3 still blocked (shadow 50); J4 still would delay it.
# t=50: J2 ends, m1 free 4: J3 -> m1 [50,60); J4 nowhere (m0 busy, m1 full).
# t=60: J3 ends: J4 -> m1 [60,160).
def test_easy_does_not_delay_the_reservation() -> None:
    _, _, jobs = run_grid("central", [4, 4], reservation_case(), scheduler="easy")
    assert table(jobs) == {
        1: (0, 0, 100),
        2: (1, 0, 50),
        3: (1, 50, 60),
        4: (1, 60, 160),
        5: (1, 0, 40),
    }


# fcfs: t=0 J1 m0, J2 m1, J3 blocked: stop. t=50 J3 -> m1 [50,60), J4 blocked (m1 full).
# t=60: J4: left m1 3 (m0 busy) -> m1 [60,160); J5 -> m1 [60,100).
def test_fcfs_reservation_case() -> None:
    _, _, jobs = run_grid("central", [4, 4], reservation_case(), scheduler="fcfs")
    assert table(jobs) == {
        1: (0, 0, 100),
        2: (1, 0, 50),
        3: (1, 50, 60),
        4: (1, 60, 160),
        5: (1, 60, 100),
    }


# cons: t=0 J1 m0, J2 m1. J3 planned on m1 at 50 (earliest of m0 100, m1 50), [50,60).
# J4 (w1, 100 s): m0 full until 100; m1 has 1 node now until 50, then J3 takes all 4
# -> earliest on m1 is 60, on m0 100 -> planned m1 [60,160).
# J5 (w1, 40 s): m1 1 node [0,40) is free around J3's plan -> starts now on m1.
# Then as planned: J3 m1 [50,60), J4 m1 [60,160).
def test_conservative_reservation_case() -> None:
    _, _, jobs = run_grid("central", [4, 4], reservation_case(), scheduler="cons")
    assert table(jobs) == {
        1: (0, 0, 100),
        2: (1, 0, 50),
        3: (1, 50, 60),
        4: (1, 60, 160),
        5: (1, 0, 40),
    }


# fcfs with an M_max strategy: the machine is chosen at arrival and the job waits
# for it. bestfit-max on m0 (4) and m1 (8): J1 w4 100 s -> left m0 0, m1 4 -> m0.
# J2 w2 at t=1, 10 s: m0 counts 0 free -> left -2; m1 left 6 -> m1, starts at 1.
# J3 w4 at t=2 10 s: m0 counts 0 -> left -4; m1 counts 6 -> left 2 -> m1 [2,12).
def test_max_strategy_commits_at_arrival() -> None:
    jobs = [job(1, 0, 4, 100), job(2, 1, 2, 10), job(3, 2, 4, 10)]
    _, _, out = run_grid("central", [4, 8], jobs, scheduler="fcfs", select="bestfit-max")
    assert table(out) == {1: (0, 0, 100), 2: (1, 1, 11), 3: (1, 2, 12)}


class _Running:
    """A machine view that holds only running jobs' estimated ends and widths."""

    def __init__(self, running: list[tuple[int, int]]) -> None:
        self.now = 0
        self._running = running

    def running_ends(self) -> list[int]:
        return [end for end, _ in self._running]

    def running_widths(self) -> list[int]:
        return [w for _, w in self._running]

    def running_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return running_arrays_of(self)


def test_the_shadow_counts_every_job_ending_at_the_shadow_time() -> None:
    # 6 nodes busy until 100 (a 2-node and a 4-node job), none free; a 4-node job's
    # reservation is at 100 with 2 extra nodes, whichever of the two is listed first.
    layer = make_grid("central", {"scheduler": "easy"}, [("m0", 6)])
    for running in ([(100, 4), (100, 2)], [(100, 2), (100, 4)]):
        layer.attach([_Running(running)])  # type: ignore[list-item]
        assert layer.shadow(0, 4, 0, []) == (100, 2)
        assert layer.shadow(0, 4, 0, [(150, 1)]) == (100, 2)
        assert layer.shadow(0, 7, 0, []) is None  # more than the nodes in service
