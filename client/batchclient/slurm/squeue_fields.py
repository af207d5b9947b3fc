"""squeue's columns: the ``-o`` letters and ``-O`` names, their headers and values, and
how Slurm pads and cuts them (src/squeue/opts.c parse_format, print.c _print_str)."""

from __future__ import annotations

import pwd
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..hints import Any
from . import hostlist
from .ids import slurm_id
from .joblist import Row, ranges
from .states import reason, slurm_state, state_code
from .times import short_clock, timestamp

DEFAULT_FORMAT = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
LONG_FORMAT = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"
START_FORMAT = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R"
LONG_NAME_WIDTH = 20  # an -O field without a width
_LONG_SIZE = re.compile(r"(\.?)(\d*)(.*)", re.DOTALL)

# Why a job that ended badly ended, for %R (Slurm's state_reason of such a job).
_END_REASONS = {"FAILED": "NonZeroExitCode", "TIMEOUT": "TimeLimit", "OUT_OF_MEMORY": "OutOfMemory"}


@dataclass(frozen=True)
class Column:
    header: str
    value: Callable[[Row, int], str]
    cut: bool = True  # False: a right-justified value longer than its width is kept whole
    header_cut: bool = True


def _job_id(row: Row, now: int) -> str:
    if row.folded is not None:
        return f"{row.job['seq']}_[{ranges(row.folded)}]"
    return slurm_id(row.job)


def _task_id(row: Row, now: int) -> str:
    if row.folded is not None:
        return ranges(row.folded)
    index = row.job.get("array_index")
    return "N/A" if index is None else str(index)


def used_seconds(job: dict[str, Any]) -> int:
    if slurm_state(job) == "PENDING":
        return 0
    return int(job.get("elapsed") or 0)


def _time_left(row: Row, now: int) -> str:
    limit = row.job.get("walltime")
    if limit is None:
        return "UNLIMITED"
    return short_clock(max(int(limit) - used_seconds(row.job), 0))


def start_time(job: dict[str, Any]) -> int | None:
    """When it started, or (pending) when the plan starts it."""
    if slurm_state(job) == "PENDING":
        est = job.get("est_start")
        return None if est is None else int(est)
    stime = job.get("stime")
    return None if stime is None else int(stime)


def end_time(job: dict[str, Any]) -> int | None:
    """When it ended, or when its time limit ends it."""
    if job.get("end_time") is not None:
        return int(job["end_time"])
    start = start_time(job)
    return None if start is None else start + int(job.get("walltime") or 0)


def node_list(job: dict[str, Any]) -> str:
    return hostlist.compress(list(job.get("exec_host") or []))


def reason_list(job: dict[str, Any]) -> str:
    state = slurm_state(job)
    if state == "PENDING":
        return f"({reason(job)})"
    if state in _END_REASONS:
        return f"({_END_REASONS[state]})"
    return node_list(job)


def _reason(row: Row, now: int) -> str:
    state = slurm_state(row.job)
    return _END_REASONS.get(state, "None") if state != "PENDING" else reason(row.job)


def cpus(job: dict[str, Any]) -> int:
    slurm = job.get("slurm")
    if isinstance(slurm, dict) and slurm.get("ntasks"):
        return int(slurm["ntasks"]) * int(slurm.get("cpus_per_task") or 1)
    ncpus = (job.get("resource_list") or {}).get("ncpus")
    if ncpus is not None and str(ncpus).isdigit():
        return int(ncpus)
    return int(job.get("nodes") or 1)


def uid(owner: str) -> int | None:
    try:
        return pwd.getpwnam(owner).pw_uid
    except KeyError:
        return None


def _comment(row: Row, now: int) -> str:
    """sbatch --comment's text (the job's own; not batchd's scheduler comment)."""
    value = (row.job.get("slurm") or {}).get("comment")
    return "(null)" if not value else str(value)


def _text(key: str, missing: str = "(null)") -> Callable[[Row, int], str]:
    def get(row: Row, now: int) -> str:
        value = row.job.get(key)
        return missing if value in (None, "") else str(value)

    return get


def _time(get: Callable[[dict[str, Any]], int | None]) -> Callable[[Row, int], str]:
    return lambda row, now: timestamp(get(row.job))


def _uid(row: Row, now: int) -> str:
    found = uid(row.job["owner"])
    return row.job["owner"] if found is None else str(found)


