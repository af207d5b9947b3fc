"""The random numbers a generation of the genetic search draws, and what it hands the
breeding loop: two parent draws and one mutation draw per child, and a swap of two
different positions among the searched jobs. Recorded from one search on a small
problem (the breeding loop itself is tested by hand in test_ga_operators.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from batchd.model.job import Job
from batchd.model.utility import Utility
from batchd.sched.ga import kernels as ga_kernels
from batchd.sched.ga.problem import SEEDS, Problem
from batchd.sched.ga.search import first_generation, search


def problem(n: int = 6, k: int = 5) -> Problem:
    jobs = [
        Job(id=i + 1, submit=0, width=1 + i % 3, estimate=10 + i, runtime=10 + i,
            utility=Utility.parse(f"0:{10 * (i + 1)},{40 + i}:0"))
        for i in range(n)
    ]  # fmt: skip
    return Problem.build(0, 4, [], [], jobs, k)


class Recorder:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def breed(self, population: np.ndarray, scores: np.ndarray, k: int, parents: np.ndarray,
              mutate: np.ndarray, swaps: np.ndarray, rate: float, out: np.ndarray) -> None:  # fmt: skip
        self.calls.append(
            {"k": k, "parents": parents.copy(), "mutate": mutate.copy(), "swaps": swaps.copy(),
             "rate": rate, "scores": scores.copy()}
        )  # fmt: skip
        out[:] = population  # the same generation again


def test_each_generation_draws_for_every_child(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder()
    monkeypatch.setattr(ga_kernels, "breed", recorder.breed)
    p = problem()
    result = search(p, size=7, generations=40, mutation=0.25, rng=np.random.default_rng(3))
    assert result.generations == 40 and result.stopped == "generations"
    assert len(recorder.calls) == 40
    for call in recorder.calls:
        assert call["k"] == 5 and call["rate"] == 0.25
        assert call["parents"].shape == (6, 2) and call["mutate"].shape == (6,)
        assert ((call["parents"] >= 0) & (call["parents"] < 1)).all()
        swaps = call["swaps"]
        assert swaps.shape == (6, 2) and swaps.dtype == np.int64
        assert ((swaps >= 0) & (swaps < 5)).all()
        assert (swaps[:, 0] != swaps[:, 1]).all()  # two different positions
    # Every position pair of the searched jobs is drawn now and then, both ways round.
    pairs = {tuple(s) for call in recorder.calls for s in call["swaps"].tolist()}
    assert pairs == {(i, j) for i in range(5) for j in range(5) if i != j}
    # Each child's second position is drawn on its own, not once per generation.
    assert max(len(set(call["swaps"][:, 1].tolist())) for call in recorder.calls) >= 3


def test_the_best_is_kept_in_row_0_with_its_score(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder()
    monkeypatch.setattr(ga_kernels, "breed", recorder.breed)
    p = problem()
    result = search(p, size=5, generations=2, mutation=0.1, rng=np.random.default_rng(0))
    first, second = recorder.calls
    # The second generation is the first again (the recorder breeds nothing new), with
    # row 0 scored as the best of the first and the others scored afresh.
    assert second["scores"][0] == first["scores"].max()
    assert second["scores"][1:].tolist() == first["scores"][1:].tolist()
    assert result.fitness == first["scores"].max()


def test_the_first_generation_is_the_seed_orders_then_permutations() -> None:
    p = problem(n=6, k=4)
    population = first_generation(p, 9, np.random.default_rng(2))
    assert population.shape == (9, 6)
    assert population[: len(SEEDS)].tolist() == p.seed_orders().tolist()
    for row in population[len(SEEDS) :].tolist():
        assert sorted(row[:4]) == [0, 1, 2, 3]
        assert row[4:] == [4, 5]
    assert len({tuple(r) for r in population[len(SEEDS) :].tolist()}) > 1


class Reversing(Recorder):
    """Keeps row 0 and reverses the order of the other rows."""

    def breed(self, population: np.ndarray, scores: np.ndarray, k: int, parents: np.ndarray,
              mutate: np.ndarray, swaps: np.ndarray, rate: float, out: np.ndarray) -> None:  # fmt: skip
        super().breed(population, scores, k, parents, mutate, swaps, rate, out)
        out[1:] = population[1:][::-1]


def test_every_child_is_scored_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Reversing()
    monkeypatch.setattr(ga_kernels, "breed", recorder.breed)
    p = problem(n=6, k=6)
    search(p, size=8, generations=2, mutation=0.1, rng=np.random.default_rng(4))
    first, second = recorder.calls
    assert len(set(first["scores"][1:].tolist())) > 1
    assert second["scores"][1:].tolist() == first["scores"][1:][::-1].tolist()


def test_a_budget_reached_exactly_stops_the_search() -> None:
    ticks = iter(range(100, 200))
    result = search(problem(), size=4, generations=50, mutation=0.1,
                    rng=np.random.default_rng(0), budget=3.0,
                    clock=lambda: float(next(ticks)))  # fmt: skip
    # Readings: 100 at the start, then 101 and 102 before generations 1 and 2, 103 stops
    # (3 s are the budget), 104 at the end.
    assert (result.generations, result.stopped) == (2, "budget")
    assert result.seconds == 4.0


LATE = 2**53 + 3  # no float64 holds it


def test_fitness_keeps_every_second_of_a_late_submission() -> None:
    def jobs(at: int) -> list[Job]:
        return [
            Job(id=1, submit=at, width=1, estimate=11, runtime=11,
                utility=Utility.parse("0:60,21:0")),
            Job(id=2, submit=at + 1, width=2, estimate=7, runtime=7,
                utility=Utility.parse("0:100,19:0")),
        ]  # fmt: skip

    orders = np.array([[0, 1], [1, 0]], dtype=np.int64)
    early, late = np.empty(2), np.empty(2)
    Problem.build(1, 2, [], [], jobs(0), 5).fitness(orders, early)
    Problem.build(LATE + 1, 2, [], [], jobs(LATE), 5).fitness(orders, late)
    assert late.tolist() == early.tolist()


def test_fitness_sums_the_jobs_after_one_that_can_never_start() -> None:
    # Job 1 is wider than the machine: it never starts and earns nothing; job 2, behind
    # it in the order, starts at 0 and ends at 10, worth 50.
    jobs = [
        Job(id=1, submit=0, width=3, estimate=5, runtime=5, utility=Utility.parse("0:70,100:0")),
        Job(id=2, submit=0, width=1, estimate=10, runtime=10,
            utility=Utility.parse("0:50,100:50,101:0")),
    ]  # fmt: skip
    out = np.empty(1)
    Problem.build(0, 2, [], [], jobs, 2).fitness(np.array([[0, 1]], dtype=np.int64), out)
    assert out.tolist() == [50.0]


def test_jobs_without_a_utility_function_are_worth_nothing() -> None:
    jobs = [
        Job(id=1, submit=0, width=1, estimate=5, runtime=5),
        Job(id=2, submit=0, width=1, estimate=10, runtime=10),
    ]
    problem = Problem.build(0, 2, [], [], jobs, 2)
    out = np.empty(2)
    problem.fitness(np.array([[0, 1], [1, 0]], dtype=np.int64), out)
    assert out.tolist() == [0.0, 0.0]
    assert problem.current_utility().tolist() == [0.0, 0.0]


def test_current_utility_counts_from_each_submission() -> None:
    # now 50: job 1 (submitted at 20, 30 s) would end 60 s after its submission; job 2
    # (submitted at 40, estimate 0: it holds its node 1 s) 11 s after.
    jobs = [
        Job(id=1, submit=20, width=1, estimate=30, runtime=30, utility=Utility.parse("0:100,100:0")),
        Job(id=2, submit=40, width=1, estimate=0, runtime=1, utility=Utility.parse("0:100,100:0")),
    ]  # fmt: skip
    assert Problem.build(50, 2, [], [], jobs, 5).current_utility().tolist() == [40.0, 89.0]


def test_the_rate_seed_divides_by_node_hours_of_at_least_one_second() -> None:
    # Job 1 (arrived first): worth 15 over 2 s on one node; job 2: worth 10 over 1 s.
    # By rate job 2 comes first (10 per node-second against 7.5); by worth, job 1.
    flat = "0:{v},100:{v},101:0"
    jobs = [
        Job(id=1, submit=0, width=1, estimate=2, runtime=2, utility=Utility.parse(flat.format(v=15))),
        Job(id=2, submit=0, width=1, estimate=1, runtime=1, utility=Utility.parse(flat.format(v=10))),
    ]  # fmt: skip
    orders = Problem.build(0, 4, [], [], jobs, 5).seed_orders().tolist()
    assert orders[2] == [1, 0] and orders[3] == [0, 1]
