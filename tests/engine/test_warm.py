"""The kernels' warm-up (``batchd.engine.warm``): what it compiles is what passes call.

A warm-up that missed a kernel, or called one with other argument types than the
policies do, would leave a compile for the daemon's first pass: after it, planning
random workloads with every policy compiles nothing more.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from batchd.engine import warm
from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.moldable import FIXED, Moldable, Speedup
from batchd.model.utility import Utility
from batchd.sched.registry import make_policy, policy_names
from paths import ROOT


def random_trace(rng: random.Random, nodes: int, n: int) -> list[Job]:
    """Rigid and moldable jobs (some of a fixed runtime), some with a utility function,
    some arriving together."""
    jobs = []
    t = 0
    for i in range(1, n + 1):
        t += rng.choice([0, 0, rng.randint(1, 50)])
        width = rng.randint(1, nodes)
        runtime, estimate = rng.randint(0, 300), rng.randint(1, 300)
        worth = Utility([(0, rng.randint(1, 9)), (rng.randint(10, 900), 0)])
        utility = worth if rng.random() < 0.7 else None
        if rng.random() < 0.7:
            speed = (
                FIXED
                if rng.random() < 0.2
                else Speedup("downey", rng.uniform(1, 2 * nodes), rng.uniform(0, 2))
            )
            mold = Moldable(
                rng.randint(1, width), rng.randint(width, nodes), speed, width, runtime, estimate
            )
            jobs.append(Job(i, t, width, estimate, runtime, utility=utility, mold=mold))
        else:
            jobs.append(Job(i, t, width, estimate, runtime, utility=utility))
    return jobs


def signatures() -> dict[str, int]:
    return {
        f"{module.__name__}.{d.__name__}": len(d.signatures)  # type: ignore[attr-defined]
        for unit in warm.UNITS
        for module in warm.modules(unit)
        for d in warm._dispatchers(module)
    }


def test_after_the_warm_up_no_policy_compiles_a_kernel() -> None:
    for unit in warm.UNITS:
        warm.warm(unit)
    before = signatures()
    runs: list[tuple[str, dict[str, str]]] = [(name, {}) for name in policy_names()]
    runs[runs.index(("ga", {}))] = ("ga", {"generations": "3", "population": "6"})
    runs += [("dynp", {"quality": quality}) for quality in ("art", "awt", "ms")]
    for name, params in runs:
        for seed, nodes in ((1, 5), (2, 16), (3, 64)):
            engine = Engine(Grid([Machine("m", nodes)]), [make_policy(name, params)])
            jobs = random_trace(random.Random(seed), nodes, 40)
            engine.load(jobs)
            for t in (jobs[5].submit, jobs[20].submit, jobs[-1].submit):
                engine.run(until=t)
                m = engine.machines[0]
                m.policy.planned_starts(m)
            engine.run()
    assert signatures() == before


def test_a_policy_needs_the_profile_unit_and_its_own() -> None:
    assert warm.units_for(["fcfs-easy"]) == ["profile"]
    assert warm.units_for(["ga"]) == ["profile", "ga"]
    assert warm.units_for(["moldable-efficiency", "dynp"]) == ["profile", "fairshare"]
    assert warm.units_for(["a-site-policy"]) == ["profile"]


def run_warm(cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    return subprocess.run(
        [sys.executable, "-m", "batchd.engine.warm", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )


CACHED = "from batchd.engine import warm; print(warm.cached('moldable'))"


def test_a_unit_counts_as_cached_once_it_is_compiled(tmp_path: Path) -> None:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))

    def cached() -> str:
        out = subprocess.run(
            [sys.executable, "-c", CACHED], env=env, capture_output=True, text=True, check=True
        )
        return out.stdout.strip()

    assert cached() == "False"
    done = run_warm(tmp_path, "--nice", "moldable")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("moldable ")
    assert cached() == "True"


def test_an_unknown_unit_is_refused_by_name(tmp_path: Path) -> None:
    done = run_warm(tmp_path, "profile", "bogus")
    assert done.returncode == 2
    assert "unknown kernel unit 'bogus'" in done.stderr
    assert done.stdout == ""  # refused before anything is compiled


@pytest.mark.parametrize("unit", list(warm.UNITS))
def test_each_unit_names_modules_with_kernels(unit: str) -> None:
    assert all(warm._dispatchers(m) for m in warm.modules(unit))


def test_batchd_warm_warms_every_unit_or_those_named(capsys: pytest.CaptureFixture[str]) -> None:
    from batchd.cli import main

    assert main(["warm"]) == 0
    assert [line.split(":")[0] for line in capsys.readouterr().out.splitlines()] == list(warm.UNITS)
    assert main(["warm", "ga", "bogus"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "'bogus' is not a kernel unit" in err
