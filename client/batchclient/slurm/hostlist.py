"""Slurm's hostlists: ``node[001-004,007],login1`` <-> the names it stands for."""

from __future__ import annotations

import re

_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def compress(names: list[str]) -> str:
    """The names as one hostlist, as Slurm writes it: sorted and made unique, names that
    differ only in a trailing number in one bracket (``node[001-003,005]``). Numbers with
    leading zeros keep their width; numbers without join whatever their width
    (``n9,n10`` is ``n[9-10]``), as Slurm's hostranges combine."""
    plain: list[str] = []
    numbered: list[tuple[str, int, int]] = []  # prefix, number, digits
    for name in sorted(set(names)):
        m = _NUMBERED.match(name)
        if m is None:
            plain.append(name)
        else:
            numbered.append((m.group(1), int(m.group(2)), len(m.group(2))))
    padded = {(p, w) for p, n, w in numbered if len(str(n)) < w}
    groups: dict[tuple[str, int], list[int]] = {}
    for prefix, number, width in numbered:
        groups.setdefault((prefix, width if (prefix, width) in padded else 0), []).append(number)
    out = [(name, name) for name in plain]
    for (prefix, width), numbers in groups.items():
        numbers.sort()
        if len(numbers) == 1:
            out.append((prefix, f"{prefix}{numbers[0]:0{width}d}"))
        else:
            out.append((prefix, f"{prefix}[{_ranges(numbers, width)}]"))
    return ",".join(text for _, text in sorted(out))


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
