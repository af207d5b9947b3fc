"""qstat's layouts, as OpenPBS prints them (``src/cmds/qstat.c``).

Every function takes API objects (dicts shaped like JobOut, QueueOut,
ServerOut) and returns the lines to print, without newlines. A field longer
than its column is cut to width-1 columns plus ``*``. Text from the daemon is
escaped and measured in terminal columns (batchclient.text).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .attrs import exec_host, job_attrs, queue_attrs, server_attrs, server_state
from .hints import Any
from .text import cell, char_width, cut, escape, fit, width
from .timefmt import est_start_short, hm, hms

Obj = Mapping[str, Any]
BLANK = " -- "  # qstat -a's empty field
RUNNING = ("R", "E")
COMMENT_SCOPE, COMMENT_LEN = 74, 71


def short_id(job_id: str) -> str:
    """``SEQ.SERVER``: only the first part of a dotted server name, as qstat shows it."""
    seq, _, server = job_id.partition(".")
    return f"{seq}.{server.split('.')[0]}" if server else seq


# -- qstat (default) --------------------------------------------------------------

DEFAULT_HEADER = [
    "Job id            Name             User              Time Use S Queue",
    "----------------  ---------------- ----------------  -------- - -----",
]


def time_use(job: Obj) -> str:
    if job.get("state") in ("R", "E", "F", "X") and job.get("elapsed") is not None:
        return hms(job["elapsed"])
    return "0"


def default_row(job: Obj) -> str:
    return (
        f"{cell(short_id(job['id']), 17)} {cell(job['name'], 16)} "
        f"{cell(job['owner'], 16)}  {cell(time_use(job), 8, right=True)} "
        f"{escape(job['state']):1.1} {cell(job['queue'], 16)}"
    )


def default_table(jobs: Sequence[Obj]) -> list[str]:
    if not jobs:
        return []
    return DEFAULT_HEADER + [default_row(j) for j in jobs]


# -- qstat -a / -T / -n / -s ------------------------------------------------------

ALT_COLUMNS = [
    "Job ID          Username Queue    Jobname    SessID NDS TSK Memory Time  S Time",
    "--------------- -------- -------- ---------- ------ --- --- ------ ----- - -----",
]


def alt_header(server: str, est: bool = False) -> list[str]:
    lines = ["", f"{escape(server)}: "]
    if est:
        lines.append(" " * 75 + "Est")
        lines.append(" " * 60 + "Req'd  Req'd   Start")
    else:
        lines.append(" " * 60 + "Req'd  Req'd   Elap")
    return lines + ALT_COLUMNS


def est_column(job: Obj, now: int) -> str:
    state = job["state"]
    if state in RUNNING:
        return est_start_short(job.get("stime"), now, past_ok=True)
    if state in ("Q", "H", "W"):
        return est_start_short(job.get("est_start"), now)
    return "--"


def elap_column(job: Obj) -> str:
    if job["state"] in ("R", "E", "F") and job.get("elapsed") is not None:
        return hm(job["elapsed"])
    return BLANK


def requested(job: Obj) -> tuple[str, str, str]:
    """qstat -a's NDS, TSK and Req'd Memory: ``Resource_List.nodect``, ``.ncpus`` (not
    when 0) and ``.mem``, as OpenPBS's qstat takes them (the job's nodes for NDS and TSK
    from a daemon that sends no resource list)."""
    resources = job.get("resource_list") or {}
    nodes = str(job["nodes"])
    ncpus = resources.get("ncpus", nodes)
    return (
        resources.get("nodect", nodes),
        BLANK if ncpus == "0" else ncpus,
        resources.get("mem", BLANK),
    )


def field(value: str, cols: int) -> str:
    """A column's value as ``fit`` cuts it; the empty field as PBS's ``%N.Ns`` prints it."""
    return BLANK[:cols] if value == BLANK else fit(value, cols)


def alt_row(job: Obj, now: int, est: bool = False) -> str:
    nds, tsk, mem = requested(job)
    last = est_column(job, now) if est else elap_column(job)
    return (
        f"{cell(job['id'], 15)} {cell(job['owner'], 8)} {cell(job['queue'], 8)} "
        f"{cell(job['name'], 10)} {BLANK:>6} {field(nds, 3):>3} {field(tsk, 3):>3} "
        f"{field(mem, 6):>6} {fit(hm(job['walltime']), 5):>5} {escape(job['state']):1.1} "
        f"{fit(last, 5):>5}"
    )


def exec_host_parts(job: Obj) -> list[str]:
    """The parts of a job's ``exec_host``, as qstat -f shows it: ``node003/0*2`` (from its
    exec_vnode; each host's ``/0`` from a daemon that sends only the hosts)."""
    if job.get("exec_vnode"):
        return exec_host(job["exec_vnode"]).split("+")
    return [f"{host}/0" for host in job.get("exec_host") or []]


def exec_host_lines(parts: Sequence[str], cols: int = 77) -> list[str]:
    """``qstat -n``: the exec_host (``node001/0*2+node002/0``), broken before a ``+`` at
    77 columns."""
    lines: list[str] = []
    cur = ""
    for i, part in enumerate(parts):
        seg = f"{'+' if i else ''}{escape(part)}"
        if cur and width(cur) + width(seg) >= cols:
            lines.append(cur)
            cur = seg
        else:
            cur += seg
    if cur:
        lines.append(cur)
    return ["   " + line for line in lines]


