"""Reading and writing the Standard Workload Format (SWF) of the Parallel Workloads Archive.

An SWF file is a block of ``;`` comment lines (the header) followed by one line per job with
18 whitespace-separated numeric fields. The reader streams: it never holds the whole file.

After the 18 fields a job line may carry ``key=value`` tokens (Lee's utility paper's extension);
``utility=t0:v0,t1:v1,...`` is a job's utility function, times in seconds. Tools that
read only the 18 fields still read such a file; batchd keeps every token and writes it
back.
"""

from __future__ import annotations

import gzip
import io
import math
import os
import re
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from batchd.argtypes import MAX_NODES
from batchd.model.moldable import Moldable, MoldError, Speedup, parse_range
from batchd.model.times import CLOCK_MAX, CLOCK_RANGE, TIME_MIN
from batchd.model.utility import Utility, UtilityError
from batchd.workload.swf_fields import (
    DURATION_MAX,
    FIELD_MAX,
    N_FIELDS,
    SWF_FIELDS,
    PathLike,
    SWFError,
    cut,
    field_problem,
    number_too_long,
    shown,
)
from batchd.workload.trace_file import ENCODING, ERRORS, open_text, text_lines

__all__ = [
    "CSV_COLUMNS",
    "N_FIELDS",
    "PathLike",
    "SWF_FIELDS",
    "SWFError",
    "SWFHeader",
    "check_tokens",
    "iter_swf",
    "iter_swf_tokens",
    "open_text",
    "priority_class_of",
    "read_header",
]


# 0-based indices of the fields the writer replaces.
F_SUBMIT = 1
F_WAIT = 2
F_RUN = 3
F_ALLOC = 4
F_REQ_PROCS = 7
F_REQ_TIME = 8
F_STATUS = 10
F_PARTITION = 15

CSV_COLUMNS: tuple[str, ...] = (
    "job_id",
    "submission_time",
    "requested_number_of_resources",
    "requested_time",
    "success",
    "starting_time",
    "execution_time",
    "finish_time",
    "waiting_time",
    "turnaround_time",
    "stretch",
    "allocated_resources",
)

_ENCODING = ENCODING
_ERRORS = ERRORS

# "; Key: value", ";Key: value", ";        MaxProcs: 140". A continuation line such as
# ";              http://host/" is not a key (the colon is followed by "//").
_HEADER_RE = re.compile(r"^;\s*([A-Za-z][\w.-]*)\s*:(?!//)\s?(.*)$")
_LEADING_INT_RE = re.compile(r"^\s*([+-]?\d+)")
_START_RE = re.compile(r"^[+-]?\d{1,20}$")
# A token after the 18 fields: key=value, the key a name, the value anything but blanks.
_TOKEN_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_.-]*)=(\S+)$")
UTILITY_KEY = "utility"
# The job's priority class, 0 the highest (batchd utility writes it; prio-fifo ranks by it).
PRIORITY_CLASS_KEY = "priority_class"
_CLASS_RE = re.compile(r"^\d{1,9}$")
# A moldable job (Sabin et al.'s moldable paper): its width range and its speedup model.
NODES_KEY = "nodes"
SPEEDUP_KEY = "speedup"


@dataclass
class SWFHeader:
    """The comment lines of an SWF file, raw (no trailing newline) and in order.

    ``line_numbers`` (each line's number in its file) and ``source`` (the file) are
    known when the header was read from a file; errors about a header value name them.
    """

    lines: list[str] = field(default_factory=list)
    line_numbers: list[int] | None = None
    source: str = ""

    def value(self, key: str) -> str | None:
        """The value of the first ``; Key: value`` line with this (case-sensitive) key."""
        found = self._find(key)
        return None if found is None else found[1]

    def _find(self, key: str) -> tuple[int, str] | None:
        """The index of the first line with this key, and its value."""
        for i, line in enumerate(self.lines):
            m = _HEADER_RE.match(line)
            if m is not None and m.group(1) == key:
                return i, m.group(2).strip()
        return None

    def _error(self, index: int, problem: str) -> SWFError:
        line_no = None if self.line_numbers is None else self.line_numbers[index]
        return SWFError(self.source, line_no, problem)

    def _size(self, key: str) -> int | None:
        """A size (MaxNodes, MaxProcs): the leading integer of its value, None when there is
        none or it is not positive (``-1`` is the archive's "unknown"). SWFError when it is
        more than a machine may have."""
        found = self._find(key)
        if found is None:
            return None
        index, text = found
        m = _LEADING_INT_RE.match(text)
        if m is None:
            return None
        digits = m.group(1)
        size = int(digits) if len(digits) <= 18 else MAX_NODES + 1
        if size <= 0:
            return None
        if size > MAX_NODES:
            raise self._error(
                index,
                f"header {key}: {shown(text)} is more than a machine may have "
                f"(1 to {MAX_NODES:,}): give the size another way (--nodes N)",
            )
        return size

    @property
    def max_nodes(self) -> int | None:
        """``MaxNodes`` as an int; ``338 (batch partition; 512 total)`` gives 338."""
        return self._size("MaxNodes")

    @property
    def max_procs(self) -> int | None:
        """``MaxProcs`` as an int; trailing text after the number is ignored."""
        return self._size("MaxProcs")

    @property
    def unix_start(self) -> int | None:
        """``UnixStartTime``, when the trace's time 0 was (seconds since the epoch).

        None when the header has none (or it is empty). SWFError when it is not a whole
        number, or not a time the clock can run at.
        """
        found = self._find("UnixStartTime")
        if found is None or not found[1]:
            return None
        index, text = found
        if _START_RE.match(text) is None:
            raise self._error(
                index,
                f"header UnixStartTime: {shown(text)} is not a whole number of seconds "
                "since the epoch",
            )
        start = int(text)
        if not TIME_MIN <= start <= CLOCK_MAX:
            raise self._error(
                index,
                f"header UnixStartTime: {start} is not a time the clock can run at: "
                f"use {CLOCK_RANGE}",
            )
        return start


