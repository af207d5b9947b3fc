"""The central grid's pass (fcfs, easy, random): backfilling around the reservation,
its ties, and the shortcuts that must not change what starts. Jobs are (id, submit,
width, runtime), estimate = runtime; tables are id -> (machine, start, end)."""

from __future__ import annotations

import numpy as np
from gridutil import job, run_grid, table

from batchd.sched.core.plans import running_arrays_of
from batchd.sched.grid import make_grid
from batchd.sched.grid.central import CentralGrid


# easy, one machine of 10. t=0: J1 w4 100 s starts (6 free). J2 w8 10 s does not
# fit: reservation at 100 (6 + 4), extra 2. J2b w7 is wider than any idle space:
# skipped, and the jobs behind it still backfill. J3 w3 100 s ends at the shadow
# time itself: starts (3 free), extra still 2. J4 w2 200 s ends after it on the 2
# extra nodes: starts (1 free, extra 0). J5 w1 200 s would delay J2: waits. J6 w1
# 50 s ends before 100: starts. t=100: J2 [100,110). t=110: J2b [110,120), J5
# [110,310).
def test_easy_backfills_around_the_reservation() -> None:
    jobs = [
        job(1, 0, 4, 100),
        job(2, 0, 8, 10),
        job(7, 0, 7, 10),
        job(3, 0, 3, 100),
        job(4, 0, 2, 200),
        job(5, 0, 1, 200),
        job(6, 0, 1, 50),
    ]
    _, _, out = run_grid("central", [10], jobs, scheduler="easy")
    assert table(out) == {
        1: (0, 0, 100),
        2: (0, 100, 110),
        7: (0, 110, 120),
        3: (0, 0, 100),
        4: (0, 0, 200),
        5: (0, 110, 310),
        6: (0, 0, 50),
    }


# One machine of 4: J1 w3 100 s at 0; J2 w1 10 s at 5 takes the one idle node.
def test_one_idle_node_starts_a_one_node_job() -> None:
    for scheduler in ("fcfs", "easy", "random"):
        jobs = [job(1, 0, 3, 100), job(2, 5, 1, 10)]
        _, _, out = run_grid("central", [4], jobs, scheduler=scheduler)
        assert table(out) == {1: (0, 0, 100), 2: (0, 5, 15)}


# easy, m0 and m1 of 4. J1 w3 100 s -> m0 (bestfit: tie, first listed), J2 w3 100 s
# -> m1 (m0 has 1 left). J3 w4 10 s: nodes come back at 100 on both: the reservation
# goes to the first listed, m0. J4 w1 200 s would delay it on m0, not on m1: m1.
def test_reservation_ties_go_to_the_first_listed_machine() -> None:
    jobs = [job(1, 0, 3, 100), job(2, 0, 3, 100), job(3, 0, 4, 10), job(4, 0, 1, 200)]
    _, _, out = run_grid("central", [4, 4], jobs, scheduler="easy")
    assert table(out) == {1: (0, 0, 100), 2: (1, 0, 100), 3: (0, 100, 110), 4: (1, 0, 200)}


def test_random_scheduler_draws_the_order_from_its_seed() -> None:
    def order(seed: int) -> list[int]:
        jobs = [job(i, 0, 4, 10) for i in range(1, 6)]  # one at a time on 4 nodes
        out = run_grid("central", [4], jobs, seed=seed, scheduler="random")[2]
        return [j.id for j in sorted(out, key=lambda j: j.start)]

    orders = {seed: order(seed) for seed in range(8)}
    assert order(3) == orders[3]
    assert len({o[0] for o in orders.values()}) > 1  # not always the first submitted
    assert all(sorted(o) == [1, 2, 3, 4, 5] for o in orders.values())


class View:
    """A machine view with ``free`` idle nodes and running jobs' (end, width)."""

    def __init__(self, free: int, running: list[tuple[int, int]]) -> None:
        self.now = 0
        self.free = free
        self._running = running

    def running_ends(self) -> list[int]:
        return [end for end, _ in self._running]

    def running_widths(self) -> list[int]:
        return [w for _, w in self._running]

    def running_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return running_arrays_of(self)


# m0 has 2 of its 4 nodes out of service (none idle, 2 busy until 100): a 4-node job
# never fits there. m1: 1 idle, 3 busy until 50. J1 w4 is reserved on m1 at 50;
# J2 w1 10 s ends before: starts on m1.
def test_a_machine_where_the_job_never_fits_gets_no_reservation() -> None:
    layer = make_grid("central", {"scheduler": "easy"}, [("m0", 4), ("m1", 4)])
    assert isinstance(layer, CentralGrid)
    layer.attach([View(0, [(100, 2)]), View(1, [(50, 3)])])  # type: ignore[list-item]
    a, b = job(1, 0, 4, 10), job(2, 0, 1, 10)
    layer.submitted(a)
    layer.submitted(b)
    assert [(j.id, start, m) for j, start, m in layer.planned()] == [(1, 50, 1)]
    placed = layer.plan_pass()
    assert [[(p.job.id, p.width) for p in share] for share in placed] == [[], [(2, 1)]]
    assert layer.queue == [a]
