"""The replay summary without numpy gives numpy's figures to the last bit."""

from __future__ import annotations

import random

import numpy as np
import pytest

from batchd.metrics.float_sums import pairwise_sum, percentile
from batchd.metrics.schedule import schedule_metrics
from batchd.model.job import Job


def numpy_summary(jobs: list[Job], nodes: int) -> dict[str, float]:
    """The summary as it was computed with numpy, kept here as the reference."""
    w = np.array([j.width for j in jobs], dtype=np.float64)
    submit = np.array([j.submit for j in jobs], dtype=np.int64)
    start = np.array([j.start for j in jobs], dtype=np.int64)
    end = np.array([j.end for j in jobs], dtype=np.int64)
    wait, resp, run = start - submit, end - submit, end - start
    span = int(end.max() - submit.min())

    def sldww(bound: int) -> float:
        sld = np.maximum(resp, bound) / np.maximum(run, bound)
        return float((w * sld).sum() / w.sum())

    p50, p90, p99 = np.percentile(wait, [50, 90, 99]).tolist()
    return {
        "utilization": float((w * run).sum() / (nodes * span)) if span > 0 else 0.0,
        "makespan": span,
        "awt": float(wait.mean()),
        "art": float(resp.mean()),
        "artww": float((w * resp).sum() / w.sum()),
        "sldww60": sldww(60),
        "sldww300": sldww(300),
        "bsld10": float(np.maximum(1.0, resp / np.maximum(run, 10)).mean()),
        "wait_p50": p50,
        "wait_p90": p90,
        "wait_p99": p99,
    }


def random_schedule(rng: random.Random, n: int) -> list[Job]:
    jobs = []
    for i in range(n):
        submit = rng.randrange(0, 10**7)
        wait = rng.choice([0, rng.randrange(0, 100), int(rng.paretovariate(0.8) * 30)])
        run = rng.choice([0, 1, rng.randrange(1, 50), rng.randrange(1, 300_000)])
        job = Job(id=i, submit=submit, width=rng.randrange(1, 1025), estimate=run, runtime=run)
        job.start, job.end = submit + wait, submit + wait + run
        jobs.append(job)
    return jobs


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 127, 128, 129, 300, 1000, 8193, 28_476])
def test_summary_equals_numpy_bit_for_bit(n: int) -> None:
    rng = random.Random(n)
    for _ in range(3 if n < 5000 else 1):
        jobs = random_schedule(rng, n)
        got = schedule_metrics(jobs, 1024)
        want = numpy_summary(jobs, 1024)
        for key, value in want.items():
            assert got[key] == value, (key, got[key], value)  # equal, not approximately


def test_pairwise_sum_follows_numpy_blocks() -> None:
    rng = random.Random(7)
    for n in [0, 1, 5, 8, 15, 16, 100, 128, 129, 255, 256, 257, 1000, 4099, 70_001]:
        values = [rng.random() * 10 ** rng.randrange(0, 9) for _ in range(n)]
        assert pairwise_sum(values) == float(np.array(values, dtype=np.float64).sum())
    # A plain left-to-right sum differs here, so the test tells the two apart.
    values = [rng.random() * 10 ** rng.randrange(0, 9) for _ in range(5000)]
    left_to_right = 0.0
    for v in values:
        left_to_right += v
    assert pairwise_sum(values) == float(np.array(values).sum()) != left_to_right


def test_percentile_interpolates_as_numpy() -> None:
    rng = random.Random(3)
    for n in [1, 2, 3, 10, 99, 100, 101, 1001]:
        values = sorted(rng.randrange(0, 10**6) for _ in range(n))
        for p in (0, 1, 50, 90, 99, 100):
            assert percentile(values, p) == float(np.percentile(values, p)), (n, p)
    assert percentile([0, 10], 50) == 5.0
    assert percentile([0, 10, 20, 30], 90) == 27.0
