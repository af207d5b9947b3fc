"""Nodes that several jobs share: a machine's cores as the scheduler's units.

On a machine whose nodes are shared, the engine's pool holds one unit per core
(``slots_per_node`` to a node: node ``n`` owns units ``n*c .. n*c+c-1``). A job asks
for pieces: the cores each group of its chunks takes on one node. A piece's cores
are the largest share of a node any of its resources asks for, in cores: a chunk
asking for half a node's memory takes half its cores, as Slurm raises a job's CPUs to
cover memory beyond ``MaxMemPerCPU``; so counting cores keeps memory and every other
consumable within the node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from heapq import heappop, heappush
from itertools import accumulate


def footprint(need: Mapping[str, int], capacity: Mapping[str, int], cores: int) -> int:
    """The cores of a node that ``need`` takes: its CPUs, or more when another resource
    asks for a larger share of the node (rounded up); at least one."""
    taken = max(need.get("ncpus", 1), 1)
    for name, amount in need.items():
        if name == "ncpus" or amount <= 0:
            continue
        have = capacity.get(name, 0)
        share = -(-amount * cores // have) if have > 0 else cores
        taken = max(taken, share)
    return taken


def best_fit(
    free_counts: Iterable[tuple[int, int]], per_node: int, pieces: Sequence[int], spread: bool
) -> list[int] | None:
    """The node of each piece, from each node's free units ``(node, count)`` in node
    order; None when they cannot hold the pieces.

    Larger pieces are placed first, each on the node with the fewest free units that
    holds it (the lowest such node on ties), so partly used nodes fill up before empty
    ones are broken into; ``spread``: no two pieces on one node. Nodes are kept in
    buckets by free units, so a piece costs a look at the bucket sizes, not at every
    node: a job of many chunks on a large machine is placed in time linear in both.
    """
    buckets: list[list[int]] = [[] for _ in range(per_node + 1)]  # free units -> node heap
    for node, count in free_counts:
        if count:
            buckets[count].append(node)  # in node order: already a heap
    nodes = [0] * len(pieces)
    for i in sorted(range(len(pieces)), key=lambda i: -pieces[i]):
        need = left = pieces[i]
        while left <= per_node and not buckets[left]:
            left += 1
        if left > per_node:
            return None
        node = heappop(buckets[left])
        nodes[i] = node
        if left > need and not spread:
            heappush(buckets[left - need], node)
    return nodes


def place_pieces(
    free: Sequence[int], per_node: int, pieces: Sequence[int], spread: bool
) -> list[int] | None:
    """Units for each piece on one node (``best_fit``), from the free units ``free``
    (ascending), the pieces' units in the order of ``pieces``: the lowest free units of
    its node, taken by the pieces placed there largest first. None when they do not fit."""
    by_node: dict[int, list[int]] = {}
    for unit in free:
        by_node.setdefault(unit // per_node, []).append(unit)
    nodes = best_fit(((n, len(u)) for n, u in by_node.items()), per_node, pieces, spread)
    if nodes is None:
        return None
    placed: list[list[int]] = [[] for _ in pieces]
    for i in sorted(range(len(pieces)), key=lambda i: -pieces[i]):
        units = by_node[nodes[i]]
        placed[i] = units[: pieces[i]]
        del units[: pieces[i]]
    return [u for piece in placed for u in piece]


def piece_starts(units: Sequence[int], pieces: Sequence[int]) -> list[int]:
    """The first unit of each piece, from a job's units as ``place_pieces`` gave them."""
    return [units[at] for at in accumulate(pieces[:-1], initial=0)] if units else []


def piece_nodes(units: Sequence[int], pieces: Sequence[int], per_node: int) -> list[int]:
    """The node of each piece, from a job's units as ``place_pieces`` gave them."""
    return [unit // per_node for unit in piece_starts(units, pieces)]


def nodes_used(units: Sequence[int], per_node: int) -> int:
    """How many nodes these units are on."""
    return len({unit // per_node for unit in units}) if per_node > 1 else len(units)