def read_header(path: PathLike) -> SWFHeader:
    """The leading comment block (blank lines inside it are skipped); stops at the first job."""
    lines: list[str] = []
    numbers: list[int] = []
    with open_text(path) as fh:
        for line_no, line in text_lines(path, fh):
            stripped = line.strip()
            if not stripped:
                continue
            if not stripped.startswith(";"):
                break
            lines.append(line.rstrip("\r\n"))
            numbers.append(line_no)
    return SWFHeader(lines, numbers, str(path))


def _parse_number(text: str) -> int | float:
    """int if the text is an integer, else a finite float; ValueError otherwise."""
    if "_" in text:  # int()/float() accept "1_000"; SWF does not
        raise ValueError(text)
    try:
        return int(text)
    except ValueError:
        pass
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def _parse_slow(path: PathLike, line_no: int, parts: list[str]) -> tuple[int | float, ...]:
    """Field by field: ints where the text is an integer, else finite floats."""
    values: list[int | float] = []
    for i, text in enumerate(parts):
        if number_too_long(text):
            problem = f"{shown(text)} is out of bounds: a field may be from {-FIELD_MAX:,} to {FIELD_MAX:,}"
            raise SWFError(path, line_no, problem, field_no=i + 1)
        try:
            values.append(_parse_number(text))
        except ValueError:
            problem = f"not a finite number: {shown(text)}"
            raise SWFError(path, line_no, problem, field_no=i + 1) from None
    return tuple(values)


def _check_bounds(path: PathLike, line_no: int, values: Sequence[int | float]) -> None:
    """Raise SWFError naming the first field out of its bounds (see swf_fields)."""
    for i, value in enumerate(values):
        problem = field_problem(i, value)
        if problem is not None:
            raise SWFError(path, line_no, problem, field_no=i + 1)


def _parse_mixed(path: PathLike, line_no: int, parts: list[str]) -> tuple[int | float, ...]:
    """A line with some non-integer fields: ints where the text is an integer, else floats."""
    # Usually only one or two fields (CPU time, memory) have a decimal point: parse the
    # rest as ints in one go, with those replaced by a placeholder.
    dotted = [i for i, text in enumerate(parts) if "." in text]
    try:
        if dotted:
            ints = parts.copy()
            for i in dotted:
                ints[i] = "0"
            values: list[int | float] = list(map(int, ints))
            for i in dotted:
                value = float(parts[i])
                if not math.isfinite(value):
                    raise ValueError(parts[i])
                values[i] = value
            return tuple(values)
    except ValueError:
        pass
    return _parse_slow(path, line_no, parts)  # the general rule; raises naming the field


def iter_swf(path: PathLike) -> Generator[tuple[int, tuple[int | float, ...]], None, None]:
    """Stream the job lines: (1-based line number, the 18 fields as int or float).

    Comment lines (``;``) and blank lines are skipped wherever they are; the header is
    available separately through :func:`read_header`. Tokens after the 18 fields are
    checked but not yielded (see :func:`iter_swf_tokens`).
    """
    for line_no, values, _ in iter_swf_tokens(path):
        yield line_no, values