def comment_line(comment: str | None) -> list[str]:
    if not comment:
        return []
    comment = escape(comment)
    if width(comment) > COMMENT_SCOPE:
        comment = cut(comment, COMMENT_LEN) + "..."
    return ["   " + comment]


def est_sort_key(job: Obj, now: int) -> tuple[object, ...]:
    """qstat -T order: started jobs by start time, then by estimated start, unknown last."""
    if job.get("stime") is not None:
        return (0, job["stime"])
    est = job.get("est_start")
    if est is not None and est >= now:
        return (1, est)
    return (2, 0)


def alt_table(
    jobs: Sequence[Obj],
    server: str,
    now: int,
    est: bool = False,
    nodes: bool = False,
    comments: bool = False,
) -> list[str]:
    if not jobs:
        return []
    if est:
        jobs = sorted(jobs, key=lambda j: est_sort_key(j, now))
    return alt_header(server, est) + alt_rows(jobs, now, est, nodes, comments)


def alt_rows(
    jobs: Sequence[Obj], now: int, est: bool = False, nodes: bool = False, comments: bool = False
) -> list[str]:
    """The lines of these jobs in the alternate format, in the order given."""
    lines: list[str] = []
    for job in jobs:
        lines.append(alt_row(job, now, est))
        if nodes:
            lines += exec_host_lines(exec_host_parts(job))
        if comments:
            lines += comment_line(job.get("comment"))
    return lines


# -- qstat -f -----------------------------------------------------------------------


def prt_attr(name: str, value: str) -> str:
    """``    name = value``, broken at commas near column 78 as qstat -f does.

    Name and value are escaped first: the only line breaks are the ones added here.
    """
    name = escape(name)
    out = [f"    {name} = "]
    start = width(name) + 7
    tokens = [t for t in escape(value).split(",") if t]
    for i, tok in enumerate(tokens):
        if width(tok) + start < 78:
            out.append(tok)
            start += width(tok)
        else:
            if i:
                out.append("\n\t")
                start = 9
            for ch in tok:
                out.append(ch)
                start += char_width(ch)
                if start > 78:
                    start = 8
                    out.append("\n\t")
        if i + 1 < len(tokens):
            out.append(",")
    return "".join(out)


def full_block(title: str, attrs: Sequence[tuple[str, str]]) -> list[str]:
    return [escape(title)] + [prt_attr(k, v) for k, v in attrs] + [""]


def full_jobs(jobs: Sequence[Obj]) -> list[str]:
    lines: list[str] = []
    for job in jobs:
        lines += full_block(f"Job Id: {job['id']}", job_attrs(job))
    return lines


# -- qstat -Q / -Qf / -B / -Bf --------------------------------------------------------

# PBS's columns, then the queue's window: Open (open now?) and Window ("any", "prime",
# "nonprime" or the spans), which is last and not cut.
QUEUE_HEADER = [
    "Queue              Max   Tot Ena Str   Que   Run   Hld   Wat   Trn   Ext Type Open Window",
    "---------------- ----- ----- --- --- ----- ----- ----- ----- ----- ----- ---- ---- ------",
]


def _yes(flag: object) -> str:
    return "yes" if flag else "no"


def queue_row(q: Obj) -> str:
    c = q.get("counts") or {}
    nums = [c.get(k, 0) for k in ("Q", "R", "H", "W", "T", "E")]
    return (
        f"{cell(q['name'], 16)} {fit(q.get('max_run') or 0, 5):>5} "
        f"{fit(q.get('total', 0), 5):>5} {_yes(q['enabled']):>3} {_yes(q['started']):>3} "
        + " ".join(f"{fit(n, 5):>5}" for n in nums)
        + f" {fit(q.get('queue_type') or 'Execution', 4):<4}"
        + f" {_yes(q.get('window_open', True)):>4} {escape(q.get('window') or 'any')}"
    )


def queue_table(queues: Sequence[Obj]) -> list[str]:
    if not queues:
        return []
    return QUEUE_HEADER + [queue_row(q) for q in queues]


def full_queues(queues: Sequence[Obj]) -> list[str]:
    lines: list[str] = []
    for q in queues:
        lines += full_block(f"Queue: {q['name']}", queue_attrs(q))
    return lines


SERVER_HEADER = [
    "Server             Max   Tot   Que   Run   Hld   Wat   Trn   Ext Status",
    "---------------- ----- ----- ----- ----- ----- ----- ----- ----- -----------",
]


def server_table(server: Obj) -> list[str]:
    c = {k: v for k, v in (server.get("jobs") or {}).items() if k != "F"}
    nums = [sum(c.values())] + [c.get(k, 0) for k in ("Q", "R", "H", "W", "T", "E")]
    row = (
        f"{cell(server['name'], 16)} {fit(server.get('max_run') or 0, 5):>5} "
        + " ".join(f"{fit(n, 5):>5}" for n in nums)
        + f" {server_state(server):<10}"
    )
    return SERVER_HEADER + [row]


def full_server(server: Obj) -> list[str]:
    return full_block(f"Server: {server['name']}", server_attrs(server))
