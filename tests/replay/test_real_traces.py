"""Whole real traces through every non-dynP policy: counts, invariants, a sane utilization.

The traces live in ``shared/traces`` beside the repository; without them these tests skip.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from batchd.model.job import Job
from batchd.model.states import JobState
from batchd.replay import ReplayOptions, run_replay
from batchd.sched.registry import policy_names
from paths import TRACES

KTH = TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"

POLICIES = policy_names()

pytestmark = pytest.mark.slow


def check_no_node_overlap(jobs: list[Job], nodes: int) -> None:
    """Sweep start/end events in time order (ends first) with per-node occupancy."""
    events: list[tuple[int, int, int, Job]] = []
    for j in jobs:
        assert len(j.units) == j.width == len(set(j.units)), j.id
        assert all(0 <= n < nodes for n in j.units), j.id
        if j.end > j.start:  # a zero-length job holds its nodes for no time
            events.append((j.start, 1, j.id, j))
            events.append((j.end, 0, j.id, j))
    events.sort(key=lambda e: (e[0], e[1], e[2]))
    owner = [0] * nodes
    for _t, kind, jid, j in events:
        if kind == 1:
            for n in j.units:
                assert owner[n] == 0, f"job {jid} starts on node {n} held by job {owner[n]}"
                owner[n] = jid
        else:
            for n in j.units:
                assert owner[n] == jid
                owner[n] = 0
    assert not any(owner)


@pytest.fixture(scope="module")
def kth() -> Path:
    if not KTH.is_file():
        pytest.skip(f"real traces not found: {KTH} (shared/traces is not beside the repository)")
    return KTH


@pytest.mark.parametrize("policy", POLICIES)
def test_kth_sp2_whole_trace(kth: Path, policy: str) -> None:
    result = run_replay(ReplayOptions(trace=str(kth), policy=policy, nodes=100))
    summary, jobs = result.summary, result.jobs
    assert summary["jobs"] == len(jobs) == 28475
    assert summary["skipped"] == {"width<=0": 1, "runtime<0": 0, "wider_than_machine": 0}
    assert sum(summary["skipped"].values()) == 1
    assert len({j.id for j in jobs}) == len(jobs)
    killed = 0
    for j in jobs:
        assert j.state is JobState.FINISHED
        assert j.submit <= j.start <= j.end, j.id
        assert j.end - j.start == min(j.runtime, j.estimate), j.id
        assert j.result.killed == (j.runtime > j.estimate), j.id
        killed += j.result.killed
    assert summary["killed"] == killed
    check_no_node_overlap(jobs, 100)
    assert 0.5 < summary["utilization"] < 1
    if policy == "fcfs":
        order = sorted(jobs, key=lambda j: (j.submit, j.id))
        assert all(a.start <= b.start for a, b in zip(order, order[1:], strict=False))
    if policy == "fcfs-cons":
        assert all(j.start <= j.result.submit_plan for j in jobs)
    if policy.startswith("dynp"):
        started = summary["dynp"]["jobs_started"]
        assert sum(started.values()) == 28475
        assert started == {
            p: sum(j.result.started_by == p for j in jobs) for p in ("FCFS", "SJF", "LJF")
        }
        if policy == "dynp":
            assert sum(summary["dynp"]["cases"].values()) == summary["dynp"]["decider_calls"]


@pytest.mark.parametrize("policy", POLICIES)
def test_kth_sp2_without_killing(kth: Path, policy: str) -> None:
    """--no-kill: about 1.7% of the jobs outrun their estimates and every plan must cope."""
    result = run_replay(ReplayOptions(trace=str(kth), policy=policy, nodes=100, kill=False))
    jobs = result.jobs
    assert result.summary["jobs"] == len(jobs) == 28475
    assert result.summary["killed"] == 0
    overran = 0
    for j in jobs:
        assert j.state is JobState.FINISHED
        assert j.submit <= j.start and j.end - j.start == j.runtime, j.id
        overran += j.runtime > j.estimate
    assert overran > 0
    check_no_node_overlap(jobs, 100)
    assert 0.5 < result.summary["utilization"] < 1
