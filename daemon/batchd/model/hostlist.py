"""Host lists in Slurm's compressed form: ``node[001-003,005],login1``.

Names that differ only in a trailing number share one bracket: numbers written with
leading zeros keep their width (``node001``..``node004`` is ``node[001-004]``, and
``node100`` joins them), numbers without are as wide as they are (``n9,n10`` is
``n[9-10]``), as Slurm's hostlist combines ranges.
The names are sorted and made unique first, as Slurm's ``hostlist_uniq`` does.
"""

from __future__ import annotations

import re

_TAIL = re.compile(r"^(.*?)([0-9]+)$")


def _split(name: str) -> tuple[str, int, int] | None:
    """``node007`` -> ("node", 7, 3); a name without a trailing number: None."""
    m = _TAIL.match(name)
    if m is None:
        return None
    return m.group(1), int(m.group(2)), len(m.group(2))


def _ranges(numbers: list[int], width: int) -> str:
    """Sorted unique numbers -> ``001-003,005``."""
    parts: list[str] = []
    first = last = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == last + 1:
            last = n
            continue
        text = f"{first:0{width}d}"
        if last != first:
            text += f"-{last:0{width}d}"
        parts.append(text)
        if n is not None:
            first = last = n
    return ",".join(parts)


def compress(names: list[str]) -> str:
    """The host list of ``names`` as Slurm writes it (SLURM_JOB_NODELIST, squeue's list)."""
    groups: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    numbered: list[tuple[str, int, int]] = []
    for name in sorted(set(names)):
        split = _split(name)
        if split is None:
            plain.append(name)
        else:
            numbered.append(split)
    padded = {(p, w) for p, n, w in numbered if len(str(n)) < w}
    for prefix, number, width in numbered:
        key = (prefix, width if (prefix, width) in padded else 0)
        groups.setdefault(key, []).append(number)
    out: list[tuple[str, str]] = [(name, name) for name in plain]
    for (prefix, width), numbers in groups.items():
        numbers.sort()
        if len(numbers) == 1:
            out.append((prefix, f"{prefix}{numbers[0]:0{width}d}"))
        else:
            out.append((prefix, f"{prefix}[{_ranges(numbers, width)}]"))
    return ",".join(text for _, text in sorted(out))
