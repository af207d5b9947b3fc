"""The machine selection strategies (Hamscher et al.'s grid paper, sec. 4.1) on plain lists.

``choose(strategy, width, candidates, free, nodes, rng)``: every expected machine is
worked out in the comment beside it ("left" is free - width, "util" (nodes - free) /
nodes).
"""

from __future__ import annotations

import random

import pytest

from batchd.sched.grid.select import choose, parse_strategy, strategy_names


def pick(strategy: str, width: int, free: list[int], nodes: list[int], cands: list[int]) -> int:
    return choose(strategy, width, cands, free, nodes, random.Random(0))


def test_strategy_names_and_parsing() -> None:
    assert strategy_names() == [
        "biggestfree-free",
        "biggestfree-max",
        "bestfit-free",
        "bestfit-max",
        "equalutil-free",
        "equalutil-max",
        "random-free",
        "random-max",
        "earliest",
    ]
    assert parse_strategy("earliest") == ("earliest", "max")
    assert parse_strategy("bestfit-free") == ("bestfit", "free")
    assert parse_strategy("random-max") == ("random", "max")
    expected = f"^expected one of {', '.join(strategy_names())}$"
    for bad in ("bestfit", "bestfit-all", "best-free", "earliest-max", "", "bestfit-free-x"):
        with pytest.raises(ValueError, match=expected):
            parse_strategy(bad)


def test_a_single_candidate_is_taken_whatever_the_strategy() -> None:
    # Machine 2 alone: no strategy looks at the lists (an unknown one neither).
    for strategy in ("biggestfree", "bestfit", "equalutil", "random", "nonsense"):
        assert pick(strategy, 3, [9, 9, 0], [9, 9, 9], [2]) == 2


def test_biggestfree() -> None:
    # free 2, 5, 5, 1: the most is 5, on machines 1 and 2 -> the first listed, 1.
    assert pick("biggestfree", 1, [2, 5, 5, 1], [8, 8, 8, 8], [0, 1, 2, 3]) == 1
    # candidates 3, 0 (in that order): free 1 and 2 -> machine 0.
    assert pick("biggestfree", 1, [2, 5, 5, 1], [8, 8, 8, 8], [3, 0]) == 0
    # a tie between the first two candidates keeps the first.
    assert pick("biggestfree", 1, [4, 4, 3], [8, 8, 8], [0, 1, 2]) == 0
    assert pick("biggestfree", 1, [3, 4, 4], [8, 8, 8], [2, 1]) == 2


def test_bestfit_over_free_machines() -> None:
    # width 2; free 6, 3, 2, 4 -> left 4, 1, 0, 2: the fewest, machine 2.
    assert pick("bestfit", 2, [6, 3, 2, 4], [8, 8, 8, 8], [0, 1, 2, 3]) == 2
    # left 1, 4, 1: a tie between machines 0 and 2 -> the first listed, 0.
    assert pick("bestfit", 2, [3, 6, 3], [8, 8, 8], [0, 1, 2]) == 0
    # the first candidate is the best one: it stays.
    assert pick("bestfit", 2, [2, 6, 3], [8, 8, 8], [0, 1, 2]) == 0


def test_bestfit_over_overcommitted_machines() -> None:
    # M_max: free may be below the width (negative left).
    # width 4; free 2, 5, 1 -> left -2, 1, -3: the only non-negative one, machine 1,
    # although it comes after a negative one.
    assert pick("bestfit", 4, [2, 5, 1], [8, 8, 8], [0, 1, 2]) == 1
    # left 1, -2: a non-negative one first stays against a later negative one.
    assert pick("bestfit", 4, [5, 2], [8, 8], [0, 1]) == 0
    # left -3, -1, -2: none non-negative -> the largest, -1: machine 1.
    assert pick("bestfit", 4, [1, 3, 2], [8, 8, 8], [0, 1, 2]) == 1
    # left -1, -3: the first is the largest, it stays.
    assert pick("bestfit", 4, [3, 1], [8, 8], [0, 1]) == 0
    # left -2, -2: a tie keeps the first listed.
    assert pick("bestfit", 4, [2, 2], [8, 8], [1, 0]) == 1
    # left 2, 0: the non-negative 0 beats the non-negative 2.
    assert pick("bestfit", 4, [6, 4], [8, 8], [0, 1]) == 1
    # left 0, -1: a negative one never beats a non-negative one (not even 0).
    assert pick("bestfit", 4, [4, 3], [8, 8], [0, 1]) == 0
    # left -1, 0, 1: the first non-negative one, 0, and not 1 after it.
    assert pick("bestfit", 4, [3, 4, 5], [8, 8, 8], [0, 1, 2]) == 1


def test_equalutil() -> None:
    # nodes 4, 8, 16; free 2, 2, 4 -> util 2/4, 6/8, 12/16: the lowest, machine 0.
    assert pick("equalutil", 1, [2, 2, 4], [4, 8, 16], [0, 1, 2]) == 0
    # free 2, 6, 4 -> util 2/4, 2/8, 12/16: machine 1.
    assert pick("equalutil", 1, [2, 6, 4], [4, 8, 16], [0, 1, 2]) == 1
    # free 3, 3 of 4 and 12 -> util 1/4 and 9/12: machine 0, not by busy nodes alone.
    assert pick("equalutil", 1, [3, 3], [4, 12], [1, 0]) == 0
    # util 2/4 = 4/8: a tie keeps the first listed.
    assert pick("equalutil", 1, [2, 4], [4, 8], [0, 1]) == 0
    assert pick("equalutil", 1, [2, 4], [4, 8], [1, 0]) == 1
    # M_max: overcommitted machines (negative free) count as more than full.
    assert pick("equalutil", 1, [-2, 0], [4, 4], [0, 1]) == 1


def test_random_draws_from_the_generator_passed_in() -> None:
    cands = [3, 1, 4, 0]
    for seed in range(5):
        expected = cands[random.Random(seed).randrange(4)]
        got = choose("random", 1, cands, [9] * 5, [9] * 5, random.Random(seed))
        assert got == expected
    drawn = {choose("random", 1, cands, [9] * 5, [9] * 5, random.Random(s)) for s in range(40)}
    assert drawn == {0, 1, 3, 4}


def test_unknown_strategy_is_refused() -> None:
    with pytest.raises(ValueError, match="^unknown selection strategy 'widest'$"):
        pick("widest", 1, [1, 1], [1, 1], [0, 1])
