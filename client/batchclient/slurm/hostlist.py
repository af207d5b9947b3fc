"""Slurm's hostlists: ``node[001-004,007],login1`` <-> the names it stands for."""

from __future__ import annotations

import re

_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def compress(names: list[str]) -> str:
    """The names as one hostlist, in the order given, each run of consecutive numbers
    with the same prefix and width folded into a range (``node[001-003,005]``)."""
    groups: list[tuple[str, int, list[int]]] = []  # prefix, digits, numbers
    plain: dict[int, str] = {}
    for name in names:
        m = _NUMBERED.match(name)
        if m is None:
            plain[len(groups)] = name
            groups.append(("", -1, []))
            continue
        prefix, digits = m.group(1), m.group(2)
        last = groups[-1] if groups else None
        if last is not None and last[0] == prefix and last[1] == len(digits) and last[2]:
            last[2].append(int(digits))
        else:
            groups.append((prefix, len(digits), [int(digits)]))
    parts = []
    for i, (prefix, width, numbers) in enumerate(groups):
        if width < 0:
            parts.append(plain[i])
        elif len(numbers) == 1:
            parts.append(f"{prefix}{numbers[0]:0{width}d}")
        else:
            parts.append(f"{prefix}[{_ranges(numbers, width)}]")
    return ",".join(parts)


def _ranges(numbers: list[int], width: int) -> str:
    out: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(f"{start:0{width}d}" if start == prev else f"{start:0{width}d}-{prev:0{width}d}")
        if n is not None:
            start = prev = n
    return ",".join(out)


def expand(text: str) -> list[str]:
    """The names a hostlist stands for; ValueError naming what cannot be read."""
    names: list[str] = []
    for part in split_top(text):
        m = re.fullmatch(r"([^\[\]]*)\[([^\[\]]+)\]([^\[\]]*)", part)
        if m is None:
            if "[" in part or "]" in part or not part:
                raise ValueError(f"invalid hostlist: {text}")
            names.append(part)
            continue
        prefix, body, suffix = m.groups()
        for item in body.split(","):
            lo, sep, hi = item.partition("-")
            if not lo.isdigit() or (sep and not hi.isdigit()):
                raise ValueError(f"invalid hostlist: {text}")
            first, last = int(lo), int(hi) if sep else int(lo)
            if last < first or last - first > 1_000_000:
                raise ValueError(f"invalid hostlist: {text}")
            names.extend(f"{prefix}{n:0{len(lo)}d}{suffix}" for n in range(first, last + 1))
    return names


def split_top(text: str) -> list[str]:
    """The comma-separated parts outside brackets (``a[1,2],b`` -> ``a[1,2]``, ``b``),
    blanks around them removed, empty ones left out."""
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]
