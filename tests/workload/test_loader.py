"""Turning SWF traces into jobs, shrinking submit times and the synthetic workload."""

from __future__ import annotations

import math

import pytest

from batchd.model.job import Job
from batchd.model.states import JobState
from batchd.workload import (
    SKIP_REASONS,
    Workload,
    load_swf,
    shrink_submits,
    synthetic_header,
    synthetic_jobs,
)
from batchd.workload.synthetic import ROUND_ESTIMATES
from paths import DATA, TRACES

SWF_OK = DATA / "swf_ok.swf"


def _shape(job: Job) -> tuple[int, int, int, int, int, str, str]:
    return (job.id, job.submit, job.width, job.estimate, job.runtime, job.user, job.queue)


# --------------------------------------------------------------------------------------------
# load_swf


def test_load_fallbacks_order_and_skips() -> None:
    wl = load_swf(SWF_OK, nodes=8)
    assert isinstance(wl, Workload)
    assert [_shape(j) for j in wl.jobs] == [
        (1, 0, 4, 200, 100, "3", "2"),
        (3, 5, 1, 20, 30, "3", "0"),  # submitted before job 2 in a non-monotone file
        (2, 10, 2, 50, 50, "4", ""),  # width from field 5, estimate from the runtime
        (7, 10, 3, 900, 13, "7", "1"),  # 10.4 and 12.6 rounded; ties keep file order
    ]
    # job 4 has width 0 and runtime -1: counted under the first failing check only
    assert wl.skipped == {"width<=0": 1, "runtime<0": 1, "wider_than_machine": 1}
    assert tuple(wl.skipped) == SKIP_REASONS
    assert wl.header is not None and wl.header.max_nodes == 8
    assert wl.source == str(SWF_OK)
    job = wl.jobs[0]
    assert job.trace is not None
    assert job.trace.fields == (1, 0, 5, 100, 4, 90.5, -1, 4, 200, -1, 1, 3, 1, -1, 2, -1, -1, -1)
    assert job.state is JobState.QUEUED
    assert (job.start, job.end, job.units, job.result.killed) == (-1, -1, [], False)
    assert all(type(v) is int for j in wl.jobs for v in _shape(j)[:5])


def test_skip_keys_always_present() -> None:
    wl = load_swf(SWF_OK, nodes=16)
    assert wl.skipped == {"width<=0": 1, "runtime<0": 1, "wider_than_machine": 0}
    assert 6 in {j.id for j in wl.jobs}
    none = load_swf(SWF_OK, nodes=16, first=3)
    assert none.skipped == dict.fromkeys(SKIP_REASONS, 0)


@pytest.mark.parametrize(
    ("first", "ids", "skipped"),
    [
        (0, [], (0, 0, 0)),
        (3, [1, 3, 2], (0, 0, 0)),
        (5, [1, 3, 2], (1, 1, 0)),  # counted before skipping
        (6, [1, 3, 2], (1, 1, 1)),
        (100, [1, 3, 2, 7], (1, 1, 1)),
    ],
)
def test_first_counts_job_lines(first: int, ids: list[int], skipped: tuple[int, ...]) -> None:
    wl = load_swf(SWF_OK, nodes=8, first=first)
    assert [j.id for j in wl.jobs] == ids
    assert tuple(wl.skipped[r] for r in SKIP_REASONS) == skipped


def test_perfect_estimates() -> None:
    wl = load_swf(SWF_OK, nodes=8, perfect_estimates=True)
    assert [(j.estimate, j.runtime) for j in wl.jobs] == [(100, 100), (30, 30), (50, 50), (13, 13)]


def test_load_with_shrink() -> None:
    wl = load_swf(SWF_OK, nodes=8, shrink=0.5)
    assert [(j.id, j.submit) for j in wl.jobs] == [(1, 0), (3, 2), (2, 5), (7, 5)]


def test_load_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        load_swf(SWF_OK, nodes=0)
    with pytest.raises(ValueError):
        load_swf(SWF_OK, nodes=8, shrink=0.0)


# --------------------------------------------------------------------------------------------
# shrink_submits


def _jobs_at(*submits: int) -> list[Job]:
    return [Job(id=i, submit=s, width=1, estimate=60, runtime=30) for i, s in enumerate(submits)]


def test_shrink_hand_example() -> None:
    jobs = _jobs_at(100, 110, 133)
    shrink_submits(jobs, 0.5)
    assert [j.submit for j in jobs] == [100, 105, 116]  # 133 -> 100 + floor(16.5)


def test_shrink_uses_minimum_submit_as_origin() -> None:
    jobs = _jobs_at(133, 100, 110)
    shrink_submits(jobs, 0.5)
    assert [j.submit for j in jobs] == [116, 100, 105]


def test_shrink_is_exact() -> None:
    # 90 * 0.7 is 62.99999999999999 in binary floating point; the true product is 63.
    assert math.floor(90 * 0.7) == 62
    jobs = _jobs_at(1000, 1090, 1010, 1003)
    shrink_submits(jobs, 0.7)
    assert [j.submit for j in jobs] == [1000, 1063, 1007, 1002]
    stretched = _jobs_at(0, 3, 10)
    shrink_submits(stretched, 2.5)
    assert [j.submit for j in stretched] == [0, 7, 25]


