"""Machine selection strategies of Hamscher et al.'s grid paper, sec. 4.1, on plain lists of ints.

A strategy picks one machine for a job from candidates: M_free (the machines that
can start it now) or M_max (every machine wide enough for it). ``free[i]`` is what
the strategy counts as free on machine ``i``: the idle nodes for M_free; for M_max
the idle nodes less the nodes asked for by the jobs already waiting for that
machine (it may be negative: the machine is overcommitted). Ties go to the machine
listed first (the lowest index), and ``random`` draws from the generator passed in.

- biggestfree: the most free nodes.
- bestfit: the fewest nodes left free once the job is counted (free - width); among
  M_max, where that may be negative, the smallest non-negative leftover, else the
  largest (least negative) one.
- equalutil: the lowest utilization, (nodes - free) / nodes: busy nodes (and, for
  M_max, nodes asked for by waiting jobs) per node.
- random: uniformly among the candidates.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

STRATEGIES = ("biggestfree", "bestfit", "equalutil", "random")
SETS = ("free", "max")
EARLIEST = "earliest"


def strategy_names() -> list[str]:
    return [f"{s}-{m}" for s in STRATEGIES for m in SETS] + [EARLIEST]


def parse_strategy(text: str) -> tuple[str, str]:
    """Parse a strategy: bestfit-free -> (bestfit, free); earliest -> (earliest, max)."""
    if text == EARLIEST:
        return EARLIEST, "max"
    name, _, over = text.partition("-")
    if name not in STRATEGIES or over not in SETS:
        raise ValueError(f"expected one of {', '.join(strategy_names())}")
    return name, over


def choose(
    strategy: str,
    width: int,
    candidates: Sequence[int],
    free: Sequence[int],
    nodes: Sequence[int],
    rng: random.Random,
) -> int:
    """The machine ``strategy`` picks for a job of ``width`` among ``candidates`` (not empty)."""
    if len(candidates) == 1:
        return candidates[0]
    if strategy == "biggestfree":
        best = candidates[0]
        for i in candidates:
            if free[i] > free[best]:
                best = i
        return best
    if strategy == "bestfit":
        best = -1
        best_left = 0
        for i in candidates:
            left = free[i] - width
            if best < 0:
                best, best_left = i, left
            elif best_left >= 0:
                if 0 <= left < best_left:
                    best, best_left = i, left
            elif left >= 0 or left > best_left:
                best, best_left = i, left
        return best
    if strategy == "equalutil":
        best = candidates[0]
        # (nodes - free) / nodes, compared without division: a/b < c/d <=> a*d < c*b.
        for i in candidates:
            if (nodes[i] - free[i]) * nodes[best] < (nodes[best] - free[best]) * nodes[i]:
                best = i
        return best
    if strategy == "random":
        return candidates[rng.randrange(len(candidates))]
    raise ValueError(f"unknown selection strategy {strategy!r}")
