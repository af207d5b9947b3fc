"""Machines as pools of numbered nodes, and grids of several machines."""

from __future__ import annotations

from dataclasses import dataclass, field


class NodePool:
    """The free nodes of one machine; allocation hands out the lowest free ids first."""

    __slots__ = ("size", "_free")

    def __init__(self, size: int) -> None:
        if size <= 0:
            raise ValueError(f"a node pool needs at least one node, got {size}")
        self.size = size
        self._free: list[int] = list(range(size))

    @property
    def free(self) -> int:
        return len(self._free)

    def allocate(self, count: int) -> list[int]:
        if count > len(self._free):
            raise ValueError(f"asked for {count} nodes, only {len(self._free)} are free")
        nodes = self._free[:count]
        del self._free[:count]
        return nodes

    def release(self, nodes: list[int]) -> None:
        # Two sorted runs: timsort merges them in linear time.
        self._free += nodes
        self._free.sort()

    def free_ids(self) -> list[int]:
        return list(self._free)


@dataclass(slots=True)
class Machine:
    """One machine: a name and a pool of identical nodes."""

    name: str
    nodes: int
    description: str = ""
    pool: NodePool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.pool = NodePool(self.nodes)


@dataclass(slots=True)
class Grid:
    """Several machines in one model; a single machine is a grid of one."""

    machines: list[Machine]

    def __post_init__(self) -> None:
        names = [m.name for m in self.machines]
        if not names:
            raise ValueError("a grid needs at least one machine")
        if len(set(names)) != len(names):
            raise ValueError(f"machine names must be unique, got {names}")

    def index(self, name: str) -> int:
        for i, m in enumerate(self.machines):
            if m.name == name:
                return i
        raise KeyError(name)


def node_intervals(nodes: list[int]) -> str:
    """Node ids as Batsim/evalys intervals: [0, 1, 2, 3, 8] -> "0-3 8"."""
    if not nodes:
        return ""
    ids = sorted(nodes)
    parts: list[str] = []
    lo = prev = ids[0]
    for n in ids[1:]:
        if n != prev + 1:
            parts.append(f"{lo}-{prev}" if prev > lo else str(lo))
            lo = n
        prev = n
    parts.append(f"{lo}-{prev}" if prev > lo else str(lo))
    return " ".join(parts)