def iter_swf_tokens(
    path: PathLike,
) -> Generator[tuple[int, tuple[int | float, ...], tuple[str, ...]], None, None]:
    """Like :func:`iter_swf`, with the ``key=value`` tokens after the 18 fields, as read.

    A token that is not ``key=value``, a key given twice, or a ``utility`` token that is
    not a valid utility function raises :class:`SWFError` naming the line; so does a
    value out of its bounds (:mod:`batchd.workload.swf_fields`), a line longer than
    ``MAX_LINE`` and gzip data that ends early.
    """
    with open_text(path) as fh:
        for line_no, line in text_lines(path, fh):
            parts = line.split()
            if not parts or parts[0][0] == ";":
                continue
            tokens: tuple[str, ...] = ()
            if len(parts) != N_FIELDS:
                if len(parts) < N_FIELDS:
                    raise SWFError(path, line_no, f"expected {N_FIELDS} fields, found {len(parts)}")
                tokens = tuple(parts[N_FIELDS:])
                check_tokens(path, line_no, tokens, len(parts))
                parts = parts[:N_FIELDS]
                line = " ".join(parts)
            if "_" in line:  # int()/float() accept "1_000"; SWF does not
                _parse_slow(path, line_no, parts)  # raises, naming the field
            values: tuple[int | float, ...]
            if "." in line:
                values = _parse_mixed(path, line_no, parts)
            else:
                try:
                    # Fast path: most job lines of the archive are plain integers.
                    values = tuple(map(int, parts))
                except ValueError:
                    values = _parse_mixed(path, line_no, parts)
            # Every bound is at least DURATION_MAX: only a line beyond it needs a look.
            if min(values) < -DURATION_MAX or max(values) > DURATION_MAX:
                _check_bounds(path, line_no, values)
            yield line_no, values, tokens


def check_tokens(
    path: PathLike, line_no: int, tokens: Sequence[str], n_parts: int | None = None
) -> Utility | None:
    """Check the tokens of a job line; the utility function they carry, if any."""
    keys: set[str] = set()
    utility = None
    for i, token in enumerate(tokens, N_FIELDS + 1):
        m = _TOKEN_RE.match(token)
        if m is None:
            found = "" if n_parts is None else f"expected {N_FIELDS} fields, found {n_parts}: "
            raise SWFError(
                path,
                line_no,
                f"{found}item {i} ({shown(token)}) is not a key=value token, the only thing "
                f"that may follow the {N_FIELDS} fields",
            )
        key, value = m.groups()
        if key in keys:
            raise SWFError(path, line_no, f"token {shown(key)} is given twice")
        keys.add(key)
        if key == UTILITY_KEY:
            try:
                utility = Utility.parse(value, seconds_only=True)
            except UtilityError as exc:
                raise SWFError(path, line_no, f"token {UTILITY_KEY}: {cut(str(exc))}") from None
        elif key in (NODES_KEY, SPEEDUP_KEY):
            try:
                parse_range(value) if key == NODES_KEY else Speedup.parse(value)
            except MoldError as exc:
                raise SWFError(path, line_no, f"token {key}: {cut(str(exc))}") from None
        elif key == PRIORITY_CLASS_KEY and _CLASS_RE.match(value) is None:
            raise SWFError(
                path,
                line_no,
                f"token {PRIORITY_CLASS_KEY}: {shown(value)} is not a priority class "
                "(an integer from 0, the highest, up to 999999999)",
            )
    return utility


def token_value(tokens: Sequence[str], key: str) -> str | None:
    """The value of ``key`` among a job line's tokens, or None."""
    prefix = key + "="
    for token in tokens:
        if token.startswith(prefix):
            return token[len(prefix) :]
    return None


def mold_of(
    tokens: Sequence[str], width: int, runtime: int, estimate: int, nodes: int
) -> Moldable | None:
    """The moldable shape a job line's tokens give (None: no ``nodes`` or ``speedup``).

    Without ``nodes`` the range is 1 to the machine's ``nodes``; without ``speedup`` the
    model is ``fixed``. A range wider than the machine is cut to it. Raises
    :class:`MoldError` when the requested width lies outside the range.
    """
    range_text = token_value(tokens, NODES_KEY)
    model_text = token_value(tokens, SPEEDUP_KEY)
    if range_text is None and model_text is None:
        return None
    low, high = (1, nodes) if range_text is None else parse_range(range_text)
    if low > nodes:
        raise MoldError(f"nodes {range_text}: the minimum is wider than the machine ({nodes})")
    speedup = Speedup("fixed") if model_text is None else Speedup.parse(model_text)
    return Moldable(low, min(high, nodes), speedup, width, runtime, estimate)


def priority_class_of(tokens: Sequence[str]) -> int:
    """The priority class a job line's tokens give (checked by ``check_tokens``), else 0."""
    prefix = PRIORITY_CLASS_KEY + "="
    for token in tokens:
        if token.startswith(prefix):
            return int(token[len(prefix) :])
    return 0


def _open_write(path: PathLike) -> TextIO:
    if os.fspath(path).endswith(".gz"):
        # mtime=0 keeps the output byte-identical across runs.
        gz = gzip.GzipFile(filename=os.fspath(path), mode="wb", mtime=0)
        return io.TextIOWrapper(gz, _ENCODING, _ERRORS, newline="\n")
    return open(path, "w", encoding=_ENCODING, errors=_ERRORS, newline="\n")
