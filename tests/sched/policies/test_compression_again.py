"""Conservative policies that compress give the same schedule whether each compression
is made from the last one (``KeptCompression``) or from nothing (``Profile.compress``).

Random workloads where most jobs end before their estimate (every such end re-plans),
some are withdrawn and some arrive in the same second as ends, run through each
compressing policy twice: as built, and with the kept compression replaced by the
plain full one. Every job's start, end and first promised start must agree.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.states import JobState
from batchd.sched.core.compression import Gains, KeptCompression
from batchd.sched.core.profile import Profile
from batchd.sched.policies.conservative import ConservativePolicy, check_profile
from batchd.sched.registry import make_policy

POLICIES: list[tuple[str, dict[str, Any]]] = [
    ("fcfs-cons", {}),  # guarded: a rebuild, or a compression when it would make one late
    ("fcfs-cons", {"replan": "compress"}),
    ("sjf-cons", {"replan": "compress"}),
    ("ljf-cons", {"replan": "guarded"}),
]


def workload(seed: int, nodes: int, kill: bool) -> list[Job]:
    """160 jobs; without kill, one in ten runs past its estimate."""
    rng = random.Random(seed)
    jobs = []
    t = 0
    for i in range(1, 161):
        t += rng.choice([0, 0, 1, 3, 10, 40])
        width = rng.randint(1, nodes)
        estimate = rng.choice([10, 30, 60, 120, 600, 1800])
        runtime = estimate if rng.random() < 0.2 else rng.randint(1, estimate)
        if not kill and rng.random() < 0.1:
            runtime = estimate + rng.randint(1, estimate)
        jobs.append(Job(i, t, width, estimate, runtime))
    return jobs


def schedule(
    name: str, params: dict[str, Any], seed: int, nodes: int, kill: bool
) -> tuple[list[tuple[int, int, int]], int]:
    """Each job's (start, end, first promised start), and the compressions made."""
    jobs = workload(seed, nodes, kill)
    policy = make_policy(name, params)
    assert isinstance(policy, ConservativePolicy)
    engine = Engine(Grid([Machine("m", nodes)]), [policy], kill=kill)
    engine.load(jobs)
    gone = random.Random(seed + 1).sample(jobs, 8)
    for job in gone:  # withdrawn while they wait, if they still do
        engine.call_at(job.submit + 5, withdrawal(engine, job))
    engine.run()
    return [(j.start, j.end, j.result.submit_plan) for j in jobs], policy.counts.compressions


def withdrawal(engine: Engine, job: Job) -> Callable[[], None]:
    def withdraw() -> None:
        if job.state is JobState.QUEUED:
            engine.withdraw(job)

    return withdraw


def compressed_afresh(
    self: KeptCompression,
    profile: Profile,
    gains: Gains,
    arrays: tuple[np.ndarray, np.ndarray],
    held: np.ndarray,
    base: Profile,
    now: int,
) -> np.ndarray:
    self.made_on(base)
    return profile.compress(*arrays, np.maximum(held, now), now)


@pytest.mark.parametrize(("name", "params"), POLICIES, ids=lambda p: str(p) if p else "")
@pytest.mark.parametrize("kill", [True, False], ids=["kill", "overrun"])
@pytest.mark.parametrize("seed", range(16))
def test_compressions_made_again_give_the_schedule_of_ones_made_afresh(
    name: str, params: dict[str, Any], kill: bool, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    nodes = [8, 32, 128][seed % 3]
    again, compressions = schedule(name, params, seed, nodes, kill)
    assert compressions > 0
    monkeypatch.setattr(KeptCompression, "compress", compressed_afresh)
    assert (again, compressions) == schedule(name, params, seed, nodes, kill)


def test_a_profile_not_laid_out_as_the_plan_is_refused() -> None:
    # The check the tests run every compression through: 4 nodes, one job of 2 nodes
    # and 10 s held at 0 is the profile below; held at 5, it is not.
    base = Profile(4, 0)
    profile = base.copy()
    profile.reserve(0, 10, 2)
    arrays = (np.array([2]), np.array([10]))
    check_profile(profile, base, arrays, np.array([0]))
    with pytest.raises(AssertionError, match="is not the one laid out afresh"):
        check_profile(profile, base, arrays, np.array([5]))
