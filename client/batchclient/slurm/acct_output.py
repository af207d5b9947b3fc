"""sacct's printings: the table (src/common/print_fields.c: a header, a line of dashes,
each field padded to its width and cut with ``+``), the parsable lines (-p, -P) and
Slurm's JSON document (--json, data_parser's shape)."""

from __future__ import annotations

import signal
import sys
from collections.abc import Sequence

from ..cli import print_json
from ..hints import Any
from ..text import escape
from . import acct_fields, states
from .acct_fields import Field, Row


class Printer:
    """``parsable``: None for the table, ``ending`` (-p: every field ended by the
    delimiter) or ``plain`` (-P: fields separated by it)."""

    def __init__(self, fields: Sequence[Field], parsable: str | None, delimiter: str) -> None:
        self.fields = list(fields)
        self.parsable = parsable
        self.delimiter = delimiter

    def _join(self, cells: list[str]) -> str:
        if self.parsable == "ending":
            return "".join(c + self.delimiter for c in cells) + "\n"
        if self.parsable == "plain":
            return self.delimiter.join(cells) + "\n"
        return "".join(c + " " for c in cells) + "\n"

    def header(self) -> str:
        if self.parsable:
            return self._join([f.name for f in self.fields])
        names = [_justify(f.name[: abs(f.width)], f.width) for f in self.fields]
        dashes = ["-" * abs(f.width) for f in self.fields]
        return self._join(names) + self._join(dashes)

    def line(self, row: Row) -> str:
        cells = []
        for f in self.fields:
            value = f.value(row)
            text = "" if value is None else escape(value)
            if not self.parsable:
                text = _cut(text, abs(f.width)) if value is not None else " "
                text = _justify(text, f.width)
            cells.append(text)
        return self._join(cells)


def _cut(text: str, width: int) -> str:
    """Slurm's cut: a value longer than its field keeps width-1 characters and a ``+``."""
    if len(text) > width:
        return text[: max(width - 1, 0)] + "+" if width > 0 else ""
    return text


def _justify(text: str, width: int) -> str:
    return text.rjust(width) if width > 0 else text.ljust(-width)


def help_fields() -> str:
    """sacct -e: the field names, in columns as Slurm lists them."""
    names = list(acct_fields.WIDTHS)
    lines = []
    for i in range(0, len(names), 4):
        lines.append("".join(f"{n:<20}" for n in names[i : i + 4]).rstrip())
    return "\n".join(lines) + "\n"


# -- --json ------------------------------------------------------------------------------


def _number(value: int | None) -> dict[str, Any]:
    if value is None:
        return {"set": False, "infinite": True, "number": 0}
    return {"set": True, "infinite": False, "number": int(value)}


def _unset() -> dict[str, Any]:
    return {"set": False, "infinite": False, "number": 0}


def _exit(job: dict[str, Any]) -> dict[str, Any]:
    rc_text, _, sig_text = states.exit_code(job).partition(":")
    rc, sig = int(rc_text), int(sig_text)
    status = "SIGNALED" if sig else "ERROR" if rc else "SUCCESS"
    return {
        "status": [status],
        "return_code": _number(rc),
        "signal": {"id": _number(sig) if sig else _unset(), "name": _signal_name(sig)},
    }


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name.removeprefix("SIG") if sig else ""
    except ValueError:
        return ""


def _time(job: dict[str, Any]) -> dict[str, Any]:
    wall = job.get("walltime")
    return {
        "elapsed": acct_fields.elapsed_seconds(job),
        "eligible": int(job.get("etime") or 0),
        "end": int(job.get("end_time") or 0),
        "start": int(job.get("stime") or 0),
        "submission": int(job.get("ctime") or 0),
        "suspended": 0,
        "limit": _number(None if wall is None else int(wall) // 60),
    }


def job_document(row: Row, steps: list[Row]) -> dict[str, Any]:
    job = row.job
    index = job.get("array_index")
    return {
        "account": job.get("account") or "",
        "allocation_nodes": int(acct_fields.nnodes(row)) if job.get("stime") else 0,
        "array": {
            "job_id": int(job["seq"]) if index is not None or job.get("array") else 0,
            "task_id": _number(index) if index is not None else _unset(),
            "limits": {"max": {"running": {"tasks": int(job.get("max_run_subjobs") or 0)}}},
            "task": job.get("array_indices_remaining") if job.get("array") else "",
        },
        "cluster": row.cluster,
        "exit_code": _exit(job),
        "job_id": int(job["seq"]),
        "name": job.get("name", ""),
        "nodes": acct_fields.node_list(row),
        "partition": job.get("queue", ""),
        "priority": _number(job.get("priority")),
        "required": {"CPUs": int(acct_fields.alloc_cpus(row))},
        "state": {"current": [acct_fields.state(row)], "reason": states.reason(job)},
        "steps": [_step_document(s) for s in steps],
        "time": _time(job),
        "user": job.get("owner", ""),
        "group": acct_fields.group(row) or "",
        "working_directory": job.get("workdir") or "",
    }


def _step_document(row: Row) -> dict[str, Any]:
    job = row.job
    return {
        "step": {"id": f"{job['seq']}.{row.step}", "name": row.step},
        "state": [acct_fields.state(row)],
        "exit_code": _exit(job),
        "nodes": {"count": int(acct_fields.nnodes(row)), "range": acct_fields.node_list(row)},
        "time": {k: v for k, v in _time(job).items() if k != "limit"},
    }


def write_json(rows: list[Row], now: int) -> None:
    """The document: each job once, its batch step among its ``steps``."""
    docs: list[dict[str, Any]] = []
    by_id: dict[str, tuple[Row, list[Row]]] = {}
    for row in rows:
        key = str(row.job["id"])
        if key not in by_id:
            by_id[key] = (row, [])
        if row.step:
            by_id[key][1].append(row)
    for job_row, steps in by_id.values():
        base = Row(job_row.job, None, job_row.cluster)
        docs.append(job_document(base, steps))
    print_json({
        "meta": {"plugin": {"type": "", "name": "", "data_parser": "batchd"},
                 "client": {"source": "sacct"}, "time": now},
        "jobs": docs, "warnings": [], "errors": [],
    })  # fmt: skip
    sys.stdout.flush()
