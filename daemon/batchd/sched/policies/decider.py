"""The deciders of self-tuning dynP (Streit's dynP paper, sec. 3.2 and Table 1).

Qualities are numbers where lower is better; ``=`` in Table 1 is exact equality,
so callers pass exact values (ints or Fractions) wherever the metric allows.

Table 1 lists some combinations twice: case 2 (SJF best) contains case 7
(FCFS = LJF > SJF), case 3 contains case 9, and case 4b is case 5. The paper
counts them together in Table 6 ("2 & 7", "3 & 9", "4b & 5"). batchd classifies
by the equalities first: a triple with exactly two equal values is case 5-10,
so cases 2, 3 and 4a/4c count only triples of three different values and 4b is
never counted. The decisions are the same either way.
"""

from __future__ import annotations

from typing import Literal

FCFS, SJF, LJF = "FCFS", "SJF", "LJF"
POLICIES = (FCFS, SJF, LJF)
CASES = (
    "1", "2", "3", "4a", "4b", "4c", "5", "6a", "6b", "6c",
    "7", "8a", "8b", "8c", "9", "10a", "10b", "10c",
)  # fmt: skip
Decider = Literal["simple", "advanced"]

_SUFFIX = {FCFS: "a", SJF: "b", LJF: "c"}


def classify(f: object, s: object, l: object, current: str) -> str:  # noqa: E741
    """The Table 1 case of qualities (FCFS, SJF, LJF) under the current policy."""
    if f == s == l:
        return "1"
    if f == s:
        return "5" if l < f else "6" + _SUFFIX[current]  # type: ignore[operator]
    if f == l:
        return "7" if s < f else "8" + _SUFFIX[current]  # type: ignore[operator]
    if s == l:
        return "9" if f < s else "10" + _SUFFIX[current]  # type: ignore[operator]
    if s < f and s < l:  # type: ignore[operator]
        return "2"
    if f < s and f < l:  # type: ignore[operator]
        return "3"
    return "4a" if f < s else "4c"  # type: ignore[operator]


# The last column of Table 1: where the advanced decider keeps the current policy.
_ADVANCED = {
    "1": None, "2": SJF, "3": FCFS, "4a": LJF, "4b": LJF, "4c": LJF, "5": LJF,
    "6a": None, "6b": None, "6c": FCFS, "7": SJF, "8a": None, "8b": FCFS, "8c": None,
    "9": FCFS, "10a": SJF, "10b": None, "10c": None,
}  # fmt: skip


def simple_decider(f: object, s: object, l: object) -> str:  # noqa: E741
    """The simple decider, as the paper's pseudo-code has it."""
    if s <= l:  # type: ignore[operator]
        return FCFS if f <= s else SJF  # type: ignore[operator]
    return FCFS if f <= l else LJF  # type: ignore[operator]


def decide(f: object, s: object, l: object, current: str, decider: Decider) -> tuple[str, str]:  # noqa: E741
    """(new policy, Table 1 case) for the qualities of the three plans."""
    case = classify(f, s, l, current)
    if decider == "simple":
        return simple_decider(f, s, l), case
    choice = _ADVANCED[case]
    return (current if choice is None else choice), case
