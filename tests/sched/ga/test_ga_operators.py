"""The genetic operators of Lee's utility paper's scheduler, on short orders worked out by hand:
zipper crossover, swap mutation, selection in proportion to fitness, and the utility
function's value in the compiled fitness."""

from __future__ import annotations

import random

import numpy as np
import pytest

from batchd.model.utility import Utility
from batchd.sched.ga import kernels


def zipper(a: list[int], b: list[int]) -> list[int]:
    child = np.empty(len(a), dtype=np.int64)
    kernels.zipper(
        np.array(a, dtype=np.int64),
        np.array(b, dtype=np.int64),
        child,
        np.empty(len(a), dtype=np.bool_),
    )
    return child.tolist()


# The child takes one job from each parent in turn, the first from a; each parent is a
# queue popped from the front, and a job the child holds already is passed over.
# a = 0 1 2 3 4, b = 1 0 4 3 2: a gives 0; b gives 1; a's next, 1, is held: 2; b's next,
# 0, is held: 4; a's next: 3.
@pytest.mark.parametrize(
    ("a", "b", "child"),
    [
        ([0, 1, 2, 3, 4], [1, 0, 4, 3, 2], [0, 1, 2, 4, 3]),
        # a: 3; b: 0; a: 2; b: 1 (a and b never collide).
        ([3, 2, 1, 0], [0, 1, 2, 3], [3, 0, 2, 1]),
        # a: 0; b: 0 held, 1; a: 1 held, 2; b: 2 held, 3: the same parents, the same order.
        ([0, 1, 2, 3], [0, 1, 2, 3], [0, 1, 2, 3]),
        # a: 4; b: 4 held, 3; a: 3 held, 2; b: 2 held, 1; a: 1 held, 0: reversed parents.
        ([4, 3, 2, 1, 0], [4, 3, 2, 1, 0], [4, 3, 2, 1, 0]),
        # a: 1; b: 2; a: 0; b: 1 held, 0 held, 3 (b passes over two).
        ([1, 0, 2, 3], [2, 1, 0, 3], [1, 2, 0, 3]),
        ([0, 1], [1, 0], [0, 1]),
        # a: 0; b: 1; a: 1 held, 2; b: 0 held, 2 held, 3; a: 3 held, 4; b: 4 held, 5. Each
        # parent goes on from where it stopped (never from its end).
        ([0, 1, 2, 3, 4, 5], [1, 0, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5]),
    ],
)
def test_zipper_crossover_by_hand(a: list[int], b: list[int], child: list[int]) -> None:
    assert zipper(a, b) == child


def test_zipper_children_are_permutations() -> None:
    rng = random.Random(5)
    for k in (2, 3, 7, 40):
        for _ in range(50):
            a, b = rng.sample(range(k), k), rng.sample(range(k), k)
            child = zipper(a, b)
            assert sorted(child) == list(range(k))
            assert child[0] == a[0]


def _breed(
    population: list[list[int]],
    scores: list[float],
    k: int,
    parents: list[tuple[float, float]],
    mutate: list[float],
    swaps: list[tuple[int, int]],
    rate: float,
) -> list[list[int]]:
    pop = np.array(population, dtype=np.int64)
    out = np.empty_like(pop)
    kernels.breed(
        pop,
        np.array(scores, dtype=np.float64),
        k,
        np.array(parents, dtype=np.float64),
        np.array(mutate, dtype=np.float64),
        np.array(swaps, dtype=np.int64),
        rate,
        out,
    )
    return out.tolist()


POPULATION = [[0, 1, 2, 3], [1, 0, 3, 2], [2, 3, 0, 1], [3, 2, 1, 0]]


