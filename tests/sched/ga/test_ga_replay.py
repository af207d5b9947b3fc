"""Whole replays with the ga policy: the same for a seed, FCFS-EASY without utility
functions, and its parameters on the command line; and longer searches that must find
better orders than their seeds. (The mutation run of the ga modules leaves this file
out: its unit tests cover the policy and the search in a fraction of the time.)"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
from test_ga import random_problem

from batchd.cli import main
from batchd.replay import ReplayOptions, run_replay
from batchd.sched.ga.search import search


def write_trace(path: Path, n: int = 120, seed: int = 4, utility: bool = True) -> Path:
    """A small trace on 32 nodes, busy enough for queues to form, with utility functions."""
    rng = random.Random(seed)
    lines = ["; MaxNodes: 32"]
    t = 0
    for i in range(1, n + 1):
        t += rng.randint(0, 400)
        width = rng.choice([1, 2, 4, 8, 16, 32])
        est = rng.choice([300, 900, 1800, 3600])
        run = rng.randint(1, est)
        tail = ""
        if utility:
            start = round(rng.uniform(1, 100) * width * est / 60, 2)
            deadline = rng.randint(est, 6 * est)
            tail = f" utility=0:{start},{deadline // 2}:{round(start / 2, 2)},{deadline}:0"
            tail += f" priority_class={rng.randint(0, 3)}"
        lines.append(f"{i} {t} -1 {run} {width} -1 -1 {width} {est} -1 1 1 1 -1 1 -1 -1 -1{tail}")
    path.write_text("\n".join(lines) + "\n")
    return path


def replay(trace: Path, policy: str, params: dict[str, str], seed: int = 0) -> dict[str, object]:
    result = run_replay(
        ReplayOptions(trace=str(trace), policy=policy, params=params, nodes=32, seed=seed)
    )
    return {
        "starts": {j.id: (j.start, j.end) for j in result.jobs},
        "summary": result.summary,
    }


def test_a_ga_replay_is_the_same_for_a_seed(tmp_path: Path) -> None:
    trace = write_trace(tmp_path / "u.swf")
    params = {"generations": "8", "population": "8"}
    a, b = replay(trace, "ga", params), replay(trace, "ga", params)
    assert a["starts"] == b["starts"]
    ga = a["summary"]["ga"]  # type: ignore[index]
    assert ga["searches"] > 10 and ga["generations"] == 8 * ga["searches"]
    assert ga["budget_stops"] == 0  # no budget in a replay unless one is given
    # The seed parameter and the replay's seed choose the search's random numbers.
    c = replay(trace, "ga", {**params, "seed": "99"})
    d = replay(trace, "ga", params, seed=5)
    assert a["starts"] != c["starts"] or a["starts"] != d["starts"]


def test_ga_without_utility_functions_is_fcfs_easy(tmp_path: Path) -> None:
    # Every order earns 0: nothing is searched and the queue stays in arrival order.
    trace = write_trace(tmp_path / "plain.swf", utility=False)
    ga = replay(trace, "ga", {})
    assert ga["starts"] == replay(trace, "fcfs-easy", {})["starts"]
    assert ga["summary"]["ga"]["searches"] == 0  # type: ignore[index]


def test_the_cli_takes_the_ga_parameters(tmp_path: Path) -> None:
    trace = write_trace(tmp_path / "u.swf")
    out = tmp_path / "s.json"
    argv = ["replay", str(trace), "--nodes", "32", "--policy", "ga", "--summary-json", str(out)]
    argv += ["--param", "generations=3", "--param", "population=6", "--param", "searched=10"]
    assert main(argv) == 0
    summary = json.loads(out.read_text())
    assert summary["policy"] == "ga" and summary["utility"]["aggregate"] > 0
    assert summary["ga"]["avg_jobs"] > 0
    assert main([*argv, "--param", "mutation=2"]) == 2


def test_the_search_finds_better_than_its_seeds_somewhere() -> None:
    # Not a property (a seed order may be the best), but over a few problems the search
    # must find some better order, or it searches nothing.
    better = 0
    for seed in range(6):
        problem = random_problem(seed, n=40)
        result = search(
            problem, size=20, generations=40, mutation=0.1, rng=np.random.default_rng(0)
        )
        better += result.fitness > result.best_seed
    assert better > 0
