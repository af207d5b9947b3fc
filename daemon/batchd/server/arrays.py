"""Job arrays as PBS has them (``qsub -J X-Y[:Z][%N]``): ranges, ids and subjob keys.

An array ``12[]`` is one record holding its range and one letter per subjob; its
subjob ``12[3]`` is an ordinary job record once it is given to the scheduler. The
scheduler and the state database know every job by one integer: a plain job's is
its sequence number, a subjob's is ``SUBJOB_BASE + (seq << INDEX_BITS) + index``.
Those keys sort after every plain job and, within an array, in index order, and
stay below 2**53, so a browser reads them exactly.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

INDEX_BITS = 20
MAX_INDEX = (1 << INDEX_BITS) - 1  # 1,048,575
SUBJOB_BASE = 1 << 52
MAX_ARRAY_SEQ = (1 << 32) - 1  # SUBJOB_BASE + (seq << INDEX_BITS) + index < 2**53

# A subjob's letter in its array: queued (held too: the array's holds say which),
# running, or expired (finished or deleted).
QUEUED, RUNNING, EXPIRED = "Q", "R", "X"

RANGE_FORM = "X-Y[:Z] (X < Y, both from 0 to 1048575, the step Z at least 1)"
LIST_FORM = "a list of indices and ranges, as Slurm's --array takes it: 1,3,5-7 or 1-9:2,20"
_RANGE = re.compile(r"^([0-9]+)-([0-9]+)(?::([0-9]+))?$")
_LIST_ITEM = re.compile(r"^([0-9]+)(?:-([0-9]+)(?::([0-9]+))?)?$")
# 12, 12[], 12[3], each with an optional .server
_REF = re.compile(r"^([0-9]+)(\[([0-9]*)\])?(?:\.([A-Za-z0-9_.-]+))?$")


class RangeError(ValueError):
    """An array range PBS would refuse; the message says what is wrong."""


def parse_range(text: str) -> tuple[int, int, int]:
    """``X-Y[:Z]`` -> (X, Y, Z), as PBS's ``chk_Jrange`` and ``parse_subjob_index`` take it."""
    m = _RANGE.match(text.strip())
    if m is None:
        raise RangeError(f"{text!r} is not a range: give {RANGE_FORM}")
    start, end = int(m.group(1)), int(m.group(2))
    step = int(m.group(3)) if m.group(3) is not None else 1
    if start >= end:
        raise RangeError(f"{text!r}: the first index must be below the last ({RANGE_FORM})")
    if step < 1:
        raise RangeError(f"{text!r}: the step must be at least 1")
    if end > MAX_INDEX:
        raise RangeError(f"{text!r}: indices go up to {MAX_INDEX} in batchd")
    return start, end, step


def _shown(text: str) -> str:
    return repr(text) if len(text) <= 40 else f"{text[:30]!r}... ({len(text)} characters)"


def parse_indices(
    text: str, limit: int = MAX_INDEX + 1, expand: bool = True
) -> tuple[int, int, int, tuple[int, ...] | None]:
    """An array's indices: ``X-Y[:Z]`` as PBS takes it (start, end, step, None), or a list
    of indices and ranges (``1,3,5-7``, a single ``5``: Slurm's --array) as (first, last,
    1, the sorted indices). RangeError names what is wrong, as does a list whose items
    count more than ``limit`` indices (counted before any is made). ``expand=False``:
    checked only, the indices not made (None)."""
    text = text.strip()
    if _RANGE.match(text):
        return (*parse_range(text), None)
    items: list[range] = []
    total = 0
    for item in text.split(","):
        m = _LIST_ITEM.match(item.strip())
        if m is None:
            raise RangeError(f"{_shown(text)} is neither {RANGE_FORM} nor {LIST_FORM}")
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) is not None else first
        step = int(m.group(3)) if m.group(3) is not None else 1
        if last < first or step < 1:
            raise RangeError(f"{_shown(text)}: {item.strip()} runs backwards or has a step below 1")
        if last > MAX_INDEX:
            raise RangeError(f"{_shown(text)}: indices go up to {MAX_INDEX} in batchd")
        items.append(range(first, last + 1, step))
        total += len(items[-1])
        if total > limit:
            raise RangeError(f"{_shown(text)}: more than {limit} indices")
    low, high = min(r.start for r in items), max(r[-1] for r in items)
    if not expand:
        return low, high, 1, None
    indices = tuple(sorted({i for r in items for i in r}))
    return low, high, 1, indices


def subjob_key(seq: int, index: int) -> int:
    return SUBJOB_BASE + (seq << INDEX_BITS) + index


def is_subjob_key(key: int) -> bool:
    return key >= SUBJOB_BASE


def split_key(key: int) -> tuple[int, int]:
    """A subjob's key -> (its array's seq, its index)."""
    rest = key - SUBJOB_BASE
    return rest >> INDEX_BITS, rest & MAX_INDEX


def label(key: int, array: bool = False) -> str:
    """A job's id without the server: ``12``, ``12[]`` (``array``) or ``12[3]``."""
    if is_subjob_key(key):
        seq, index = split_key(key)
        return f"{seq}[{index}]"
    return f"{key}[]" if array else str(key)


