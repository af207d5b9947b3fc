"""moldable-greedy by hand, its compiled width search against the model, the engine's
check of a moldable placement, and invariants on random moldable traces."""

from __future__ import annotations

import random

import pytest
from moldutil import check_invariants, random_trace

from batchd.engine.core import Engine, PlacementError
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.moldable import FIXED, Moldable, Speedup
from batchd.sched.core.policy import MachineView, Placement, Policy
from batchd.sched.kernels.moldable import scaled
from batchd.sched.registry import make_policy


def _mold_job(jid: int, submit: int, mold: Moldable) -> Job:
    return Job(jid, submit, mold.width, mold.estimate, mold.runtime, mold=mold)


def _run(nodes: int, jobs: list[Job], policy: str = "moldable-greedy") -> Engine:
    engine = Engine(Grid([Machine("m", nodes)]), [make_policy(policy)])
    engine.load(jobs)
    engine.run()
    return engine


def test_greedy_by_hand() -> None:
    # 10 nodes; a rigid job holds 6 until 100. Two jobs with linear speedup (sigma 0,
    # A 10), 100 s on 2 nodes (work 200): the first ends soonest on the 4 free nodes
    # now (50 s, end 50) rather than on 10 at 100 (end 120); the second, at t=1, on
    # those 4 nodes from 50 (end 100), not on 10 from 100 (end 120).
    linear = Speedup("downey", 10, 0)
    rigid = Job(1, 0, 6, 100, 100)
    a = _mold_job(2, 0, Moldable(1, 10, linear, 2, 100, 100))
    b = _mold_job(3, 1, Moldable(1, 10, linear, 2, 100, 100))
    _run(10, [rigid, a, b])
    assert (a.start, a.width, a.runtime, a.end) == (0, 4, 50, 50)
    assert (b.start, b.width, b.runtime, b.end) == (50, 4, 50, 100)
    assert rigid.width == 6 and rigid.end == 100


def test_greedy_takes_the_narrowest_of_equal_ends_and_fixed_jobs_one_node() -> None:
    # Fixed runtime: every width ends at the same time, so the narrowest wins.
    job = _mold_job(1, 0, Moldable(2, 8, FIXED, 4, 30, 30))
    _run(8, [job])
    assert (job.width, job.runtime) == (2, 30)


def test_rigid_policies_run_moldable_jobs_at_their_requested_width() -> None:
    mold = Moldable(1, 10, Speedup("downey", 10, 0), 2, 100, 100)
    for policy in ("fcfs-easy", "fcfs-cons"):
        job = _mold_job(1, 0, mold)
        _run(10, [job], policy)
        assert (job.width, job.runtime, job.end) == (2, 100, 100)


def test_the_kernel_scales_as_the_model() -> None:
    rng = random.Random(4)
    for _ in range(2000):
        width = rng.randint(1, 300)
        a = round(rng.uniform(width, 2 * width), 3)
        sigma = round(rng.uniform(0, 2), 3)
        mold = Moldable(1, 512, Speedup("downey", a, sigma), width, rng.randint(1, 10**6), 1)
        n = rng.randint(1, 512)
        assert scaled(mold.runtime, n, width, False, a, sigma) == mold.runtime_on(n)


class _At(Policy):
    """Starts every waiting job at once with a given width."""

    name = "at"

    def __init__(self, width: int) -> None:
        self.width = width
        self.queue: list[Job] = []

    def job_submitted(self, view: MachineView, job: Job) -> None:
        self.queue.append(job)

    def withdraw(self, view: MachineView, job: Job) -> None:
        self.queue.remove(job)

    def waiting(self) -> list[Job]:
        return list(self.queue)

    def schedule(self, view: MachineView) -> list[Placement]:
        out = [Placement(j, 0, self.width) for j in self.queue]
        self.queue = []
        return out


def test_the_engine_refuses_a_width_outside_the_range_and_a_rigid_job_at_another() -> None:
    mold = Moldable(2, 4, FIXED, 2, 10, 10)
    engine = Engine(Grid([Machine("m", 8)]), [_At(5)])
    engine.load([_mold_job(1, 0, mold)])
    with pytest.raises(PlacementError, match="2-4 nodes"):
        engine.run()
    engine = Engine(Grid([Machine("m", 8)]), [_At(3)])
    engine.load([Job(1, 0, 2, 10, 10)])
    with pytest.raises(PlacementError, match="for 2,"):
        engine.run()


def test_a_requeued_job_waits_again_as_submitted() -> None:
    mold = Moldable(1, 8, Speedup("downey", 8, 0), 2, 100, 120)
    job = _mold_job(1, 0, mold)
    engine = Engine(Grid([Machine("m", 8)]), [_At(8)])
    engine.load([job])
    engine.advance_to(0)
    assert (job.width, job.runtime, job.estimate, len(job.units)) == (8, 25, 30, 8)
    engine.requeue(job)
    assert (job.width, job.runtime, job.estimate, job.units) == (2, 100, 120, [])


@pytest.mark.parametrize("seed", range(6))
def test_invariants_on_random_moldable_traces(seed: int) -> None:
    rng = random.Random(seed)
    nodes = rng.randint(1, 16)
    jobs = random_trace(rng, nodes, 40)
    requested = {j.id: (j.width, j.runtime) for j in jobs}
    engine = _run(nodes, jobs)
    assert len(engine.finished) == len(jobs)
    check_invariants(jobs, requested)
