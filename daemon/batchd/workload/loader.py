"""Turning an SWF trace into the jobs of one machine."""

from __future__ import annotations

import gc
import math
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from itertools import compress, islice, repeat
from operator import attrgetter, ge, gt, le, lt
from typing import TypeVar

from batchd.model.job import Job, TraceLine
from batchd.model.moldable import MoldError
from batchd.model.times import CLOCK_MAX, CLOCK_RANGE, NEVER, TIME_MIN
from batchd.workload.swf import (
    UTILITY_KEY,
    PathLike,
    SWFError,
    SWFHeader,
    check_tokens,
    iter_swf_tokens,
    mold_of,
    priority_class_of,
    read_header,
)
from batchd.workload.swf_table import Column, SWFTable, read_swf_table

__all__ = ["SKIP_REASONS", "Workload", "load_swf", "shrink_submits"]

SKIP_REASONS: tuple[str, ...] = ("width<=0", "runtime<0", "wider_than_machine")

# 0-based SWF fields a job is made of: number, submit, run time, allocated processors,
# requested processors, requested time, user, queue.
_JOB_FIELDS = (0, 1, 3, 4, 7, 8, 11, 14)

_submit_key = attrgetter("submit")
_T = TypeVar("_T")


@dataclass
class Workload:
    """Jobs ready for replay, the count of records left out by reason, and where they came from."""

    jobs: list[Job]
    skipped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SKIP_REASONS, 0))
    header: SWFHeader | None = None
    source: str = ""


def load_swf(
    path: PathLike,
    *,
    nodes: int,
    first: int | None = None,
    perfect_estimates: bool = False,
    shrink: float = 1.0,
    records: bool = True,
) -> Workload:
    """Read an SWF trace into jobs for a machine of ``nodes`` nodes.

    Width is the requested processors (field 8), or the allocated ones (field 5) when the
    request is missing; runtime is field 4; the estimate is the requested time (field 9)
    when given, else the runtime (always the runtime with ``perfect_estimates``). Records
    with width <= 0, runtime < 0 or wider than the machine are skipped and counted, in that
    order of checks. ``first`` keeps only the first N job lines of the file (counted before
    skipping). Jobs come sorted by submit time, ties in file order, and ``shrink`` then
    scales the submit gaps (see :func:`shrink_submits`). Each job carries its SWF fields
    and tokens as ``trace`` (what ``write_swf`` writes back), unless ``records`` is False
    and the file takes the table path: a replay that writes no SWF makes no trace lines.

    The trace is read whole into columns (:mod:`batchd.workload.swf_table`); a file that
    reader does not take is read line by line (:func:`~batchd.workload.swf.iter_swf`),
    with the same result, or the same error.
    """
    if nodes <= 0:
        raise ValueError(f"a machine needs at least one node, got {nodes}")
    if first is not None and first < 0:
        raise ValueError(f"first must be >= 0, got {first}")
    if not (shrink > 0 and math.isfinite(shrink)):
        raise ValueError(f"shrink factor must be a finite number > 0, got {shrink}")

    with _collector_paused():  # many new objects, none of them garbage
        table = read_swf_table(path, first)
        if table is not None and not _on_clock(table):
            table = None  # the line reader names the line
        if table is None:
            header = read_header(path)
            origin = header.unix_start or 0
            jobs, skipped = _load_lines(path, nodes, first, perfect_estimates, origin)
        else:
            jobs, skipped = _jobs_from_table(table, nodes, perfect_estimates, records)
            header = table.header
            origin = header.unix_start or 0
    if shrink != 1.0:
        shrink_submits(jobs, shrink)
        _check_shrunk(path, jobs, shrink, origin)
    return Workload(jobs=jobs, skipped=skipped, header=header, source=str(path))


def _submit_range(origin: int) -> tuple[int, int]:
    """The submit times that put a job on the clock, for a trace whose time 0 is ``origin``."""
    return TIME_MIN - origin, CLOCK_MAX - origin


def _on_clock(table: SWFTable) -> bool:
    """Whether every submit time of the table lies on the clock (SWFError for a header
    UnixStartTime that does not)."""
    if table.rows == 0:
        return True
    low, high = _submit_range(table.header.unix_start or 0)
    first, last = _extremes(table.columns[1])
    return low <= first and last <= high


def _check_shrunk(path: PathLike, jobs: list[Job], shrink: float, origin: int) -> None:
    """Refuse a --shrink that stretches the submits beyond the clock."""
    if not jobs:
        return
    _, high = _submit_range(origin)
    last = max(job.submit for job in jobs)
    if last > high:
        raise SWFError(
            path,
            None,
            f"--shrink {shrink:g} puts the last submit time at {last} (+ UnixStartTime "
            f"{origin}), not a time the clock can run at: use a smaller factor "
            f"(the clock's range is {CLOCK_RANGE})",
        )


