"""Slurm's job states and pending reasons, read from the daemon's job views.

A view's PBS state (Q H W R E F, B for an array under way, X for a finished task) and,
once ended, its ``outcome`` give Slurm's state; ``pending_reason`` gives the reason
squeue shows (src/common/slurm_protocol_defs.c: job_state_string, job_reason_string).
"""

from __future__ import annotations

from ..hints import Any

# Long name -> squeue's compact code (%t).
CODES = {
    "PENDING": "PD",
    "RUNNING": "R",
    "SUSPENDED": "S",
    "COMPLETING": "CG",
    "COMPLETED": "CD",
    "CANCELLED": "CA",
    "FAILED": "F",
    "TIMEOUT": "TO",
    "NODE_FAIL": "NF",
    "PREEMPTED": "PR",
    "BOOT_FAIL": "BF",
    "DEADLINE": "DL",
    "OUT_OF_MEMORY": "OOM",
    "REQUEUED": "RQ",
}
_ENDED = {
    "ok": "COMPLETED",
    "failed": "FAILED",
    "walltime": "TIMEOUT",
    "mem": "OUT_OF_MEMORY",
    "cancelled": "CANCELLED",
    "node_fail": "NODE_FAIL",
    "dependency": "CANCELLED",
    "signal": "CANCELLED",
    "resv_end": "CANCELLED",
    "overflow": "FAILED",
}
REASONS = {
    "priority": "Priority",
    "resources": "Resources",
    "dependency": "Dependency",
    "dependency_never": "DependencyNeverSatisfied",
    "begin_time": "BeginTime",
    "held_user": "JobHeldUser",
    "held_admin": "JobHeldAdmin",
    "partition_time_limit": "PartitionTimeLimit",
    "partition_node_limit": "PartitionNodeLimit",
    "node_not_avail": "ReqNodeNotAvail",
    "reservation": "Reservation",
    "partition_down": "PartitionDown",
    "partition_inactive": "PartitionInactive",
}
# States a job ends in, for squeue -t and sacct -s.
ENDED_STATES = frozenset(
    {"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
     "PREEMPTED", "BOOT_FAIL", "DEADLINE"}
)  # fmt: skip


def slurm_state(job: dict[str, Any]) -> str:
    """Slurm's long state name for a job view."""
    state = job.get("state")
    if state in ("Q", "W", "H", "T"):
        return "PENDING"
    if state in ("R", "B"):
        return "RUNNING"
    if state == "E":
        return "COMPLETING"
    outcome = job.get("outcome")
    if outcome is None:  # a task that never ran (its array was deleted)
        return "CANCELLED"
    return _ENDED.get(outcome, "FAILED")


def state_code(job: dict[str, Any]) -> str:
    return CODES[slurm_state(job)]


def reason(job: dict[str, Any]) -> str:
    """squeue's REASON (%r): why a pending job waits, ``None`` for others."""
    if slurm_state(job) != "PENDING":
        return "None"
    code = job.get("pending_reason")
    if code is None:
        return "Priority" if job.get("state") != "H" else "JobHeldUser"
    return REASONS.get(code, str(code))


def exit_code(job: dict[str, Any]) -> str:
    """sacct's ExitCode ``rc:sig``: the script's exit code and the signal that killed it
    (batchd's Exit_status is 256 + N for signal N, negative when the system ended the
    job or could not start it: ``1:0`` as Slurm shows a job that failed to launch)."""
    status = job.get("exit_status")
    if status is None:
        return "0:0"
    if status >= 256:
        return f"0:{status - 256}"
    if status < 0:
        return "1:0"
    return f"{status}:0"


def parse_states(text: str) -> set[str]:
    """The long names of a state list (``-t PD,R``, ``--states=running``); ValueError
    naming an unknown one; ``all`` stands for every state."""
    names: set[str] = set()
    by_code = {code: name for name, code in CODES.items()}
    for part in text.split(","):
        word = part.strip().upper()
        if not word:
            continue
        if word == "ALL":
            return set(CODES)
        if word in CODES:
            names.add(word)
        elif word in by_code:
            names.add(by_code[word])
        elif word == "CANCELED":
            names.add("CANCELLED")
        else:
            raise ValueError(f"Invalid job state specified: {part.strip()}")
    return names
