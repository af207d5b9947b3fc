"""PBS chunks on identical nodes: what a job asks for, and how many nodes that takes.

A request is PBS's ``select`` (chunks: ``N:ncpus=C:mem=M:...`` joined by ``+``)
with a ``place`` (arrangement ``free``, ``pack``, ``scatter`` or ``vscatter``,
sharing ``excl``, ``shared`` or ``exclhost``, and ``group=RES``). The nodes of a
machine are identical, so where chunks go follows from the arrangement alone:

- ``scatter`` and ``vscatter``: one chunk per node;
- ``pack``: every chunk on one node (the sum must fit on a node);
- ``free``: chunks in the order asked, each on the first node it fits beside
  the job's earlier chunks (first fit), by every consumable resource.

On a machine of whole nodes the scheduler counts nodes: a job's width is the
number of nodes its chunks fill, and those nodes are its alone while it runs. On a
machine whose nodes are shared it counts cores (``shared_layout``,
``batchd.model.cores``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from batchd.model.cores import footprint
from batchd.model.sizes import format_size

Value = int | str | bool
ARRANGEMENTS = ("free", "pack", "scatter", "vscatter")
SHARINGS = ("excl", "shared", "exclhost")


class ChunkError(ValueError):
    """A request that no node (or no placement) can hold; the message names the limit."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """``count`` chunks, each asking for these resources on one node."""

    count: int = 1
    ncpus: int = 1
    mem: int | None = None  # bytes
    mpiprocs: int | None = None
    ompthreads: int | None = None
    # Site-defined per-node resources, in name order: consumable ones as integers
    # (sizes in bytes), the others as asked (matched against the node's value).
    custom: tuple[tuple[str, Value], ...] = ()

    def text(self, sizes: frozenset[str] = frozenset()) -> str:
        """``2:ncpus=2:mem=4gb:mpiprocs=2``: the chunk as ``Resource_List.select`` shows it;
        ``sizes`` names the custom resources of type size."""
        parts = [str(self.count), f"ncpus={self.ncpus}"]
        if self.mem is not None:
            parts.append(f"mem={format_size(self.mem)}")
        for name in ("mpiprocs", "ompthreads"):
            value = getattr(self, name)
            if value is not None:
                parts.append(f"{name}={value}")
        for name, value in self.custom:
            parts.append(f"{name}={show_value(value, name in sizes)}")
        return ":".join(parts)


def show_value(value: Value, size: bool = False) -> str:
    """A resource value as PBS prints it: True/False, sizes with their unit."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if size and isinstance(value, int):
        return format_size(value)
    return str(value)


@dataclass(frozen=True, slots=True)
class Place:
    """``place=[arrangement][:sharing][:group=RES]``; None: not asked for."""

    arrangement: str | None = None
    sharing: str | None = None
    group: str | None = None

    def text(self, default: str) -> str:
        """As ``Resource_List.place`` shows it, with ``default`` for an arrangement not asked."""
        parts = [self.arrangement or default]
        if self.sharing:
            parts.append(self.sharing)
        if self.group:
            parts.append(f"group={self.group}")
        return ":".join(parts)


def parse_place(text: str) -> Place:
    """``scatter:excl``, ``pack``, ``excl``, ``free:group=switch``, in any order."""
    arrangement = sharing = group = None
    for word in text.split(":"):
        key = word.strip()
        low = key.lower()
        if low in ARRANGEMENTS and arrangement is None:
            arrangement = low
        elif low in SHARINGS and sharing is None:
            sharing = low
        elif low.startswith("group=") and group is None and len(key) > 6:
            group = key[6:]
        else:
            raise ChunkError(
                f"place={text}: {key!r} is not allowed here: give at most one arrangement "
                f"({', '.join(ARRANGEMENTS)}), one sharing ({', '.join(SHARINGS)}) and one "
                "group=RESOURCE, joined by ':'"
            )
    return Place(arrangement, sharing, group)


@dataclass(frozen=True, slots=True)
class NodeShape:
    """What each node of a machine has: cores, memory (None: not limited) and the
    site's per-node resources (consumable amounts, and values chunks must match)."""

    ncpus: int = 1
    mem: int | None = None
    amounts: Mapping[str, int] = field(default_factory=dict)
    values: Mapping[str, Value] = field(default_factory=dict)


def _needs(chunk: Chunk, shape: NodeShape) -> dict[str, int]:
    """What one such chunk consumes of a node."""
    need = {"ncpus": chunk.ncpus}
    if chunk.mem is not None and shape.mem is not None:
        need["mem"] = chunk.mem
    for name, value in chunk.custom:
        if name in shape.amounts and isinstance(value, int) and not isinstance(value, bool):
            need[name] = value
    return need


def _capacity(shape: NodeShape) -> dict[str, int]:
    cap = {"ncpus": shape.ncpus, **shape.amounts}
    if shape.mem is not None:
        cap["mem"] = shape.mem
    return cap


def _shown(name: str, value: int, sizes: frozenset[str]) -> str:
    return format_size(value) if name == "mem" or name in sizes else str(value)


