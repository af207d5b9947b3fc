"""The summary's utility object (Lee's utility paper, sec. 3), computed by hand for three jobs."""

from __future__ import annotations

import pytest

from batchd.metrics.utility import utility_summary
from batchd.model.job import Job, TraceLine
from batchd.model.utility import Utility


def ran(jid: int, start: int, end: int, utility: Utility | None, decay: str = "") -> Job:
    job = Job(id=jid, submit=0, width=1, estimate=end - start, runtime=end - start)
    job.start, job.end, job.utility = start, end, utility
    job.trace = TraceLine((), (f"utility_decay={decay}",) if decay else ())
    return job


def test_utility_summary_by_hand() -> None:
    # J1 ends at 100 of a line from 1000 at 0 to 0 at 3600: earns 1000 - 100/3.6 =
    # 972.22 (97.22 %), waited 0, expansion 1, bounded slowdown 1.
    # J2 ends at 55, after its last point (20): earns 0 of 200, waited 50, ran 5:
    # expansion 55/5 = 11, bounded slowdown 55/max(5, 10) = 5.5.
    # J3 has no function: left out.
    jobs = [
        ran(1, 0, 100, Utility([(0, 1000), (3600, 0)]), "expected-linear"),
        ran(2, 50, 55, Utility([(0, 200), (10, 100), (20, 0)]), "step"),
        ran(3, 0, 10, None),
    ]
    out = utility_summary(jobs)
    assert out is not None
    approx = pytest.approx
    assert out["jobs"] == 2
    assert out["aggregate"] == approx(1000 - 100 / 3.6, abs=1e-6)
    assert out["start_values"] == 1200
    top = 100 - 100 / 36  # 97.22 %
    assert out["earned_percent"] == approx(
        {"p25": top * 0.25, "p50": top * 0.5, "p75": top * 0.75, "p98": top * 0.98, "p100": top},
        abs=1e-5,
    )
    assert out["wait"] == approx({"p25": 12.5, "p50": 25, "p75": 37.5, "p98": 49, "p100": 50})
    assert out["expansion"] == approx({"p25": 3.5, "p50": 6, "p75": 8.5, "p98": 10.8, "p100": 11})
    assert out["bsld10"] == approx(3.25)
    assert sorted(out["by_decay"]) == ["expected-linear", "step"]
    step = out["by_decay"]["step"]
    assert (step["jobs"], step["aggregate"], step["earned_percent"]["p100"]) == (1, 0, 0)


def test_no_function_no_object() -> None:
    assert utility_summary([ran(1, 0, 10, None)]) is None
