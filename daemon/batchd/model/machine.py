"""Machines as pools of numbered nodes, and grids of several machines."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

from batchd.model.cores import best_fit


class NodePool:
    """The nodes of one machine; allocation hands out the lowest free ids first.

    A node can be taken out of service (offline or down): it is never handed
    out, and if a job holds it, it does not come back when the job releases it.
    Only the free nodes are kept, as ranges of consecutive ids (``_lo[i]`` up to
    ``_hi[i]``, exclusive, ascending, never touching); a node is busy when it is
    neither free nor out of service idle. Allocating and releasing cost with the
    job's width and the number of free ranges, not with the machine's size: the ids
    handed out are slices of one table of ids, so no id is made twice.
    """

    __slots__ = (
        "size", "per_node", "_ids", "_lo", "_hi", "_nfree", "_unnamed", "_out", "_out_busy"
    )  # fmt: skip

    def __init__(self, size: int) -> None:
        if size <= 0:
            raise ValueError(f"a node pool needs at least one node, got {size}")
        self.size = size
        self.per_node = 1  # units per node: a CorePool's are a shared machine's cores
        self._ids: list[int] = list(range(size))
        self._lo: list[int] = [0]  # free ranges: their first ids, ascending
        self._hi: list[int] = [size]  # and their ends (exclusive)
        self._nfree = size  # free nodes
        self._unnamed = 0  # busy nodes taken by count, without ids (take_count)
        self._out: set[int] = set()  # out of service
        self._out_busy: set[int] = set()  # out of service while a holder still has them

    @property
    def free(self) -> int:
        return self._nfree

    @property
    def all_in_service(self) -> bool:
        return not self._out

    @property
    def available(self) -> int:
        """Nodes in service, busy or not."""
        return self.size - len(self._out)

    def allocate(self, count: int) -> list[int]:
        if count > self._nfree:
            raise ValueError(f"asked for {count} nodes, only {self._nfree} are free")
        if self._unnamed:
            self._named()
        return self._take_from(0, count)

    def take_count(self, count: int) -> None:
        """Take ``count`` nodes without naming them, for an engine that reads no ids (a
        replay that writes no allocations): a start then costs the same on any machine.
        Such a pool hands out no ids until every counted node is back."""
        if count > self._nfree:
            raise ValueError(f"asked for {count} nodes, only {self._nfree} are free")
        self._nfree -= count
        self._unnamed += count

    def give_back_count(self, count: int) -> None:
        """Nodes taken by ``take_count`` are free again."""
        if count > self._unnamed:
            raise ValueError(f"gave back {count} nodes, only {self._unnamed} were taken")
        self._nfree += count
        self._unnamed -= count

    def lowest_free(self, count: int) -> list[int]:
        """The ``count`` lowest free ids (fewer when fewer are free), taking none."""
        ids, need = self._ids, count
        out: list[int] = []
        for a, b in zip(self._lo, self._hi, strict=True):
            if need <= 0:
                break
            end = min(b, a + need)
            out += ids[a:end]
            need -= end - a
        return out

    def _take_from(self, start: int, count: int) -> list[int]:
        """The ``count`` lowest free ids from ``start`` on, out of the free ranges; the
        caller knows that many are free there."""
        if count <= 0:
            return []
        lo, hi, ids = self._lo, self._hi, self._ids
        i = bisect_right(hi, start)  # the first range that ends after start
        a = lo[i]
        if a < start:  # start falls inside it: keep its part below start apart
            lo.insert(i, a)
            hi.insert(i, start)
            i += 1
            lo[i] = a = start
        self._nfree -= count
        b = hi[i]
        if b - a > count:  # the common case: one range holds them all
            lo[i] = a + count
            return ids[a : a + count]
        taken = ids[a:b]
        need = count - (b - a)
        j = i + 1
        while need:
            a, b = lo[j], hi[j]
            if b - a > need:
                taken += ids[a : a + need]
                lo[j] = a + need
                break
            taken += ids[a:b]
            need -= b - a
            j += 1
        del lo[i:j], hi[i:j]
        return taken

    def allocate_pieces(self, pieces: tuple[int, ...], spread: bool) -> list[int] | None:
        """Units for each piece on one node, or None: they do not fit the free units now.
        Here a unit is a node, so only pieces of one fit, on the lowest free nodes."""
        if any(p != 1 for p in pieces) or len(pieces) > self._nfree:
            return None
        return self.allocate(len(pieces))

    def take(self, nodes: list[int]) -> None:
        """Allocate these very nodes (a job restored after a restart)."""
        self._named()
        bad = [n for n in nodes if not 0 <= n < self.size or not self._is_free(n)]
        if bad or len(set(nodes)) != len(nodes):
            raise ValueError(f"nodes {sorted(bad or nodes)} are not all free")
        for a, b in _runs(sorted(nodes)):
            self._take_from(a, b - a)

    def release(self, nodes: list[int]) -> list[tuple[int, int]] | None:
        """``nodes`` are free again (but those out of service). Returns their runs
        (first, end), as ``_runs`` finds them, when every one came back; else None."""
        if self._unnamed:
            self._named()
        whole = True
        if self._out:
            out_busy = self._out_busy
            back = [n for n in nodes if n not in out_busy]
            out_busy.difference_update(nodes)
            whole = len(back) == len(nodes)
            nodes = back
        if not nodes:
            return [] if whole else None
        first, count = nodes[0], len(nodes)
        if nodes[-1] - first == count - 1 and nodes == self._ids[first : first + count]:
            self._add(first, first + count)  # one run, as allocate hands most out
            return [(first, first + count)] if whole else None
        runs = _runs(sorted(nodes))
        for a, b in runs:
            self._add(a, b)
        return runs if whole else None

    def _add(self, a: int, b: int) -> None:
        """Nodes ``a`` up to ``b`` (exclusive) are free again."""
        lo, hi = self._lo, self._hi
        i = bisect_right(lo, a)  # ranges before i start at or below a
        joins_left = i > 0 and hi[i - 1] == a
        joins_right = i < len(lo) and lo[i] == b
        if joins_left and joins_right:
            hi[i - 1] = hi[i]
            del lo[i], hi[i]
        elif joins_left:
            hi[i - 1] = b
        elif joins_right:
            lo[i] = a
        else:
            lo.insert(i, a)
            hi.insert(i, b)
        self._nfree += b - a

    def _named(self) -> None:
        if self._unnamed:
            raise ValueError(f"{self._unnamed} nodes are held by count, without ids")

    def _is_free(self, node: int) -> bool:
        i = bisect_right(self._lo, node) - 1
        return i >= 0 and node < self._hi[i]

    def is_busy(self, node: int) -> bool:
        self._check(node)
        return node in self._out_busy or (node not in self._out and not self._is_free(node))

    def in_service(self, node: int) -> bool:
        return node not in self._out

    def take_out(self, node: int) -> None:
        """Out of service: a free node leaves the free list; a busy one will not return."""
        self._check(node)
        self._named()
        if node in self._out:
            return
        busy = self.is_busy(node)
        self._out.add(node)
        if busy:
            self._out_busy.add(node)
        else:
            self._take_from(node, 1)

    def put_back(self, node: int) -> None:
        self._check(node)
        self._named()
        if node not in self._out:
            return
        self._out.discard(node)
        if node in self._out_busy:
            self._out_busy.discard(node)  # its holder gives it back when it ends
        else:
            self._add(node, node + 1)

    def _check(self, node: int) -> None:
        if not 0 <= node < self.size:
            raise ValueError(f"node {node} does not exist (0..{self.size - 1})")

    def free_ids(self) -> list[int]:
        ids: list[int] = []
        for a, b in zip(self._lo, self._hi, strict=True):
            ids += self._ids[a:b]
        return ids

    def free_ranges(self) -> list[tuple[int, int]]:
        """The free nodes as ranges ``(first, end)``, end exclusive, ascending."""
        return list(zip(self._lo, self._hi, strict=True))


def _runs(ids: list[int]) -> list[tuple[int, int]]:
    """Sorted distinct ids as runs of consecutive ids ``(first, end)``, end exclusive.
    A run is found by halving: a slice is consecutive when its ends are as far apart as
    its length says, so the cost goes with the number of runs, not of ids."""
    runs: list[tuple[int, int]] = []
    i, n = 0, len(ids)
    while i < n:
        first = ids[i]
        lo, hi = i, n - 1  # ids[i..lo] is consecutive; find the last such index
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if ids[mid] - first == mid - i:
                lo = mid
            else:
                hi = mid - 1
        runs.append((first, ids[lo] + 1))
        i = lo + 1
    return runs


class CorePool(NodePool):
    """The cores of a machine whose nodes are shared: a NodePool of units that also
    keeps each node's free count, so that placing pieces looks at nodes, not cores.

    It places exactly as ``cores.place_pieces`` over the free units does (a test
    compares the two); the free ranges stay the ones the engine and planners read.
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
        were placed there (largest first); they leave the free ranges."""
        per, node_free = self.per_node, self.node_free
        placed: list[list[int]] = [[] for _ in pieces]
        for i in sorted(range(len(pieces)), key=lambda i: -pieces[i]):
            n = nodes[i]
            placed[i] = self._take_from(n * per, pieces[i])
            node_free[n] -= pieces[i]
        return [u for piece in placed for u in piece]

    def take(self, nodes: list[int]) -> None:
        super().take(nodes)
        self._count(nodes, -1)

    def release(self, nodes: list[int]) -> list[tuple[int, int]] | None:
        back = [n for n in nodes if n not in self._out_busy] if self._out else nodes
        runs = super().release(nodes)
        self._count(back, 1)
        return runs

    def take_out(self, node: int) -> None:
        free = self._is_free(node)
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


# Ids from which a finished job's are kept as runs (``Engine(fold_units=True)``): a
# shorter list costs a few hundred bytes, which folding every one of a small machine's
# jobs would trade for time.
FOLD_FROM = 64


def node_runs(nodes: Sequence[int]) -> tuple[int, ...]:
    """Distinct node ids as runs: first, count, first, count, ... (sorted)."""
    if not nodes:
        return ()
    ids = sorted(nodes)  # in order already, as a pool hands them out: one pass
    first = ids[0]
    if ids[-1] - first == len(ids) - 1:  # distinct: one run, as most jobs hold
        return (first, len(ids))
    if len(ids) > 256:  # long runs: found by halving
        return spans_as_runs(_runs(ids))
    out = [first, 1]
    for n in ids[1:]:
        if out[-2] + out[-1] == n:
            out[-1] += 1
        else:
            out += (n, 1)
    return tuple(out)


def spans_as_runs(spans: Sequence[tuple[int, int]]) -> tuple[int, ...]:
    """Spans (first, end), as ``_runs`` and ``NodePool.release`` give them, as runs."""
    return tuple(x for a, b in spans for x in (a, b - a))


def runs_intervals(runs: Sequence[int]) -> str:
    """Runs (``node_runs``) as Batsim/evalys intervals: (0, 4, 8, 1) -> "0-3 8"."""
    return " ".join(
        f"{first}-{first + count - 1}" if count > 1 else str(first)
        for first, count in zip(runs[::2], runs[1::2], strict=True)
    )


def node_intervals(nodes: Sequence[int]) -> str:
    """Node ids as Batsim/evalys intervals: [0, 1, 2, 3, 8] -> "0-3 8"."""
    # One walk of the ids, not runs_intervals(node_runs(...)): jobs.csv writes a row
    # per job, mostly a few ids each, where that costs twice as much (0.6 -> 1.3 us).
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
