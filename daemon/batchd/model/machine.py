"""Machines as pools of numbered nodes, and grids of several machines."""

from __future__ import annotations

from bisect import bisect_left, insort
from dataclasses import dataclass, field

from batchd.model.cores import best_fit


class NodePool:
    """The nodes of one machine; allocation hands out the lowest free ids first.

    A node can be taken out of service (offline or down): it is never handed
    out, and if a job holds it, it does not come back when the job releases it.
    Only the free list is kept; a node is busy when it is neither free nor out of
    service idle, so allocating and releasing touch no node one by one.
    """

    __slots__ = ("size", "per_node", "_free", "_out", "_out_busy")

    def __init__(self, size: int) -> None:
        if size <= 0:
            raise ValueError(f"a node pool needs at least one node, got {size}")
        self.size = size
        self.per_node = 1  # units per node: a CorePool's are a shared machine's cores
        self._free: list[int] = list(range(size))  # ascending
        self._out: set[int] = set()  # out of service
        self._out_busy: set[int] = set()  # out of service while a holder still has them

    @property
    def free(self) -> int:
        return len(self._free)

    @property
    def all_in_service(self) -> bool:
        return not self._out

    @property
    def available(self) -> int:
        """Nodes in service, busy or not."""
        return self.size - len(self._out)

    def allocate(self, count: int) -> list[int]:
        if count > len(self._free):
            raise ValueError(f"asked for {count} nodes, only {len(self._free)} are free")
        nodes = self._free[:count]
        del self._free[:count]
        return nodes

    def allocate_pieces(self, pieces: tuple[int, ...], spread: bool) -> list[int] | None:
        """Units for each piece on one node, or None: they do not fit the free units now.
        Here a unit is a node, so only pieces of one fit, on the lowest free nodes."""
        if any(p != 1 for p in pieces) or len(pieces) > len(self._free):
            return None
        return self.allocate(len(pieces))

    def take(self, nodes: list[int]) -> None:
        """Allocate these very nodes (a job restored after a restart)."""
        free = set(self._free)
        bad = [n for n in nodes if not 0 <= n < self.size or n not in free]
        if bad or len(set(nodes)) != len(nodes):
            raise ValueError(f"nodes {sorted(bad or nodes)} are not all free")
        wanted = set(nodes)
        self._free = [n for n in self._free if n not in wanted]

    def release(self, nodes: list[int]) -> None:
        if self._out:
            out_busy = self._out_busy
            back = [n for n in nodes if n not in out_busy]
            out_busy.difference_update(nodes)
            nodes = back
        free = self._free
        if len(nodes) < 4:
            for node in nodes:
                insort(free, node)
        else:
            # Two sorted runs: timsort merges them in linear time.
            free += nodes
            free.sort()

    def is_busy(self, node: int) -> bool:
        self._check(node)
        return node in self._out_busy or (node not in self._out and node not in self._free)

    def in_service(self, node: int) -> bool:
        return node not in self._out

    def take_out(self, node: int) -> None:
        """Out of service: a free node leaves the free list; a busy one will not return."""
        self._check(node)
        if node in self._out:
            return
        busy = self.is_busy(node)
        self._out.add(node)
        if busy:
            self._out_busy.add(node)
        else:
            self._free.remove(node)

    def put_back(self, node: int) -> None:
        self._check(node)
        if node not in self._out:
            return
        self._out.discard(node)
        if node in self._out_busy:
            self._out_busy.discard(node)  # its holder gives it back when it ends
        else:
            self._free.append(node)
            self._free.sort()

    def _check(self, node: int) -> None:
        if not 0 <= node < self.size:
            raise ValueError(f"node {node} does not exist (0..{self.size - 1})")

    def free_ids(self) -> list[int]:
        return list(self._free)


class CorePool(NodePool):
    """The cores of a machine whose nodes are shared: a NodePool of units that also
    keeps each node's free count, so that placing pieces looks at nodes, not cores.

    It places exactly as ``cores.place_pieces`` over the free units does (a test
    compares the two); the free list stays the one the engine and planners read.
    """

    __slots__ = ("node_free",)

    def __init__(self, size: int, per_node: int) -> None:
        if per_node <= 0 or size % per_node:
            raise ValueError(f"{size} units do not make nodes of {per_node}")
        super().__init__(size)
        self.per_node = per_node
        self.node_free = [per_node] * (size // per_node)

    def _count(self, units: list[int], change: int) -> None:
        per, node_free = self.per_node, self.node_free
        for unit in units:
            node_free[unit // per] += change

    def allocate(self, count: int) -> list[int]:
        units = super().allocate(count)
        self._count(units, -1)
        return units

    def allocate_pieces(self, pieces: tuple[int, ...], spread: bool) -> list[int] | None:
        nodes = best_fit(enumerate(self.node_free), self.per_node, pieces, spread)
        return None if nodes is None else self._take_on(nodes, pieces)

    def _take_on(self, nodes: list[int], pieces: tuple[int, ...]) -> list[int]:
        """Each piece's units: the lowest free ones of its node, in the order the pieces
        were placed there (largest first); they leave the free list."""
        free, per = self._free, self.per_node
        order = sorted(range(len(pieces)), key=lambda i: -pieces[i])
        at: dict[int, int] = {}
        starts: dict[int, int] = {}
        for n in dict.fromkeys(nodes[i] for i in order):
            starts[n] = bisect_left(free, n * per)
        placed: list[list[int]] = [[] for _ in pieces]
        for i in order:
            n = nodes[i]
            first = starts[n] + at.get(n, 0)
            placed[i] = free[first : first + pieces[i]]
            at[n] = at.get(n, 0) + pieces[i]
        for n in sorted(at, reverse=True):
            del free[starts[n] : starts[n] + at[n]]
            self.node_free[n] -= at[n]
        return [u for piece in placed for u in piece]

    def take(self, nodes: list[int]) -> None:
        super().take(nodes)
        self._count(nodes, -1)

    def release(self, nodes: list[int]) -> None:
        back = [n for n in nodes if n not in self._out_busy] if self._out else nodes
        super().release(nodes)
        self._count(back, 1)

    def take_out(self, node: int) -> None:
        free = node in self._free
        super().take_out(node)
        if free:
            self.node_free[node // self.per_node] -= 1

    def put_back(self, node: int) -> None:
        back = node in self._out and node not in self._out_busy
        super().put_back(node)
        if back:
            self.node_free[node // self.per_node] += 1


@dataclass(slots=True)
class Machine:
    """One machine: a name and a pool of identical nodes.

    ``nodes`` counts the scheduler's units: nodes, or on a machine whose nodes are
    shared its cores, ``slots_per_node`` to a node.
    """

    name: str
    nodes: int
    description: str = ""
    slots_per_node: int = 1
    pool: NodePool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        per = self.slots_per_node
        self.pool = CorePool(self.nodes, per) if per > 1 else NodePool(self.nodes)


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
