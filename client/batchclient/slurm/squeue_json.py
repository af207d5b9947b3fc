"""squeue --json: Slurm's JSON layout of data_parser v0.0.41 (Slurm 24.05), the fields
the tools read: ``{"jobs": [...], "last_backfill", "last_update", "meta", "errors",
"warnings"}``, numbers as ``{"set", "infinite", "number"}``, ``job_state`` a list."""

from __future__ import annotations

import os
import pwd

from ..hints import Any
from .joblist import Listing, Row, ranges
from .squeue_fields import cpus, end_time, node_list, start_time, uid
from .states import reason, slurm_state

DATA_PARSER = "data_parser/v0.0.41"
SLURM_VERSION = {"major": "24", "minor": "05", "micro": "0"}


def number(value: int | None, infinite: bool = False) -> dict[str, Any]:
    """Slurm's optional number."""
    if infinite:
        return {"set": False, "infinite": True, "number": 0}
    if value is None:
        return {"set": False, "infinite": False, "number": 0}
    return {"set": True, "infinite": False, "number": int(value)}


def job_record(row: Row, now: int) -> dict[str, Any]:
    job = row.job
    state = slurm_state(job)
    index = job.get("array_index")
    in_array = index is not None
    walltime = job.get("walltime")
    owner = str(job.get("owner", ""))
    user_id = uid(owner)
    return {
        "account": job.get("account") or "",
        "array_job_id": number(job["seq"] if in_array else 0),
        "array_task_id": number(None if row.folded is not None or not in_array else index),
        "array_task_string": ranges(row.folded) if row.folded is not None else "",
        "comment": (job.get("slurm") or {}).get("comment") or "",
        "cpus": number(cpus(job)),
        "current_working_directory": job.get("workdir") or "",
        "dependency": job.get("depend") or "",
        "eligible_time": number(job.get("etime")),
        "end_time": number(end_time(job)),
        "group_name": job.get("egroup") or "",
        "job_id": int(job["seq"]),
        "job_state": [state],
        "name": job.get("name", ""),
        "node_count": number(job.get("nodes")),
        "nodes": node_list(job),
        "partition": job.get("queue", ""),
        "priority": number(job.get("priority")),
        "start_time": number(start_time(job)),
        "state_reason": reason(job) if state == "PENDING" else "None",
        "submit_time": number(job.get("ctime")),
        "time_limit": number(None if walltime is None else int(walltime) // 60, walltime is None),
        "user_id": user_id if user_id is not None else 0,
        "user_name": owner,
    }


def document(listing: Listing, rows: list[Row]) -> dict[str, Any]:
    me = pwd.getpwuid(os.getuid()).pw_name if _has_user(os.getuid()) else str(os.getuid())
    return {
        "jobs": [job_record(r, listing.now) for r in rows],
        "last_backfill": number(listing.now),
        "last_update": number(listing.now),
        "meta": {
            "plugin": {
                "type": "openapi/slurmctld",
                "name": "Slurm OpenAPI slurmctld",
                "data_parser": DATA_PARSER,
                "accounting_storage": "",
            },
            "client": {"source": "batchd", "user": me, "group": ""},
            "command": ["squeue"],
            "slurm": {
                "version": SLURM_VERSION,
                "release": ".".join(SLURM_VERSION.values()),
                "cluster": listing.server,
            },
        },
        "errors": [],
        "warnings": [],
    }


def _has_user(user_id: int) -> bool:
    try:
        pwd.getpwuid(user_id)
    except KeyError:
        return False
    return True
