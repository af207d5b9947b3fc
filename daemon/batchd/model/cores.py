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

from collections.abc import Mapping, Sequence


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


def place_pieces(
    free: Sequence[int], per_node: int, pieces: Sequence[int], spread: bool
) -> list[int] | None:
    """Units for each piece on one node, from the free units ``free`` (ascending), the
    pieces' units in the order of ``pieces``; None when the free units cannot hold them.

    Larger pieces are placed first, each on the node with the fewest free units that
    holds it (the lowest such node on ties), so partly used nodes fill up before empty
    ones are broken into; ``spread``: no two pieces on one node.
    """
    by_node: dict[int, list[int]] = {}
    for unit in free:
        by_node.setdefault(unit // per_node, []).append(unit)
    if not spread and all(p == 1 for p in pieces):
        # Best fit one unit at a time fills the fullest nodes first.
        order = sorted(by_node, key=lambda n: (len(by_node[n]), n))
        units = [u for n in order for u in by_node[n]]
        return units[: len(pieces)] if len(units) >= len(pieces) else None
    placed: list[list[int]] = [[] for _ in pieces]
    used: set[int] = set()
    for i in sorted(range(len(pieces)), key=lambda i: -pieces[i]):
        need = pieces[i]
        best = -1
        best_left = per_node + 1
        for node, units in by_node.items():
            left = len(units)
            if need <= left < best_left and not (spread and node in used):
                best, best_left = node, left
        if best < 0:
            return None
        units = by_node[best]
        placed[i] = units[:need]
        del units[:need]
        used.add(best)
    return [u for piece in placed for u in piece]


def piece_nodes(units: Sequence[int], pieces: Sequence[int], per_node: int) -> list[int]:
    """The node of each piece, from a job's units as ``place_pieces`` gave them."""
    out = []
    at = 0
    for size in pieces:
        out.append(units[at] // per_node if at < len(units) else -1)
        at += size
    return out


def nodes_used(units: Sequence[int], per_node: int) -> int:
    """How many nodes these units are on."""
    return len({unit // per_node for unit in units}) if per_node > 1 else len(units)