def _load_lines(
    path: PathLike, nodes: int, first: int | None, perfect_estimates: bool, origin: int
) -> tuple[list[Job], dict[str, int]]:
    """Jobs (by submit, ties in file order) and skip counts from the exact line reader."""
    lines = iter_swf_tokens(path)
    try:
        jobs, skipped = _jobs_from_records(
            ((rec, tokens, line_no) for line_no, rec, tokens in lines),
            nodes,
            first,
            perfect_estimates,
            path,
            origin,
        )
    finally:
        lines.close()
    jobs.sort(key=_submit_key)  # stable: equal submits keep file order
    return jobs, skipped


def _jobs_from_records(
    records: Iterable[tuple[tuple[int | float, ...], tuple[str, ...], int]],
    nodes: int,
    first: int | None,
    perfect_estimates: bool,
    path: PathLike = "",
    origin: int | None = None,
) -> tuple[list[Job], dict[str, int]]:
    """Jobs and skip counts, one record at a time (any record, floats rounded), from
    (record, the key=value tokens of its line, its line number); a job keeps its line's
    tokens, the utility function and the moldable shape among them. With ``origin``
    (the trace's UnixStartTime), a submit time off the clock raises SWFError."""
    low, high = (-NEVER, NEVER) if origin is None else _submit_range(origin)
    n_width = n_runtime = n_wide = 0
    jobs: list[Job] = []
    append = jobs.append
    new_job = Job
    count = 0
    for rec, tokens, line_no in records:
        if first is not None and count >= first:
            break
        count += 1
        jid, submit, _, runtime, alloc, _, _, req_procs, req_time = rec[:9]
        if not low <= submit <= high:
            raise SWFError(path, line_no, _off_clock(submit, origin or 0), field_no=2)
        width = round(req_procs) if req_procs > 0 else round(alloc)
        if width <= 0:
            n_width += 1
            continue
        runtime = round(runtime)
        if runtime < 0:
            n_runtime += 1
            continue
        if width > nodes:
            n_wide += 1
            continue
        estimate = runtime if perfect_estimates or req_time <= 0 else round(req_time)
        queue = round(rec[14])
        user = str(round(rec[11]))
        append(
            new_job(
                round(jid),
                round(submit),
                width,
                estimate,
                runtime,
                user,
                str(queue) if queue >= 0 else "",
                trace=TraceLine(rec, tokens),
            )
        )
        if tokens:
            try:
                _take_tokens(jobs[-1], tokens, nodes)
            except MoldError as exc:
                raise SWFError(path, line_no, str(exc)) from None
    return jobs, _skipped(n_width, n_runtime, n_wide)


def _off_clock(submit: float, origin: int) -> str:
    low, high = _submit_range(origin)
    return (
        f"{submit} (+ UnixStartTime {origin}) is not a time the clock can run at: "
        f"submit times may be from {low} to {high} here ({CLOCK_RANGE})"
    )


def _take_tokens(job: Job, tokens: tuple[str, ...], nodes: int) -> None:
    """Give a job the utility function, the priority class and the moldable shape
    among the tokens of its SWF line."""
    if any(t.startswith(UTILITY_KEY + "=") for t in tokens):
        job.utility = check_tokens("", 0, tokens)  # checked already when read
    job.priority_class = priority_class_of(tokens)
    job.mold = mold_of(tokens, job.width, job.runtime, job.estimate, nodes)


def _jobs_from_table(
    table: SWFTable, nodes: int, perfect_estimates: bool, records: bool = True
) -> tuple[list[Job], dict[str, int]]:
    """Jobs (by submit, ties in file order) and skip counts from a table, by columns;
    with ``records`` each job carries its row as a tuple."""
    rows = table.rows
    columns = table.columns
    if rows == 0:
        return [], _skipped(0, 0, 0)
    order = table.order  # the job line of each row, when rows are not in file order
    to_file = None if order is None else _file_order(order)
    if table.floats.intersection(_JOB_FIELDS):
        tuples = _records(table)
        if to_file is not None:  # back to file order, for the one-at-a-time rules
            tuples = list(map(tuples.__getitem__, to_file))
        jobs, skipped = _jobs_from_records(
            zip(tuples, repeat(()), repeat(0)), nodes, None, perfect_estimates
        )
        jobs.sort(key=_submit_key)
        return jobs, skipped

    # All the fields a job is made of are ints here: no rounding.
    ids, submits, runtimes, allocated, requested, req_times, users, queues = (
        columns[i] for i in _JOB_FIELDS
    )
    widths = _positive_else(requested, allocated, rows)
    estimates = runtimes if perfect_estimates else _positive_else(req_times, runtimes, rows)
    jobs = list(
        map(
            Job,
            _values(ids, rows),
            _values(submits, rows),
            _values(widths, rows),
            _values(estimates, rows),
            _values(runtimes, rows),
            _texts(users, rows, str),
            _texts(queues, rows, _queue_name),
        )
    )
    if records:
        for job, rec in zip(jobs, _records(table), strict=True):
            job.trace = TraceLine(rec)

    # Skips, each record counted under the first check it fails.
    w_min, w_max = _extremes(widths)
    r_min = min(runtimes) if isinstance(runtimes, list) else runtimes
    dropped: dict[int, int] = {}  # row: reason
    if w_min <= 0:
        dropped.update(dict.fromkeys(_rows_where(widths, partial(ge, 0), rows), 0))
    if r_min < 0:
        for row in _rows_where(runtimes, partial(gt, 0), rows):
            dropped.setdefault(row, 1)
    if w_max > nodes:
        for row in _rows_where(widths, partial(lt, nodes), rows):
            dropped.setdefault(row, 2)
    counts = [0, 0, 0]
    for reason in dropped.values():
        counts[reason] += 1
    if order is not None and to_file is not None:  # rows to job lines
        jobs = list(map(jobs.__getitem__, to_file))
        dropped = {order[row]: reason for row, reason in dropped.items()}
    if dropped:
        jobs = _without(jobs, dropped)
    if not _ascending(submits, to_file):
        jobs.sort(key=_submit_key)  # stable: equal submits keep file order
    return jobs, _skipped(*counts)


