"""qstat ``-w`` (wide columns) and ``-1`` (exec hosts or comment on the job's line), as
OpenPBS prints them (``src/cmds/qstat.c``: the ``*_W`` widths, ``prt_nodes``).

Wide columns: job id 30, name 15, user 15, queue 15, session 8, NDS 4, TSK 5. In the
default table a name of 15 characters or more is cut to 14 plus ``*``, as qstat does;
other fields are cut to their width minus one plus ``*``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .attrs import job_attrs
from .hints import Any
from .jobtable import (
    BLANK,
    alt_row,
    comment_line,
    elap_column,
    est_column,
    exec_host_lines,
    exec_host_parts,
    field,
    requested,
    time_use,
)
from .text import cell, escape, fit, pad
from .timefmt import hm

Obj = Mapping[str, Any]
ID_W, NAME_W, USER_W, QUEUE_W, SESS_W, NDS_W, TSK_W = 30, 15, 15, 15, 8, 4, 5

WIDE_DEFAULT_HEADER = [
    "Job id                         Name            User             Time Use S Queue",
    "-----------------------------  --------------- ---------------  -------- - ---------------",
]


def _name_default(name: str) -> str:
    """qstat -w's name column: cut at 15 characters and more (``l >= SIZEJOBNAME_W``)."""
    text = escape(name)
    if len(text) >= NAME_W:
        text = text[: NAME_W - 1] + "*"
    return pad(text, NAME_W)


def wide_default_row(job: Obj) -> str:
    """``%-30s %-15s %-15s  %8s %1s %-15s``."""
    return (
        f"{cell(job['id'], ID_W)} {_name_default(job['name'])} {cell(job['owner'], USER_W)}  "
        f"{cell(time_use(job), 8, right=True)} {escape(job['state']):1.1} "
        f"{cell(job['queue'], QUEUE_W)}"
    )


def _blanks(width: int) -> str:
    return " " * width


def wide_alt_header(server: str, est: bool = False) -> list[str]:
    lead = " ".join(_blanks(w) for w in (ID_W, USER_W, QUEUE_W, NAME_W, SESS_W, NDS_W, TSK_W))
    lines = ["", f"{escape(server)}: "]
    if est:
        lines.append(lead + " " + "               Est")
    lines.append(lead + " " + ("Req'd  Req'd   Start" if est else "Req'd  Req'd   Elap"))
    names = ("Job ID", "Username", "Queue", "Jobname", "SessID", "NDS", "TSK")
    widths = (ID_W, USER_W, QUEUE_W, NAME_W, SESS_W, NDS_W, TSK_W)
    lines.append(
        " ".join(pad(n, w) for n, w in zip(names, widths, strict=True)) + " Memory Time  S Time"
    )
    lines.append(" ".join("-" * w for w in widths) + " ------ ----- - -----")
    return lines


def wide_alt_row(job: Obj, now: int, est: bool = False) -> str:
    nds, tsk, mem = requested(job)
    last = est_column(job, now) if est else elap_column(job)
    return (
        f"{cell(job['id'], ID_W)} {cell(job['owner'], USER_W)} {cell(job['queue'], QUEUE_W)} "
        f"{cell(job['name'], NAME_W)} {BLANK:>{SESS_W}} {field(nds, NDS_W):>{NDS_W}} "
        f"{field(tsk, TSK_W):>{TSK_W}} {field(mem, 6):>6} {fit(hm(job['walltime']), 5):>5} "
        f"{escape(job['state']):1.1} {fit(last, 5):>5}"
    )


def one_line_tail(job: Obj, nodes: bool, comments: bool) -> tuple[str, list[str]]:
    """``-1``: what follows the row on its own line, and the lines after it. With ``-n``
    the hosts join the row (``node001/0+node002/0``) and a comment (``-s``) follows on
    the next line; with ``-s`` alone the comment joins the row."""
    if nodes:
        hosts = escape("+".join(exec_host_parts(job)))
        after = comment_line(job.get("comment")) if comments else []
        return " " + hosts, after
    said = comment_line(job.get("comment"))
    return (" " + said[0] if said else ""), []


def rows(
    jobs: Sequence[Obj],
    now: int,
    *,
    est: bool = False,
    nodes: bool = False,
    comments: bool = False,
    wide: bool = False,
    one_line: bool = False,
) -> list[str]:
    """The alternate format's lines of these jobs, in the order given."""
    out: list[str] = []
    for job in jobs:
        row = wide_alt_row(job, now, est) if wide else alt_row(job, now, est)
        if one_line:
            tail, after = one_line_tail(job, nodes, comments)
            out.append(row + tail)
            out += after
            continue
        out.append(row)
        if nodes:
            out += exec_host_lines(exec_host_parts(job))
        if comments:
            out += comment_line(job.get("comment"))
    return out


def full_wide(jobs: Sequence[Obj]) -> list[str]:
    """``qstat -f -w``: each attribute on one line, never broken."""
    lines: list[str] = []
    for job in jobs:
        lines.append(escape(f"Job Id: {job['id']}"))
        lines += [f"    {escape(k)} = {escape(v)}" for k, v in job_attrs(job)]
        lines.append("")
    return lines
