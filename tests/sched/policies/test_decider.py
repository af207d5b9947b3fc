"""dynP's deciders: Table 1's cases and the decisions of the simple and advanced deciders."""

from __future__ import annotations

import pytest

from batchd.sched.policies.decider import FCFS, LJF, SJF, classify, decide, simple_decider

# (FCFS, SJF, LJF) qualities, lower is better -> the case under FCFS, SJF and LJF in force.
CASES = [
    ((1, 1, 1), ("1", "1", "1")),
    ((2, 1, 3), ("2", "2", "2")),  # SJF best, all different
    ((1, 2, 3), ("3", "3", "3")),  # FCFS best
    ((2, 3, 1), ("4a", "4a", "4a")),  # LJF best, FCFS second
    ((3, 2, 1), ("4c", "4c", "4c")),  # LJF best, SJF second
    ((2, 2, 1), ("5", "5", "5")),  # FCFS = SJF, LJF better
    ((2, 2, 3), ("6a", "6b", "6c")),  # FCFS = SJF, LJF worse
    ((2, 1, 2), ("7", "7", "7")),  # FCFS = LJF, SJF better
    ((1, 2, 1), ("8a", "8b", "8c")),  # FCFS = LJF, SJF worse
    ((1, 2, 2), ("9", "9", "9")),  # SJF = LJF, FCFS better
    ((3, 2, 2), ("10a", "10b", "10c")),  # SJF = LJF, FCFS worse
]


@pytest.mark.parametrize(("qualities", "cases"), CASES)
def test_classify_names_table_1s_case(
    qualities: tuple[int, int, int], cases: tuple[str, ...]
) -> None:
    f, s, l = qualities  # noqa: E741
    assert tuple(classify(f, s, l, p) for p in (FCFS, SJF, LJF)) == cases


# The advanced decider: Table 1's last column (None there: keep the policy in force).
ADVANCED = {
    "1": None, "2": SJF, "3": FCFS, "4a": LJF, "4c": LJF, "5": LJF,
    "6a": None, "6b": None, "6c": FCFS, "7": SJF, "8a": None, "8b": FCFS, "8c": None,
    "9": FCFS, "10a": SJF, "10b": None, "10c": None,
}  # fmt: skip


@pytest.mark.parametrize(("qualities", "cases"), CASES)
def test_the_advanced_decider_follows_table_1(
    qualities: tuple[int, int, int], cases: tuple[str, ...]
) -> None:
    f, s, l = qualities  # noqa: E741
    for current, case in zip((FCFS, SJF, LJF), cases, strict=True):
        choice = ADVANCED[case]
        expected = current if choice is None else choice
        assert decide(f, s, l, current, "advanced") == (expected, case)


@pytest.mark.parametrize(
    ("qualities", "policy"),
    [
        ((1, 2, 3), FCFS),
        ((2, 2, 3), FCFS),  # FCFS wins a tie with SJF
        ((3, 2, 3), SJF),
        ((3, 2, 2), SJF),  # SJF wins a tie with LJF
        ((2, 3, 1), LJF),
        ((1, 3, 1), FCFS),  # FCFS wins a tie with LJF
        ((2, 3, 2), FCFS),
    ],
)
def test_the_simple_decider_takes_the_best_fcfs_first(
    qualities: tuple[int, int, int], policy: str
) -> None:
    f, s, l = qualities  # noqa: E741
    assert simple_decider(f, s, l) == policy
    case = classify(f, s, l, LJF)
    assert decide(f, s, l, LJF, "simple") == (policy, case)
