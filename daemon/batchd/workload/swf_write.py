"""Writing a replay's jobs back: SWF (the trace's own fields with what the run changed)
and the Batsim/evalys ``jobs.csv``.

An SWF file's columns are right-aligned to their widest value, so the widths are
found first, a slice of jobs at a time, and the lines are then made and written a
slice at a time: a trace of half a million jobs is never held as text at once.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from operator import attrgetter

from batchd.model.job import UNSET, Job
from batchd.model.machine import node_intervals, runs_intervals
from batchd.model.utility import Utility, UtilityError
from batchd.workload.swf import (
    CSV_COLUMNS,
    F_ALLOC,
    F_PARTITION,
    F_REQ_PROCS,
    F_REQ_TIME,
    F_RUN,
    F_STATUS,
    F_SUBMIT,
    F_WAIT,
    N_FIELDS,
    NODES_KEY,
    SPEEDUP_KEY,
    UTILITY_KEY,
    PathLike,
    SWFHeader,
    _open_write,
)

SLICE = 8192  # jobs whose lines are made and written at a time
_BY_ID = attrgetter("id")


def write_swf(
    path: PathLike,
    header: SWFHeader | None,
    jobs: Iterable[Job],
    extra_comments: Sequence[str] = (),
    partition: bool = False,
    slice_jobs: int = SLICE,
) -> None:
    """Write jobs (sorted by id) as SWF, after the header lines and ``; `` extra comments.

    ``partition``: field 16 is the machine the job ran on (1-based, config order), as a
    grid replay writes it; each part of a multi-site job is a line of its own.

    Each job starts from the fields of its ``trace`` line (or one built from id, submit, width and
    estimate) with submit, wait, run time, allocated processors and, for killed jobs, the
    status (0) replaced by what happened in the run. Its ``key=value`` tokens (the
    utility function among them) follow the 18 fields. Gzip when the path ends in ``.gz``.
    """
    ordered = sorted(jobs, key=_BY_ID)
    widths = _column_widths(ordered, partition, slice_jobs)
    with _open_write(path) as fh:
        if header is not None:
            for line in header.lines:
                fh.write(line + "\n")
        for comment in extra_comments:
            for text in comment.splitlines() or [""]:  # a newline must not end the comment
                fh.write(f"; {text}\n")
        for lo in range(0, len(ordered), slice_jobs):
            lines = [_job_line(job, partition, widths) for job in ordered[lo : lo + slice_jobs]]
            lines.append("")
            fh.write("\n".join(lines))


def _column_widths(jobs: list[Job], partition: bool, slice_jobs: int) -> list[int]:
    """The length of the longest value of each of the 18 fields over all ``jobs``."""
    widths = [0] * N_FIELDS
    for lo in range(0, len(jobs), slice_jobs):
        rows = [_job_record(job, partition) for job in jobs[lo : lo + slice_jobs]]
        for i, column in enumerate(zip(*rows, strict=True)):
            widths[i] = max(widths[i], _longest(column))
    return widths


def _longest(column: tuple[int | float, ...]) -> int:
    """The length of the longest of the values as written."""
    if set(map(type, column)) == {int}:
        # An int's text is longest at the largest value or at the most negative.
        return max(len(str(max(column))), len(str(min(column))))
    return max(map(len, map(_format_number, column)))


def _job_line(job: Job, partition: bool, widths: list[int]) -> str:
    row = _job_record(job, partition)
    line = " ".join(_format_number(v).rjust(w) for v, w in zip(row, widths, strict=True))
    if job.trace_tokens or job.utility is not None or job.mold is not None:
        line = " ".join([line, *_job_tokens(job)])
    return line


def _format_number(value: int | float) -> str:
    if isinstance(value, int):
        return str(value)
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _job_record(job: Job, partition: bool = False) -> list[int | float]:
    """The 18 SWF fields for a job: its carried record with what the run changed replaced."""
    if job.trace is not None and len(job.trace.fields) == N_FIELDS:
        rec: list[int | float] = list(job.trace.fields)
    else:
        rec = [-1] * N_FIELDS
        rec[0] = job.id
        rec[F_REQ_PROCS] = job.width
        rec[F_REQ_TIME] = job.estimate
    rec[F_SUBMIT] = job.submit
    # A job that never started (or never ended) keeps -1, the SWF "unknown".
    rec[F_WAIT] = job.start - job.submit if job.start != UNSET else -1
    rec[F_RUN] = job.end - job.start if job.start != UNSET and job.end != UNSET else -1
    rec[F_ALLOC] = job.width
    if job.result.killed:
        rec[F_STATUS] = 0
    if partition:
        rec[F_PARTITION] = job.machine + 1
    return rec


def _job_tokens(job: Job) -> list[str]:
    """The tokens written after a job's fields: those it was read with, in their order,
    with ``utility`` the job's function now (its text as read while it is unchanged)."""
    out: list[str] = []
    seen = False
    for token in job.trace_tokens:
        key, _, value = token.partition("=")
        if key != UTILITY_KEY:
            out.append(token)
            continue
        seen = True
        if job.utility is not None:
            try:
                same = Utility.parse(value, seconds_only=True) == job.utility
            except UtilityError:
                same = False
            out.append(token if same else f"{UTILITY_KEY}={job.utility.format()}")
    if not seen and job.utility is not None:
        out.append(f"{UTILITY_KEY}={job.utility.format()}")
    if job.mold is not None and not job.trace_tokens:
        out.append(f"{NODES_KEY}={job.mold.range_text()}")
        out.append(f"{SPEEDUP_KEY}={job.mold.speedup.format()}")
    return out


def write_jobs_csv(
    path: PathLike, jobs: Iterable[Job], machines: Sequence[str] | None = None
) -> None:
    """Write the Batsim/evalys ``jobs.csv`` for finished jobs, one row per job by id.

    ``machines`` (a grid's machine names, config order): a last column ``machine``
    names the machine each row ran on; each part of a multi-site job is a row.
    """
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(CSV_COLUMNS if machines is None else (*CSV_COLUMNS, "machine"))
        for job in sorted(jobs, key=_BY_ID):
            execution = job.end - job.start
            turnaround = job.end - job.submit
            stretch = turnaround / max(execution, 1)
            writer.writerow(
                (
                    job.id,
                    job.submit,
                    job.width,
                    job.estimate,
                    0 if job.result.killed else 1,
                    job.start,
                    execution,
                    job.end,
                    job.start - job.submit,
                    turnaround,
                    f"{stretch:.6g}",
                    _intervals(job),
                    *(() if machines is None else (machines[job.machine],)),
                )
            )


def _intervals(job: Job) -> str:
    """The nodes a job ran on as intervals, from its ids or its folded runs."""
    return runs_intervals(job.result.ran_on) if job.result.ran_on else node_intervals(job.units)