def _records(table: SWFTable) -> list[tuple[int | float, ...]]:
    """The rows of a table as tuples of their 18 fields."""
    rows = table.rows
    return list(zip(*(_values(c, rows) for c in table.columns), strict=True))


def _skipped(n_width: int, n_runtime: int, n_wide: int) -> dict[str, int]:
    return {"width<=0": n_width, "runtime<0": n_runtime, "wider_than_machine": n_wide}


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the duration, and what was made meanwhile moved
    to its oldest generation.

    A trace makes tracked objects per job (the job, its node list, its trace line), all
    long-lived and none in a cycle. With the collector on, the young generations scan them
    again and again while they are made; paused, it scans all of them at once as soon as it
    is back on. Either way that costs about as much as making them. ``gc.freeze()`` followed
    by ``gc.unfreeze()`` moves every tracked object to the oldest generation without a scan,
    where the next full collection finds them as it would have. (It moves any other young
    object of the process too; and it is left out when something in the process has frozen
    objects itself, as unfreezing would undo that.)
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if enabled:
            gc.enable()


def _values(column: Column, rows: int) -> Iterable[int | float]:
    """The values of a column, row by row."""
    return column if isinstance(column, list) else repeat(column, rows)


def _positive_else(column: Column, other: Column, rows: int) -> Column:
    """Per row: the value of ``column`` when it is > 0, else that of ``other``."""
    if not isinstance(column, list):
        return column if column > 0 else other
    if min(column) > 0:
        return column
    replaced = list(_rows_where(column, partial(ge, 0), rows))
    if len(replaced) == rows:
        return other
    out = column.copy()
    if isinstance(other, list):
        for row in replaced:
            out[row] = other[row]
    else:
        for row in replaced:
            out[row] = other
    return out


def _texts(column: Column, rows: int, text: Callable[[int], str]) -> Iterable[str]:
    """``text`` of each value of an int column, made once per distinct value."""
    if not isinstance(column, list):
        return repeat(text(int(column)), rows)
    names = {v: text(int(v)) for v in set(column)}
    return map(names.__getitem__, column)


def _queue_name(queue: int) -> str:
    return str(queue) if queue >= 0 else ""


def _extremes(column: Column) -> tuple[int | float, int | float]:
    if isinstance(column, list):
        return min(column), max(column)
    return column, column


def _rows_where(column: Column, test: Callable[[int | float], bool], rows: int) -> Iterable[int]:
    """The rows whose value passes ``test``."""
    return compress(range(rows), map(test, _values(column, rows)))


def _without(items: list[_T], rows: dict[int, int]) -> list[_T]:
    """``items`` without the given rows."""
    if len(rows) <= 64:  # a few: delete in place, from the end
        for row in sorted(rows, reverse=True):
            del items[row]
        return items
    keep = bytearray(b"\x01") * len(items)
    for row in rows:
        keep[row] = 0
    return list(compress(items, keep))


def _ascending(column: Column, to_file: list[int] | None) -> bool:
    """Whether the values never decrease from one job line to the next."""
    if not isinstance(column, list):
        return True
    values = column if to_file is None else list(map(column.__getitem__, to_file))
    return all(map(le, values, islice(values, 1, None)))


def _file_order(order: list[int]) -> list[int]:
    """The permutation that puts rows numbered ``order`` back in file order."""
    return sorted(range(len(order)), key=order.__getitem__)


def shrink_submits(jobs: list[Job], factor: float) -> None:
    """Scale the gaps between submits in place, keeping the first submit where it is.

    ``submit' = first + floor((submit - first) * factor)`` computed exactly (the factor is
    taken by its decimal text, so 0.7 means 7/10), so 1.0 leaves every time unchanged.
    """
    if not (factor > 0 and math.isfinite(factor)):
        raise ValueError(f"shrink factor must be a finite number > 0, got {factor}")
    if not jobs:
        return
    from fractions import Fraction  # here: it imports decimal, which a replay rarely needs

    ratio = Fraction(str(factor))
    num, den = ratio.numerator, ratio.denominator
    if num == den:
        return
    first = min(job.submit for job in jobs)
    for job in jobs:
        job.submit = first + (job.submit - first) * num // den