def test_shrink_one_leaves_times_unchanged() -> None:
    submits = [5, 17, 17, 99991, 123456789]
    jobs = _jobs_at(*submits)
    shrink_submits(jobs, 1.0)
    assert [j.submit for j in jobs] == submits
    shrink_submits([], 0.5)  # nothing to do


@pytest.mark.parametrize("factor", [0.0, -0.5, math.nan, math.inf])
def test_shrink_rejects_bad_factor(factor: float) -> None:
    with pytest.raises(ValueError):
        shrink_submits(_jobs_at(1, 2), factor)


# --------------------------------------------------------------------------------------------
# synthetic_jobs


def test_synthetic_deterministic() -> None:
    a = synthetic_jobs(300, nodes=64, seed=7)
    b = synthetic_jobs(300, nodes=64, seed=7)
    c = synthetic_jobs(300, nodes=64, seed=8)
    assert [_shape(j) for j in a] == [_shape(j) for j in b]
    assert [_shape(j) for j in a] != [_shape(j) for j in c]


@pytest.mark.parametrize("nodes", [1, 5, 64, 100])
def test_synthetic_shape(nodes: int) -> None:
    jobs = synthetic_jobs(500, nodes=nodes, seed=1)
    assert [j.id for j in jobs] == list(range(1, 501))
    submits = [j.submit for j in jobs]
    assert submits == sorted(submits) and submits[0] >= 0
    assert all(1 <= j.width <= nodes for j in jobs)
    assert all(30 <= j.runtime <= 12 * 3600 for j in jobs)
    assert all(j.estimate in ROUND_ESTIMATES for j in jobs)
    assert all(type(j.submit) is int and type(j.runtime) is int for j in jobs)


def test_synthetic_statistics() -> None:
    nodes = 128
    jobs = synthetic_jobs(3000, nodes=nodes, seed=3)
    overrun = sum(j.runtime > j.estimate for j in jobs) / len(jobs)
    assert 0.01 <= overrun <= 0.06
    widths = [j.width for j in jobs]
    assert widths.count(1) > 0.1 * len(jobs)
    powers = sum(w & (w - 1) == 0 for w in widths)
    assert powers > 0.8 * len(jobs)
    span = jobs[-1].submit - jobs[0].submit
    load = sum(j.width * j.runtime for j in jobs) / (nodes * span)
    assert 0.7 <= load <= 0.9
    day = sum(8 <= (j.submit % 86400) // 3600 < 18 for j in jobs)
    assert day > 0.55 * len(jobs)  # 10 of 24 hours, but the busy ones


def test_synthetic_edge_cases() -> None:
    assert synthetic_jobs(0, nodes=4, seed=1) == []
    assert len(synthetic_jobs(1, nodes=4, seed=1)) == 1
    with pytest.raises(ValueError):
        synthetic_jobs(10, nodes=0, seed=1)


def test_synthetic_header() -> None:
    header = synthetic_header(100, 64, 42)
    assert header.value("Computer") == "batchd synthetic"
    assert header.max_nodes == 64
    assert header.max_procs == 64
    assert "; Note: seed 42" in header.lines


# --------------------------------------------------------------------------------------------
# A real trace


def test_real_kth_trace() -> None:
    if not TRACES.is_dir():
        pytest.skip(f"real traces folder {TRACES} is absent")
    wl = load_swf(TRACES / "KTH-SP2-1996-2.1-cln.swf.gz", nodes=100)
    assert tuple(wl.skipped) == SKIP_REASONS
    assert len(wl.jobs) + sum(wl.skipped.values()) == 28476
    assert wl.skipped["wider_than_machine"] == 0
    assert wl.skipped["width<=0"] == 1  # the one cancelled job (README)
    assert wl.header is not None and wl.header.max_nodes == 100
    assert wl.header.value("Acknowledge") == "Lars Malinowsky"
    submits = [j.submit for j in wl.jobs]
    assert submits == sorted(submits)
    assert all(1 <= j.width <= 100 for j in wl.jobs)
    first = load_swf(TRACES / "KTH-SP2-1996-2.1-cln.swf.gz", nodes=100, first=1000)
    assert len(first.jobs) + sum(first.skipped.values()) == 1000


def test_a_trace_read_without_records_gives_the_same_jobs() -> None:
    """``records=False`` (a replay that writes no SWF) leaves out the record tuples only."""
    if not TRACES.is_dir():
        pytest.skip(f"real traces folder {TRACES} is absent")
    path = TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"
    kept = load_swf(path, nodes=64, first=3000)
    bare = load_swf(path, nodes=64, first=3000, records=False)
    assert all(j.trace is not None and len(j.trace.fields) == 18 for j in kept.jobs)
    assert all(j.trace is None for j in bare.jobs)
    assert [_shape(j) for j in bare.jobs] == [_shape(j) for j in kept.jobs]
    assert bare.skipped == kept.skipped and bare.skipped["wider_than_machine"] > 0
