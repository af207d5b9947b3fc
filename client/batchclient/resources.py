"""``-l`` resource lists: ``nodes=N[:ppn=1]``, ``select=N[:ncpus=1]``, ``walltime=...``.

batchd nodes have one slot each, so a job asks for a number of nodes and a
walltime. The old (``nodes=``) and new (``select=``) PBS syntaxes both give the
node count; one -l source may not mix them, as PBS says. ``nodes=MIN-MAX`` asks
for a moldable job: any width of the range, chosen by the scheduler.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .timefmt import parse_duration

KNOWN = "nodes, select, walltime (and place, ignored)"
MIXED = "Jobs cannot use both new and old syntax"
_RANGE = re.compile(r"^([0-9]+)-([0-9]+)$")


class ResourceError(ValueError):
    """A resource request batchd cannot honour; the message names it."""


@dataclass
class Resources:
    nodes: int | None = None
    walltime: int | None = None
    syntax: str | None = None  # "nodes" or "select": the spelling that gave the count
    nodes_max: int | None = None  # nodes=MIN-MAX: the top of a moldable job's range

    def overridden_by(self, other: Resources) -> Resources:
        """These resources with every one that ``other`` sets replaced (command line wins)."""
        width = other if other.nodes is not None else self
        return Resources(
            nodes=width.nodes,
            walltime=other.walltime if other.walltime is not None else self.walltime,
            syntax=width.syntax,
            nodes_max=width.nodes_max,
        )


def parse_walltime(value: str) -> int:
    try:
        seconds = parse_duration(value)
    except ValueError as exc:
        raise ResourceError(f"walltime={value}: {exc}") from None
    if seconds <= 0:
        raise ResourceError(f"walltime={value}: must be positive")
    return seconds


def _positive(text: str, item: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise ResourceError(f"{item}: the number of nodes must be a positive integer")
    return int(text)


def _one_slot(name: str, value: str, ask: str) -> None:
    if not value.isdigit():
        raise ResourceError(f"{name}={value}: must be an integer")
    if int(value) != 1:
        raise ResourceError(f"{name}={value}: batchd nodes have one slot each; ask for {ask}=N")


def parse_nodes(value: str, item: str | None = None) -> int:
    """``N[:ppn=1][+N[:ppn=1]...]`` -> the total number of nodes."""
    item = item or f"nodes={value}"
    total = 0
    for chunk in value.split("+"):
        count, *props = chunk.split(":")
        total += _positive(count, item)
        for prop in props:
            key, eq, val = prop.partition("=")
            if key.lower() == "ppn" and eq:
                _one_slot("ppn", val, "nodes")
            else:
                raise ResourceError(f"{item}: unknown node property {prop!r}")
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


def parse_select(value: str, item: str | None = None) -> int:
    """``N[:ncpus=1][+...]`` (a chunk without a count is one chunk) -> number of nodes."""
    item = item or f"select={value}"
    total = 0
    for chunk in value.split("+"):
        parts = chunk.split(":")
        if parts[0] and "=" not in parts[0]:
            total += _positive(parts[0], item)
            parts = parts[1:]
        elif parts[0]:
            total += 1
        else:
            raise ResourceError(f"{item}: the number of nodes must be a positive integer")
        for res in parts:
            key, eq, val = res.partition("=")
            if key.lower() in ("ncpus", "mpiprocs") and eq:
                _one_slot(key.lower(), val, "select")
            else:
                raise ResourceError(f"{item}: unknown chunk resource {res!r}")
    return total


def parse_resources(specs: Iterable[str]) -> Resources:
    """All ``-l`` arguments of one source (command line, or #PBS directives), in order.

    A later value of the same resource replaces an earlier one.
    """
    res = Resources()
    seen: set[str] = set()
    for spec in specs:
        for item in spec.split(","):
            item = item.strip()
            if not item:
                continue
            key, eq, value = item.partition("=")
            key = key.strip().lower()
            value = value.strip()
            if not eq or not value:
                raise ResourceError(f"{item}: expected RESOURCE=VALUE")
            if key == "nodes" and _RANGE.match(value):
                res.nodes, res.nodes_max = parse_node_range(value, item)
            elif key == "nodes":
                res.nodes, res.nodes_max = parse_nodes(value, item), None
            elif key == "select":
                res.nodes, res.nodes_max = parse_select(value, item), None
            elif key == "walltime":
                res.walltime = parse_walltime(value)
                continue
            elif key == "place":
                continue
            else:
                raise ResourceError(f"{item}: unknown resource {key!r}; batchd knows {KNOWN}")
            seen.add(key)
            if len(seen & {"nodes", "select"}) == 2:
                raise ResourceError(f"nodes= and select=: {MIXED}")
            res.syntax = key
    return res