@dataclass(frozen=True, slots=True)
class JobRef:
    """A job id as written: a job (``index`` None, not ``array``), an array, or a subjob."""

    seq: int
    array: bool = False
    index: int | None = None

    @property
    def subjob(self) -> bool:
        return self.index is not None

    def text(self, server: str) -> str:
        if self.index is not None:
            return f"{self.seq}[{self.index}].{server}"
        return f"{self.seq}{'[]' if self.array else ''}.{server}"


def parse_ref(text: str, server: str, seq_digits: int) -> JobRef:
    """``12``, ``12[]``, ``12[3]``, each alone or with ``.server`` (only this server's)."""
    m = _REF.match(text.strip())
    if not m:
        raise ValueError(f"{text!r} is not a job id (SEQ, SEQ[] or SEQ[INDEX], then .{server})")
    if len(m.group(1)) > seq_digits:
        raise ValueError(f"{text!r} is not a job id: at most {seq_digits} digits")
    if m.group(4) is not None and m.group(4) != server:
        raise ValueError(f"job id {text!r} belongs to server {m.group(4)!r}, not {server!r}")
    seq = int(m.group(1))
    if m.group(2) is None:
        return JobRef(seq)
    if m.group(3) == "":
        return JobRef(seq, array=True)
    index = int(m.group(3)) if len(m.group(3)) <= 7 else MAX_INDEX + 1
    return JobRef(seq, array=True, index=index)


def format_ranges(indices: Iterable[int], step: int) -> str:
    """Indices as PBS's ``range_to_str`` writes them: runs ``X-Y`` (``X-Y:Z`` with the
    array's step), single ``X``, joined by commas; ``-`` when none is left."""
    parts: list[str] = []
    run: list[int] = []

    def close() -> None:
        if len(run) > 1:
            parts.append(f"{run[0]}-{run[-1]}" + (f":{step}" if step > 1 else ""))
        elif run:
            parts.append(str(run[0]))

    for i in indices:
        if run and i != run[-1] + step:
            close()
            run = []
        run.append(i)
    close()
    return ",".join(parts) or "-"


@dataclass(slots=True)
class ArraySpec:
    """An array's range, its limit of running subjobs and each subjob's letter (by position:
    index ``start + position * step``)."""

    start: int
    end: int
    step: int
    max_run: int | None = None
    letters: bytearray = field(default_factory=bytearray)
    # An array of listed indices (Slurm's --array=1,3,5-7): sorted; None for a range.
    indices: tuple[int, ...] | None = None
    # Exit statuses seen: any above 0, any below 0 (the array's own: PBS's 0, 1 or 2).
    failed: bool = False
    killed: bool = False

    def __post_init__(self) -> None:
        if not self.letters:
            self.letters = bytearray(QUEUED.encode() * self.count)

    @property
    def count(self) -> int:
        if self.indices is not None:
            return len(self.indices)
        return (self.end - self.start) // self.step + 1

    def index(self, position: int) -> int:
        if self.indices is not None:
            return self.indices[position]
        return self.start + position * self.step

    def position(self, index: int) -> int | None:
        """Where an index is in the array; None if it is not one of its indices."""
        if self.indices is not None:
            at = bisect_left(self.indices, index)
            return at if at < len(self.indices) and self.indices[at] == index else None
        off = index - self.start
        if off < 0 or index > self.end or off % self.step:
            return None
        return off // self.step

    def letter(self, position: int) -> str:
        return chr(self.letters[position])

    def set(self, position: int, letter: str) -> None:
        self.letters[position] = ord(letter)

    def tally(self) -> dict[str, int]:
        return {x: self.letters.count(x.encode()) for x in (QUEUED, RUNNING, EXPIRED)}

    @property
    def begun(self) -> bool:
        return RUNNING.encode() in self.letters or EXPIRED.encode() in self.letters

    @property
    def done(self) -> bool:
        return self.letters.count(EXPIRED.encode()) == len(self.letters)

    def submitted(self) -> str:
        if self.indices is not None:
            return format_ranges(self.indices, 1)
        return f"{self.start}-{self.end}" + (f":{self.step}" if self.step > 1 else "")

    def remaining(self) -> str:
        """``array_indices_remaining``: the indices still queued."""
        q = ord(QUEUED)
        return format_ranges(
            (self.index(p) for p, x in enumerate(self.letters) if x == q), self.step
        )

    def state_count(self) -> str:
        """``array_state_count`` as PBS writes it (its Exiting is always 0 here)."""
        t = self.tally()
        return f"Queued:{t[QUEUED]} Running:{t[RUNNING]} Exiting:0 Expired:{t[EXPIRED]}"

    def exit_status(self) -> int:
        """PBS's array exit status: 1 if a subjob exited above 0, else 2 if one was killed
        by the server (below 0), else 0."""
        return 1 if self.failed else 2 if self.killed else 0

    def to_row(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "end": self.end,
            "step": self.step,
            "max_run": self.max_run,
            "letters": self.letters.decode(),
            "failed": self.failed,
            "killed": self.killed,
            "indices": list(self.indices) if self.indices is not None else None,
        }

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> ArraySpec:
        return cls(
            start=int(row["start"]),
            end=int(row["end"]),
            step=int(row["step"]),
            max_run=row.get("max_run"),
            letters=bytearray(str(row["letters"]).encode()),
            failed=bool(row.get("failed", False)),
            killed=bool(row.get("killed", False)),
            indices=tuple(int(i) for i in row["indices"]) if row.get("indices") else None,
        )
