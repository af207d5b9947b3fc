"""``-l`` resource lists, as PBS Pro's qsub takes them, into the API's request.

- new syntax: ``select=N:ncpus=C:mem=M:mpiprocs=P:ompthreads=T:RES=V[+...]`` and
  ``place=[free|pack|scatter|vscatter][:excl|shared|exclhost][:group=RES]``;
- old syntax: ``nodes=N[:ppn=P][:PROPERTY][+...][#excl|#shared]``, and job-wide
  ``ncpus=``, ``mem=``; ``nodes=MIN-MAX`` asks for a moldable job (any width of
  the range, chosen by the scheduler);
- ``walltime=``, and any other ``RES=VALUE``: a resource the site defines (the
  daemon refuses one it does not know).

One source (the command line, or the #PBS directives) may not mix the
syntaxes, with PBS's words. The daemon is the authority on names, types and
sizes; this module checks the form, so that a #PBS error names its line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .hints import Any
from .timefmt import parse_duration

NODES_WITH_SELECT = "Cannot be used with select or place: nodes"
MIXED = "jobs cannot use both new and old syntax"
JOB_WIDE = '"-lresource=" cannot be used with "select" or "place", resource is'
DUPLICATE = "duplicated resource within a section of a select specification, resource is"
PLACE_NO_SELECT = 'Cannot have "place" without "select"'
_RANGE = re.compile(r"^([0-9]+)-([0-9]+)$")
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
_SIZE = re.compile(r"^[0-9]+(?:[kmgtp]?[bw]?)$", re.IGNORECASE)
ARRANGEMENTS = ("free", "pack", "scatter", "vscatter")
SHARINGS = ("excl", "shared", "exclhost")
INTEGER_CHUNK = ("ncpus", "mpiprocs", "ompthreads")
PER_NODE = ("ncpus", "mem")  # built-in job-wide resources that belong in chunks


class ResourceError(ValueError):
    """A resource request batchd cannot honour; the message names it."""


class Resources:
    """What ``-l`` asked for. A plain class, not a dataclass: importing ``dataclasses``
    (with ``inspect``) would cost every qsub several milliseconds of its start."""

    __slots__ = (
        "nodes",
        "walltime",
        "syntax",
        "nodes_max",
        "nodes_spec",
        "select",
        "place",
        "wide",
    )

    def __init__(
        self,
        nodes: int | None = None,
        walltime: int | None = None,
        syntax: str | None = None,
        nodes_max: int | None = None,
        nodes_spec: str | None = None,
        select: list[dict[str, Any]] | None = None,
        place: str | None = None,
        wide: dict[str, str] | None = None,
    ) -> None:
        self.nodes = nodes  # the chunks asked for (a moldable job: its narrowest width)
        self.walltime = walltime
        self.syntax = syntax  # "nodes" or "select": the spelling that gave the chunks
        self.nodes_max = nodes_max  # nodes=MIN-MAX: the top of a moldable job's range
        self.nodes_spec = nodes_spec  # nodes=... as written (old syntax), not a range
        self.select = select  # the API's chunks
        self.place = place
        self.wide = {} if wide is None else wide  # job-wide: ncpus, mem, the site's

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Resources):
            return NotImplemented
        return self._fields() == other._fields()

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={v!r}" for n, v in zip(self.__slots__, self._fields(), strict=True))
        return f"Resources({shown})"

    def overridden_by(self, other: Resources) -> Resources:
        """These resources with every one that ``other`` sets replaced (command line wins)."""
        width = other if other.nodes is not None else self
        return Resources(
            nodes=width.nodes,
            walltime=other.walltime if other.walltime is not None else self.walltime,
            syntax=width.syntax,
            nodes_max=width.nodes_max,
            nodes_spec=width.nodes_spec,
            select=width.select,
            place=other.place if other.place is not None else self.place,
            wide={**self.wide, **other.wide},
        )

    def check_mixing(self, seen: frozenset[str] = frozenset()) -> None:
        """PBS's rule: select and place do not go with nodes nor with job-wide ncpus/mem;
        ``seen``: the syntaxes one source used (a later one replaces the width)."""
        seen = seen | ({self.syntax} if self.syntax else set())
        new = "select" in seen or self.place is not None
        if new and "nodes" in seen:
            raise ResourceError(f"nodes= and select=: {NODES_WITH_SELECT} ({MIXED})")
        wide = [n for n in PER_NODE if n in self.wide]
        if new and wide:
            raise ResourceError(f"{wide[0]}=: {JOB_WIDE}: {wide[0]} ({MIXED})")

    def check_complete(self) -> None:
        """What one source may leave to another, the whole request must have."""
        self.check_mixing()
        if self.place is not None and self.syntax != "select":
            raise ResourceError(f"place={self.place}: {PLACE_NO_SELECT}")

    def body(self) -> dict[str, Any]:
        """The JobSubmit fields of these resources (walltime aside)."""
        out: dict[str, Any] = {}
        if self.nodes_max is not None:
            out["nodes"], out["nodes_max"] = self.nodes, self.nodes_max
        elif self.select is not None:
            out["select"] = self.select
        elif self.nodes_spec is not None and self.nodes_spec.isdigit():
            out["nodes"] = int(self.nodes_spec)
        elif self.nodes_spec is not None:
            out["nodes_spec"] = self.nodes_spec
        if self.place is not None:
            out["place"] = self.place
        if self.wide:
            out["resources"] = dict(self.wide)
        return out


def parse_walltime(value: str) -> int:
    try:
        seconds = parse_duration(value)
    except ValueError as exc:
        raise ResourceError(f"walltime={value}: {exc}") from None
    if seconds <= 0:
        raise ResourceError(f"walltime={value}: must be positive")
    return seconds


def check_size(value: str, item: str) -> str:
    if not _SIZE.match(value):
        raise ResourceError(
            f"{item}: {value!r} is not a size: an integer with an optional unit b, kb, mb, "
            "gb, tb, pb (or w, kw, ... for 8-byte words), e.g. 4gb"
        )
    return value


def _positive(text: str, item: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise ResourceError(f"{item}: the number of nodes must be a positive integer")
    return int(text)


def parse_nodes(value: str, item: str | None = None) -> int:
    """``N[:ppn=P][:cpp=C][:PROP][+...][#excl|#shared]`` -> the number of nodes."""
    item = item or f"nodes={value}"
    spec, _, mods = value.partition("#")
    for mod in mods.split("#") if mods else []:
        if mod.lower() not in ("excl", "shared"):
            raise ResourceError(f"{item}: #{mod}: only #excl or #shared")
    total = 0
    for part in spec.split("+"):
        count, *props = part.split(":")
        if count and _NAME.match(count):
            props, count = [count, *props], "1"  # a spec without a count: one node
        total += _positive(count, item)
        for prop in props:
            key, eq, val = prop.partition("=")
            if key.lower() in ("ppn", "cpp", "ncpus"):
                if not eq or not val.isdigit() or (key.lower() == "ppn" and int(val) < 1):
                    raise ResourceError(f"{item}: {prop}: {key} takes a positive integer")
            elif eq or not _NAME.match(key):
                raise ResourceError(f"{item}: {prop!r} is not ppn=P, cpp=C or a node property")
    return total


def parse_node_range(value: str, item: str) -> tuple[int, int]:
    """``MIN-MAX`` -> (MIN, MAX): a moldable job's widths, 1 <= MIN <= MAX."""
    m = _RANGE.match(value)
    assert m is not None
    low, high = int(m.group(1)), int(m.group(2))
    if low < 1:
        raise ResourceError(f"{item}: the minimum number of nodes must be at least 1")
    if high < low:
        raise ResourceError(f"{item}: the maximum {high} is below the minimum {low}")
    return low, high


def parse_chunk(text: str, item: str) -> dict[str, Any]:
    """``2:ncpus=4:mem=8gb:ngpus=1`` -> the API's chunk (a count alone: ncpus=1)."""
    parts = text.split(":")
    chunk: dict[str, Any] = {"count": 1}
    if parts[0] and "=" not in parts[0]:
        chunk["count"] = _positive(parts[0], item)
        parts = parts[1:]
    elif not parts[0]:
        raise ResourceError(f"{item}: the number of nodes must be a positive integer")
    custom: dict[str, str] = {}
    for res in parts:
        key, eq, val = res.partition("=")
        name = key.strip()
        if not eq or not val or not _NAME.match(name):
            raise ResourceError(f"{item}: {res!r} is not RESOURCE=VALUE")
        if name in chunk or name in custom:
            raise ResourceError(f"{item}: {DUPLICATE}: {name}")
        if name in INTEGER_CHUNK:
            if not val.isdigit():
                raise ResourceError(f"{item}: {name}={val}: must be a non-negative integer")
            chunk[name] = int(val)
        elif name == "mem":
            chunk["mem"] = check_size(val, item)
        else:
            custom[name] = val
    if custom:
        chunk["custom"] = custom
    return chunk


def parse_select(value: str, item: str | None = None) -> list[dict[str, Any]]:
    """``N:RES=V[:...][+...]`` -> the chunks."""
    item = item or f"select={value}"
    return [parse_chunk(part, item) for part in value.split("+")]


def parse_place(value: str, item: str) -> str:
    kinds = {"arrangement": ARRANGEMENTS, "sharing": SHARINGS}
    seen: set[str] = set()
    for word in value.split(":"):
        low = word.lower()
        kind = next((k for k, words in kinds.items() if low in words), None)
        if kind is None and low.startswith("group=") and _NAME.match(word[6:]):
            kind = "group"
        if kind is None or kind in seen:
            raise ResourceError(
                f"{item}: {word!r}: place takes one of {', '.join(ARRANGEMENTS)}, one of "
                f"{', '.join(SHARINGS)} and group=RESOURCE, joined by ':'"
            )
        seen.add(kind)
    return value


def parse_resources(specs: Iterable[str]) -> Resources:
    """All ``-l`` arguments of one source (command line, or #PBS directives), in order.

    A later value of the same resource replaces an earlier one.
    """
    res = Resources()
    syntaxes: set[str] = set()
    for spec in specs:
        for item in _items(spec):
            key, eq, value = item.partition("=")
            key = key.strip()
            value = value.strip()
            if not eq or not value or not _NAME.match(key):
                raise ResourceError(f"{item}: expected RESOURCE=VALUE")
            low = key.lower()
            if low == "nodes" and _RANGE.match(value):
                res.nodes, res.nodes_max = parse_node_range(value, item)
                res.nodes_spec = res.select = None
                res.syntax = "nodes"
            elif low == "nodes":
                res.nodes, res.nodes_max = parse_nodes(value, item), None
                res.nodes_spec, res.select = value, None
                res.syntax = "nodes"
            elif low == "select":
                res.select = parse_select(value, item)
                res.nodes = sum(c["count"] for c in res.select)
                res.nodes_max = res.nodes_spec = None
                res.syntax = "select"
            elif low == "place":
                res.place = parse_place(value, item)
            elif low == "walltime":
                res.walltime = parse_walltime(value)
            elif low == "ncpus":
                if not value.isdigit():
                    raise ResourceError(f"{item}: must be a non-negative integer")
                res.wide["ncpus"] = value
            elif low == "mem":
                res.wide["mem"] = check_size(value, item)
            else:
                res.wide[key] = value
            if res.syntax:
                syntaxes.add(res.syntax)
    res.check_mixing(frozenset(syntaxes))
    return res


def _items(spec: str) -> list[str]:
    """The ``RES=VALUE`` items of one -l argument: split at commas (a select's chunks
    hold none), blanks dropped."""
    return [item.strip() for item in spec.split(",") if item.strip()]