def test_breeding_by_hand_selection_zipper_swap_and_elite() -> None:
    # Scores 1, 2, 3, 4: cumulative 1, 3, 6, 10; a draw u picks the first individual
    # whose cumulative sum exceeds 10u: 0.05 -> 0, 0.25 -> 1, 0.55 -> 2, 0.95 -> 3.
    # Row 0: the best, individual 3, kept as it is.
    # Child 1: parents 0 and 1: zipper(0123, 1032) = 0 1 2 3; mutates (0.2 < 0.3): swap
    #   positions 0 and 3 -> 3 1 2 0.
    # Child 2: parents 2 and 3: zipper(2301, 3210) = 2 3 0 1; 0.5 >= 0.3: no mutation.
    # Child 3: parents 1 and 2: zipper(1032, 2301) = 1 2 0 3; mutates: swap 1, 2 -> 1 0 2 3.
    got = _breed(
        POPULATION,
        [1, 2, 3, 4],
        4,
        parents=[(0.05, 0.25), (0.55, 0.95), (0.25, 0.55)],
        mutate=[0.2, 0.5, 0.1],
        swaps=[(0, 3), (1, 2), (1, 2)],
        rate=0.3,
    )
    assert got == [[3, 2, 1, 0], [3, 1, 2, 0], [2, 3, 0, 1], [1, 0, 2, 3]]


def test_breeding_searches_the_first_k_and_keeps_the_tail() -> None:
    # k = 3: the zipper and the swap act on positions 0-2; position 3 (job 3, the first
    # job not searched) stays. Child 1: zipper(012, 210) = 0 2 1, swap 0 and 2 -> 1 2 0.
    population = [[0, 1, 2, 3], [2, 1, 0, 3]]
    got = _breed(population, [5, 1], 3, [(0.1, 0.9)], [0.0], [(0, 2)], 0.5)
    assert got == [[0, 1, 2, 3], [1, 2, 0, 3]]


def test_with_no_fitness_anywhere_selection_is_uniform() -> None:
    cumulative = np.zeros(4)
    assert [kernels.pick(cumulative, u) for u in (0.0, 0.3, 0.6, 0.99)] == [0, 1, 2, 3]
    # An individual of fitness 0 is never picked while others have some.
    cumulative = np.cumsum([0.0, 2.0, 0.0, 2.0])
    assert {kernels.pick(cumulative, u / 100) for u in range(100)} == {1, 3}


def test_the_compiled_value_is_the_utility_functions() -> None:
    rng = random.Random(11)
    for _ in range(200):
        n = rng.randint(2, 6)
        times = sorted(rng.sample(range(1, 1000), n - 1))
        values = sorted((round(rng.uniform(0, 500), 2) for _ in range(n)), reverse=True)
        util = Utility(zip([0, *times], values, strict=True))
        t_arr = np.array([p[0] for p in util.points] + [0.0], dtype=np.float64)  # padded
        v_arr = np.array([p[1] for p in util.points] + [0.0], dtype=np.float64)
        for t in (-5, 0, times[0], times[-1], times[-1] + 1, rng.uniform(0, 1100)):
            assert kernels.value_at(t_arr, v_arr, n, t) == util.value_at(t)
    assert kernels.value_at(np.zeros(3), np.zeros(3), 0, 5.0) == 0.0  # no function


def test_of_equal_best_individuals_the_first_is_kept() -> None:
    got = _breed(POPULATION, [4, 1, 4, 2], 4, [(0.1, 0.2)] * 3, [1.0] * 3, [(0, 1)] * 3, 0.0)
    assert got[0] == POPULATION[0]
    got = _breed(POPULATION, [1, 4, 2, 4], 4, [(0.1, 0.2)] * 3, [1.0] * 3, [(0, 1)] * 3, 0.0)
    assert got[0] == POPULATION[1]


def test_selection_is_in_proportion_to_fitness_below_one_too() -> None:
    # Fitness 0, 0.5, 0, 0.5 (total 1): a draw of 0.1 picks the second individual.
    cumulative = np.cumsum([0.0, 0.5, 0.0, 0.5])
    assert [kernels.pick(cumulative, u) for u in (0.1, 0.49, 0.5, 0.99)] == [1, 1, 3, 3]


def test_a_child_mutates_only_below_the_rate() -> None:
    # Child 1: zipper(0123, 0123) = 0123; a mutation draw equal to the rate: no swap.
    population = [[0, 1, 2, 3], [0, 1, 2, 3]]
    assert _breed(population, [1, 1], 4, [(0.1, 0.1)], [0.3], [(0, 3)], 0.3)[1] == [0, 1, 2, 3]
    assert _breed(population, [1, 1], 4, [(0.1, 0.1)], [0.29], [(0, 3)], 0.3)[1] == [3, 1, 2, 0]