COLUMNS: dict[str, Column] = {
    "a": Column("ACCOUNT", _text("account")),
    "A": Column("JOBID", lambda r, n: slurm_id(r.job)),
    "b": Column("TRES_PER_NODE", lambda r, n: "N/A"),
    "C": Column("CPUS", lambda r, n: str(cpus(r.job))),
    "D": Column("NODES", lambda r, n: str(r.job.get("nodes") or 0)),
    "e": Column("END_TIME", _time(end_time)),
    "E": Column("DEPENDENCY", _text("depend")),
    "F": Column("ARRAY_JOB_ID", lambda r, n: str(r.job["seq"])),
    "g": Column("GROUP", _text("egroup")),
    "i": Column("JOBID", _job_id),
    "j": Column("NAME", _text("name", "")),
    "k": Column("COMMENT", _comment),
    "K": Column("ARRAY_TASK_ID", _task_id),
    "l": Column("TIME_LIMIT", lambda r, n: short_clock(r.job.get("walltime")), cut=False),
    "L": Column("TIME_LEFT", _time_left, cut=False),
    "M": Column("TIME", lambda r, n: short_clock(used_seconds(r.job)), cut=False),
    "N": Column("NODELIST", lambda r, n: node_list(r.job), cut=False, header_cut=False),
    "P": Column("PARTITION", _text("queue", "")),
    "Q": Column("PRIORITY", lambda r, n: str(r.job.get("priority", 0))),
    "r": Column("REASON", _reason),
    "R": Column("NODELIST(REASON)", lambda r, n: reason_list(r.job), cut=False, header_cut=False),
    "S": Column("START_TIME", _time(start_time)),
    "t": Column("ST", lambda r, n: state_code(r.job)),
    "T": Column("STATE", lambda r, n: slurm_state(r.job)),
    "u": Column("USER", _text("owner", "")),
    "U": Column("UID", _uid),
    "V": Column("SUBMIT_TIME", _time(lambda j: j.get("ctime"))),
    "Y": Column("SCHEDNODES", lambda r, n: "(null)", cut=False, header_cut=False),
    "Z": Column("WORK_DIR", _text("workdir")),
}

# -O names (case-insensitive) -> the letter whose column they print.
LONG_NAMES = {
    "account": "a",
    "arrayjobid": "F",
    "arraytaskid": "K",
    "comment": "k",
    "dependency": "E",
    "endtime": "e",
    "groupname": "g",
    "jobarrayid": "i",
    "jobid": "A",
    "name": "j",
    "nodelist": "N",
    "numcpus": "C",
    "numnodes": "D",
    "partition": "P",
    "prioritylong": "Q",
    "reason": "r",
    "reasonlist": "R",
    "schednodes": "Y",
    "starttime": "S",
    "state": "T",
    "statecompact": "t",
    "submittime": "V",
    "timeleft": "L",
    "timelimit": "l",
    "timeused": "M",
    "tres-per-node": "b",
    "userid": "U",
    "username": "u",
    "workdir": "Z",
}


@dataclass(frozen=True)
class Field:
    """One column of a format: what it prints, its width (0: as wide as the value),
    right-justified or not, and the literal text after it."""

    column: Column | None  # None: literal text only (the format's prefix, a bad letter)
    width: int = 0
    right: bool = False
    suffix: str = ""


def parse_format(text: str) -> tuple[list[Field], list[str]]:
    """The fields of an ``-o`` format (``%[.][size]type`` with text between), and the
    letters Slurm does not know (printed as written, as Slurm prints them)."""
    fields: list[Field] = []
    unknown: list[str] = []
    head, *tokens = text.split("%")
    if head:
        fields.append(Field(None, suffix=head))
    for token in tokens:
        i, right = (1, True) if token.startswith(".") else (0, False)
        digits = ""
        while i < len(token) and token[i].isdigit():
            digits += token[i]
            i += 1
        width = int(digits) if digits else 0
        letter, suffix = token[i : i + 1], token[i + 1 :]
        column = COLUMNS.get(letter)
        if column is None:
            unknown.append(letter)
            fields.append(Field(None, width, right, "%" + token))
            continue
        fields.append(Field(column, width, right, suffix))
    return fields, unknown


def parse_long_format(text: str) -> tuple[list[Field], list[str]]:
    """The fields of an ``-O`` format (``Name[:[.]size][suffix]`` separated by commas),
    and the names Slurm does not know."""
    fields: list[Field] = []
    unknown: list[str] = []
    for token in text.split(","):
        if not token:
            continue
        name, sep, rest = token.partition(":")
        width, right, suffix = LONG_NAME_WIDTH, False, ""
        if sep:
            m = _LONG_SIZE.match(rest)
            assert m is not None  # every part is optional
            right, width, suffix = bool(m.group(1)), int(m.group(2) or 0), m.group(3)
        letter = LONG_NAMES.get(name.strip().lower())
        if letter is None:
            unknown.append(name)
            continue
        fields.append(Field(COLUMNS[letter], width, right, suffix))
    return fields, unknown


def pad(text: str, width: int, right: bool, cut: bool) -> str:
    """One value as Slurm's _print_str prints it: left-justified values are cut to
    their width; right-justified ones too unless the column keeps them whole."""
    if width <= 0:
        return text
    if right:
        shown = text[:width] if cut else text
        return shown.rjust(width)
    return text[:width].ljust(width)


def render(fields: list[Field], row: Row | None, now: int) -> str:
    """One line: the header (``row`` None) or a row's values."""
    out: list[str] = []
    for f in fields:
        if f.column is not None:
            value = f.column.header if row is None else f.column.value(row, now)
            cut = f.column.header_cut if row is None else f.column.cut
            out.append(pad(value, f.width, f.right, cut))
        out.append(f.suffix)
    return "".join(out)