def check_chunk(
    chunk: Chunk, index: int, shape: NodeShape, sizes: frozenset[str] = frozenset()
) -> None:
    """ChunkError naming the limit when one such chunk does not fit on an empty node."""
    where = f"select: chunk {index}"
    cap = _capacity(shape)
    for name, amount in _needs(chunk, shape).items():
        if amount > cap[name]:
            raise ChunkError(
                f"{where} asks for {name}={_shown(name, amount, sizes)}; a node has "
                f"{_shown(name, cap[name], sizes)} (resources_available.{name})"
            )
    for name, value in chunk.custom:
        if name in shape.amounts:
            continue
        have = shape.values.get(name)
        if have is None:
            raise ChunkError(f"{where} asks for {name}={show_value(value)}; no node has {name}")
        if isinstance(value, bool | str):
            ok = have == value
        else:
            ok = isinstance(have, int) and not isinstance(have, bool) and have >= value
        if not ok:
            raise ChunkError(
                f"{where} asks for {name}={show_value(value, name in sizes)}; the nodes have "
                f"{name}={show_value(have, name in sizes)} (resources_available.{name})"
            )


def pack_chunks(
    chunks: Sequence[Chunk], arrangement: str, shape: NodeShape, sizes: frozenset[str] = frozenset()
) -> list[list[int]]:
    """The chunks (by index into ``chunks``, one entry per chunk counted) on each node,
    nodes in the order filled. Raises ChunkError naming the limit when they cannot go."""
    for i, chunk in enumerate(chunks, 1):
        check_chunk(chunk, i, shape, sizes)
    units = [i for i, c in enumerate(chunks) for _ in range(c.count)]
    if arrangement in ("scatter", "vscatter"):
        return [[u] for u in units]
    cap = _capacity(shape)
    needs = [_needs(c, shape) for c in chunks]
    nodes: list[list[int]] = []
    left: list[dict[str, int]] = []
    for u in units:
        need = needs[u]
        fits = (i for i, room in enumerate(left) if all(room[k] >= v for k, v in need.items()))
        slot = next(fits, None)
        if slot is None:
            if arrangement == "pack" and nodes:
                total = _sum(needs[x] for x in units)
                name = next(k for k, v in total.items() if v > cap[k])
                raise ChunkError(
                    f"place=pack: the chunks ask for {name}={_shown(name, total[name], sizes)} "
                    f"in all; a node has {_shown(name, cap[name], sizes)} "
                    f"(resources_available.{name})"
                )
            nodes.append([])
            left.append(dict(cap))
            slot = len(nodes) - 1
        nodes[slot].append(u)
        room = left[slot]
        for k, v in need.items():
            room[k] -= v
    return nodes


def _sum(needs: Iterable[dict[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for need in needs:
        for k, v in need.items():
            total[k] = total.get(k, 0) + v
    return total


def nodes_needed(
    chunks: Sequence[Chunk], arrangement: str, shape: NodeShape, sizes: frozenset[str] = frozenset()
) -> int:
    """How many nodes the chunks fill (the job's width)."""
    return len(pack_chunks(chunks, arrangement, shape, sizes))


@dataclass(frozen=True, slots=True)
class SharedLayout:
    """A job's chunks on a machine whose nodes are shared: the chunks of each piece
    (one node each), the cores each piece takes, and whether no two pieces may share
    a node (``scatter``, ``vscatter``, exclusive nodes)."""

    groups: list[list[int]]
    cores: tuple[int, ...]
    spread: bool


def shared_layout(
    chunks: Sequence[Chunk],
    arrangement: str,
    sharing: str | None,
    shape: NodeShape,
    sizes: frozenset[str] = frozenset(),
) -> SharedLayout:
    """The pieces of a job on shared nodes. ``excl``/``exclhost`` take whole nodes
    (packed as on a machine of whole nodes); ``pack`` is one piece; ``scatter`` and
    ``vscatter`` a piece per chunk on nodes of their own; ``free`` a piece per chunk,
    several of the job's pieces may go on one node. Raises ChunkError as ``pack_chunks``."""
    cap = _capacity(shape)
    if sharing in ("excl", "exclhost"):
        groups = pack_chunks(chunks, arrangement, shape, sizes)
        return SharedLayout(groups, tuple(shape.ncpus for _ in groups), True)
    if arrangement == "pack":
        groups = pack_chunks(chunks, "pack", shape, sizes)
        need = _sum(_needs(chunks[u], shape) for u in groups[0])
        return SharedLayout(groups, (footprint(need, cap, shape.ncpus),), True)
    for i, chunk in enumerate(chunks, 1):
        check_chunk(chunk, i, shape, sizes)
    sizes_of = [footprint(_needs(c, shape), cap, shape.ncpus) for c in chunks]
    units = [i for i, c in enumerate(chunks) for _ in range(c.count)]
    return SharedLayout(
        [[u] for u in units], tuple(sizes_of[u] for u in units), arrangement != "free"
    )
