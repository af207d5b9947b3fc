"""Central grids: planned starts (qstat -T), and jobs withdrawn or resumed after a restart.

Events go to the layer directly, on idle machines at second 0; jobs are (id, submit,
width, runtime), estimate = runtime. Planned starts are (job id, start, machine).
"""

from __future__ import annotations

from gridutil import idle_grid, job

from batchd.sched.grid import make_grid
from batchd.sched.grid.central import CentralGrid


def central(sizes: list[int], **params: str) -> CentralGrid:
    layer, _ = idle_grid("central", sizes, **params)
    assert isinstance(layer, CentralGrid)
    return layer


def planned(layer: CentralGrid) -> list[tuple[int, int, int]]:
    return [(j.id, start, m) for j, start, m in layer.planned()]


# fcfs and easy: m0 4, m1 8. J1 w8 100 s can start now only on m1 -> (0, m1); J2 w6
# then fits nowhere: m1 is wide enough alone, its nodes come back at 100 -> (100, m1);
# J3 behind it has no planned start.
def test_fcfs_and_easy_plan_the_head_then_the_first_blocked() -> None:
    for scheduler in ("fcfs", "easy"):
        layer = central([4, 8], scheduler=scheduler)
        for j in (job(1, 0, 8, 100), job(2, 0, 6, 50), job(3, 0, 2, 10)):
            layer.submitted(j)
        assert planned(layer) == [(1, 0, 1), (2, 100, 1)]


# m0 and m1 of 4: J1 w4 100 s and J2 w4 (50 or 100 s) start now on the first listed
# that can (m0, then m1); J3 w4 waits for the machine whose nodes come back first:
# m1 at 50, or on a tie at 100 the first listed, m0.
def test_the_first_blocked_job_goes_where_nodes_come_back_first() -> None:
    layer = central([4, 4], scheduler="fcfs")
    for j in (job(1, 0, 4, 100), job(2, 0, 4, 50), job(3, 0, 4, 10), job(4, 0, 1, 1)):
        layer.submitted(j)
    assert planned(layer) == [(1, 0, 0), (2, 0, 1), (3, 50, 1)]
    layer = central([4, 4], scheduler="easy")
    for j in (job(1, 0, 4, 100), job(2, 0, 4, 100), job(3, 0, 4, 10)):
        layer.submitted(j)
    assert planned(layer) == [(1, 0, 0), (2, 0, 1), (3, 100, 0)]
    # J2 w1 fits beside J1 on m0 (first listed): m0 4 -> 3 free.
    layer = central([4, 4], scheduler="easy")
    for j in (job(1, 0, 3, 100), job(2, 0, 1, 30), job(3, 0, 4, 10)):
        layer.submitted(j)
    assert planned(layer) == [(1, 0, 0), (2, 0, 0), (3, 0, 1)]


def test_random_and_empty_queues_plan_nothing() -> None:
    layer = central([4, 4], scheduler="random")
    layer.submitted(job(1, 0, 1, 10))
    assert planned(layer) == []
    assert planned(central([4, 4], scheduler="fcfs")) == []
    assert planned(central([4, 4], scheduler="cons")) == []
    unattached = make_grid("central", {"scheduler": "fcfs"}, [("m0", 4)])
    assert isinstance(unattached, CentralGrid)
    unattached.queue.append(job(1, 0, 1, 10))  # no views yet: nothing to plan from
    assert unattached.planned() == []


# cons, m0 and m1 of 4: J1 w4 100 s -> m0 at 0 (a tie at 0 goes to the first listed);
# J2 w3 50 s -> m1 at 0; J3 w4 10 s: m0 at 100, m1 at 50 -> m1 at 50; J4 w1 100 s:
# m0 at 100, m1 has 1 node until 50, none until 60 -> m1 at 60; J5 w1 40 s: m1's
# last node until 50 -> m1 at 0.
def test_conservative_plans_every_job() -> None:
    layer = central([4, 4], scheduler="cons")
    for j in (
        job(1, 0, 4, 100),
        job(2, 0, 3, 50),
        job(3, 0, 4, 10),
        job(4, 0, 1, 100),
        job(5, 0, 1, 40),
    ):
        layer.submitted(j)
    assert planned(layer) == [(1, 0, 0), (2, 0, 1), (3, 50, 1), (4, 60, 1), (5, 0, 1)]


def test_withdraw_gives_back_the_nodes_counted_for_the_target() -> None:
    layer = central([4, 8], scheduler="fcfs", select="bestfit-max")
    a, b = job(1, 0, 4, 100), job(2, 0, 2, 100)
    layer.submitted(a)
    layer.submitted(b)
    assert (layer.assigned(a), layer.assigned(b)) == (0, 1)
    assert layer.queued == [4, 2]
    layer.withdraw(a)
    assert layer.queue == [b]
    assert layer.queued == [0, 2]
    assert layer.assigned(a) is None
    free = central([4, 8], scheduler="fcfs")  # M_free: no target, nothing counted
    free.submitted(a)
    free.withdraw(a)
    assert (free.queue, free.queued, free.target) == ([], [0, 0], {})


def test_resume_keeps_the_target_it_had() -> None:
    layer = central([4, 8], scheduler="fcfs", select="bestfit-max")
    a = job(1, 0, 4, 100)
    layer.resume(a, 1)  # bestfit would choose m0: the machine it had stays
    assert (layer.queue, layer.assigned(a), layer.queued) == ([a], 1, [0, 4])
    assert layer.waiting_on(0) == [a]
    assert layer.waiting_on(1) == []
    layer.resume(job(4, 0, 3, 100), 1)  # both count against m1
    assert layer.queued == [0, 7]
    # none, or a machine too narrow for it now: chosen again as at submission (m0)
    for machine in (None, 0):
        again = central([2, 8], scheduler="fcfs", select="bestfit-max")
        b = job(2, 0, 4, 100)
        again.resume(b, machine)
        assert (again.queue, again.assigned(b), again.queued) == ([b], 1, [0, 4])
    # M_free keeps no target
    free = central([4, 8], scheduler="fcfs")
    c = job(3, 0, 4, 100)
    free.resume(c, 1)
    assert (free.queue, free.assigned(c), free.queued) == ([c], None, [0, 0])
