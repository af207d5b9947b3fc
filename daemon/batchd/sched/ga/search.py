"""The genetic search of one scheduling step (Lee's utility paper, sec. 6).

Generation 0 is the seed's: the four special orders (``problem.SEEDS``) and random
permutations of the searched jobs. Each later generation keeps the best individual and
breeds the others (``kernels.breed``: selection in proportion to fitness, zipper
crossover, one swap with the mutation rate). The answer is the best order of the last
generation; with the best kept, that is the best order seen, so it never scores below
the best seed order.

A time budget stops the search between generations, with the best order so far.
Random numbers come from the generator passed in, a fixed number per generation, so a
search without a budget gives the same order for the same generator state.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from batchd.sched.ga import kernels
from batchd.sched.ga.problem import SEEDS, Problem

Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class SearchResult:
    order: Ints  # the best order found: job indices of the problem, in serving order
    fitness: float  # its aggregate utility
    best_seed: float  # the best of the seed's special orders
    generations: int  # generations bred
    seconds: float  # wall time of the search
    stopped: str  # "generations" (all ran) or "budget" (the time budget ran out)


def first_generation(problem: Problem, size: int, rng: np.random.Generator) -> Ints:
    """The special orders, then random permutations of the searched jobs."""
    population = np.empty((size, problem.n), dtype=np.int64)
    seeds = problem.seed_orders()
    population[: len(SEEDS)] = seeds
    for i in range(len(SEEDS), size):
        population[i, : problem.k] = rng.permutation(problem.k)
        population[i, problem.k :] = seeds[0, problem.k :]
    return population


def search(
    problem: Problem,
    *,
    size: int,
    generations: int,
    mutation: float,
    rng: np.random.Generator,
    budget: float | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> SearchResult:
    """The best order for ``problem`` a population of ``size`` finds in ``generations``
    (or in ``budget`` wall seconds, if that runs out first)."""
    if size < len(SEEDS):
        raise ValueError(f"a population needs at least {len(SEEDS)} orders, got {size}")
    if problem.k < 2:
        raise ValueError(f"a search needs at least two jobs to order, got {problem.k}")
    began = clock()
    k = problem.k
    population = first_generation(problem, size, rng)
    scores = np.empty(size, dtype=np.float64)
    problem.fitness(population, scores)
    best_seed = float(scores[: len(SEEDS)].max())
    bred = np.empty_like(population)
    children = size - 1
    stopped = "generations"
    done = 0
    while done < generations:
        if budget is not None and clock() - began >= budget:
            stopped = "budget"
            break
        parents = rng.random((children, 2))
        mutate = rng.random(children)
        first = rng.integers(0, k, children)
        second = rng.integers(0, k - 1, children)
        second += second >= first  # a different position
        swaps = np.ascontiguousarray(np.stack([first, second], axis=1), dtype=np.int64)
        kernels.breed(population, scores, k, parents, mutate, swaps, mutation, bred)
        scores[0] = scores.max()  # the best, kept in row 0
        population, bred = bred, population
        problem.fitness(population, scores, first=1)
        done += 1
    best = int(np.argmax(scores))
    return SearchResult(
        order=population[best].copy(),
        fitness=float(scores[best]),
        best_seed=best_seed,
        generations=done,
        seconds=clock() - began,
        stopped=stopped,
    )


def warm_up() -> None:
    """Load the compiled loops (from numba's cache on disk, else compiling them) with a
    tiny search: about a second that holds the GIL, which the daemon spends when it builds
    the policy rather than in its first search, beside the event loop."""
    from batchd.model.job import Job
    from batchd.model.utility import Utility

    worth = Utility([(0, 2), (10, 0)])
    jobs = [Job(id=i, submit=0, width=1, estimate=5, runtime=5, utility=worth) for i in (1, 2)]
    problem = Problem.build(0, 1, [], [], jobs, 2)
    search(problem, size=len(SEEDS), generations=1, mutation=1.0, rng=np.random.default_rng(0))
