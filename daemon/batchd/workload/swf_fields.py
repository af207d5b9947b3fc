"""The 18 fields of an SWF job line, the error that names a bad one, and their bounds.

Every value of a job line must lie within ``FIELD_MAX`` of zero, and the run time and
requested time within ``DURATION_MAX``: what the scheduler's 64-bit arithmetic can hold
with room to spare, and what keeps a job's end (a submit on the clock plus a duration)
a date. Whether a submit time lies on the clock depends on the header's UnixStartTime:
the loader checks that.
"""

from __future__ import annotations

import os
import re

__all__ = [
    "DURATION_FIELDS",
    "DURATION_MAX",
    "FIELD_MAX",
    "MAX_LINE",
    "N_FIELDS",
    "SWF_FIELDS",
    "SWFError",
    "cut",
    "field_problem",
    "number_too_long",
    "shown",
]

SWF_FIELDS: tuple[str, ...] = (
    "job_number",
    "submit_time",
    "wait_time",
    "run_time",
    "allocated_processors",
    "average_cpu_time",
    "used_memory",
    "requested_processors",
    "requested_time",
    "requested_memory",
    "status",
    "user_id",
    "group_id",
    "executable_number",
    "queue_number",
    "partition_number",
    "preceding_job_number",
    "think_time",
)
N_FIELDS = len(SWF_FIELDS)

FIELD_MAX = 10**15
# The archive writes 2147483647 (68 years) for "no limit" as a requested time; a clock
# time (at most 9899-12-31) plus this still is a date (before 9999-12-31).
DURATION_MAX = 2**31 - 1
DURATION_FIELDS = frozenset({3, 8})  # 0-based: run_time, requested_time
# The longest line a trace may have (a job line with its key=value tokens, a comment).
MAX_LINE = 1 << 20
# A number text longer than this is refused without converting it.
_MAX_NUMBER_TEXT = 64
_SHOWN = 40
# How repr() shows a byte that is not UTF-8, read with "surrogateescape".
_ESCAPED_BYTE = re.compile(r"\\udc([89a-f][0-9a-f])")

PathLike = str | os.PathLike[str]


class SWFError(ValueError):
    """A malformed SWF file; the message names the file, the line (when there is one) and
    the field (when known)."""

    def __init__(
        self,
        path: PathLike,
        line_no: int | None,
        problem: str,
        field_no: int | None = None,
    ) -> None:
        self.path = str(path)
        self.line_no = line_no
        self.field_no = field_no
        self.problem = problem
        where = self.path if line_no is None else f"{self.path}:{line_no}"
        if field_no is not None:
            problem = f"field {field_no} ({SWF_FIELDS[field_no - 1]}): {problem}"
        super().__init__(f"{where}: {problem}" if where else problem)


def shown(text: str, limit: int = _SHOWN) -> str:
    """``text`` quoted for a message: bytes that are not UTF-8 as ``\\xNN``, and cut to
    ``limit`` characters with the full length said (a field may be megabytes long)."""
    quoted = _ESCAPED_BYTE.sub(r"\\x\1", repr(text[:limit]))
    if len(text) <= limit:
        return quoted
    return f"{quoted}... ({len(text):,} characters)"


def cut(message: str, limit: int = 300) -> str:
    """A message that may quote a long value, cut to ``limit`` characters."""
    if len(message) <= limit:
        return message
    return f"{message[:limit]}... ({len(message):,} characters)"


def number_too_long(text: str) -> bool:
    """Whether a field's text is too long to be converted at all."""
    return len(text) > _MAX_NUMBER_TEXT


def field_problem(index: int, value: int | float) -> str | None:
    """Why the value of (0-based) field ``index`` is out of bounds, or None."""
    bound = DURATION_MAX if index in DURATION_FIELDS else FIELD_MAX
    if -bound <= value <= bound:
        return None
    what = "a duration" if index in DURATION_FIELDS else "a field"
    return f"{value} is out of bounds: {what} may be from {-bound:,} to {bound:,}"
