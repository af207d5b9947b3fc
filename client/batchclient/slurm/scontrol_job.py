"""``scontrol show job``: a job as Slurm's slurm_sprint_job_info prints it, one
``Key=Value`` line group per record; what batchd does not know is printed as Slurm
prints an absent value (``(null)``, ``N/A``, ``Unknown``, ``*``)."""

from __future__ import annotations

import grp
import pwd

from ..hints import Any
from . import hostlist
from .joblist import Row, ranges
from .squeue_fields import COLUMNS, cpus, end_time, start_time, used_seconds
from .states import exit_code, slurm_state
from .times import clock, timestamp

NULL = "(null)"
# batchd's priority (PBS's -1024..1023) shifted into Slurm's unsigned range; 0 is held.
PRIORITY_OFFSET = 1025


def _when(epoch: int | None) -> str:
    """slurm_make_time_str: ``Unknown`` for a time not set."""
    return timestamp(epoch, "Unknown")


def user_and_group(owner: str) -> tuple[str, str]:
    """``alice(1000)`` and her primary group ``alice(1000)``; an account this machine
    does not know is shown by name alone."""
    try:
        entry = pwd.getpwnam(owner)
    except KeyError:
        return owner, NULL
    try:
        group = grp.getgrgid(entry.pw_gid).gr_name
    except KeyError:
        group = str(entry.pw_gid)
    return f"{owner}({entry.pw_uid})", f"{group}({entry.pw_gid})"


def _priority(job: dict[str, Any]) -> int:
    if job.get("hold_types"):
        return 0
    return int(job.get("priority") or 0) + PRIORITY_OFFSET


def _path(text: str | None) -> str | None:
    """The path of a PBS ``HOST:PATH``."""
    if not text:
        return None
    return text.split(":", 1)[1] if ":" in text else text


def _host(job: dict[str, Any]) -> str:
    path = job.get("output_path") or ""
    return path.split(":", 1)[0] if ":" in path else NULL


def stdout_path(job: dict[str, Any]) -> str:
    found = _path(job.get("output_path"))
    if found is not None:
        return found
    workdir = job.get("workdir")
    if workdir:
        index = job.get("array_index")
        name = f"slurm-{job['seq']}_{index}.out" if index is not None else f"slurm-{job['seq']}.out"
        return f"{workdir.rstrip('/')}/{name}"
    return NULL


def stderr_path(job: dict[str, Any]) -> str:
    found = _path(job.get("error_path"))
    if found is None or str(job.get("join_path") or "n") != "n":
        return stdout_path(job)
    return found


def _slurm(job: dict[str, Any], key: str) -> Any:
    request = job.get("slurm")
    return request.get(key) if isinstance(request, dict) else None


def _mem_mb(job: dict[str, Any]) -> int | None:
    per_node = _slurm(job, "mem_per_node_mb")
    if per_node:
        return int(per_node) * int(job.get("nodes") or 1)
    per_cpu = _slurm(job, "mem_per_cpu_mb")
    if per_cpu:
        return int(per_cpu) * cpus(job)
    return None


def _tres(job: dict[str, Any]) -> str:
    n_cpus, mem = cpus(job), _mem_mb(job)
    parts = [f"cpu={n_cpus}"]
    if mem is not None:
        parts.append(f"mem={mem}M")
    parts += [f"node={job.get('nodes') or 1}", f"billing={n_cpus}"]
    return ",".join(parts)


def _task_id(row: Row) -> str:
    if row.folded is not None:
        return ranges(row.folded)
    return str(row.job["array_index"])


def record(row: Row, one_liner: bool) -> str:
    """One job (or an array's pending tasks folded on one record) in Slurm's layout."""
    job = row.job
    state = slurm_state(job)
    started = state != "PENDING"
    user, group = user_and_group(str(job.get("owner", "")))
    ntasks = _slurm(job, "ntasks") or 1
    per_task = _slurm(job, "cpus_per_task") or 1
    per_node = _slurm(job, "ntasks_per_node") or 0
    mem = _mem_mb(job)
    hosts = list(job.get("exec_host") or [])
    first = f"JobId={job['seq']} "
    if job.get("array_index") is not None:
        first += f"ArrayJobId={job['seq']} ArrayTaskId={_task_id(row)} "
    lines = [
        first + f"JobName={job.get('name', '')}",
        f"UserId={user} GroupId={group} MCS_label=N/A",
        f"Priority={_priority(job)} Nice=0 Account={job.get('account') or NULL} QOS=normal",
        f"JobState={state} Reason={COLUMNS['r'].value(row, 0)} "
        f"Dependency={job.get('depend') or NULL}",
        f"Requeue={1 if job.get('rerunable', True) else 0} Restarts=0 BatchFlag=1 Reboot=0 "
        f"ExitCode={exit_code(job)}",
        f"RunTime={clock(used_seconds(job))} TimeLimit={clock(job.get('walltime'))} TimeMin=N/A",
        f"SubmitTime={_when(job.get('ctime'))} EligibleTime={_when(job.get('etime'))}",
        f"AccrueTime={_when(job.get('etime'))}",
        f"StartTime={_when(start_time(job))} EndTime={_when(end_time(job))} Deadline=N/A",
        "SuspendTime=None SecsPreSuspend=0 LastSchedEval=Unknown Scheduler=Main",
        f"Partition={job.get('queue', '')} AllocNode:Sid={_host(job)}:0",
        f"ReqNodeList={NULL} ExcNodeList={NULL}",
        f"NodeList={hostlist.compress(hosts) if hosts else NULL}",
    ]
    if started and hosts:
        lines.append(f"BatchHost={hosts[0]}")
    lines += [
        f"NumNodes={job.get('nodes') or 1} NumCPUs={cpus(job)} NumTasks={ntasks} "
        f"CPUs/Task={per_task} ReqB:S:C:T=0:0:*:*",
        f"ReqTRES={_tres(job)}",
        f"AllocTRES={_tres(job) if started else NULL}",
        f"Socks/Node=* NtasksPerN:B:S:C={per_node}:0:*:* CoreSpec=*",
        f"MinCPUsNode={per_task} MinMemoryNode={f'{mem}M' if mem else 0} MinTmpDiskNode=0",
        "Features=(null) DelayBoot=00:00:00",
        "OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)",
        *_comment(job),
        f"Command={NULL}",
        f"WorkDir={job.get('workdir') or NULL}",
        f"StdErr={stderr_path(job)}",
        "StdIn=/dev/null",
        f"StdOut={stdout_path(job)}",
    ]
    line_end = " " if one_liner else "\n   "
    return line_end.join(lines) + line_end + ("\n" if one_liner else "\n\n")


def _comment(job: dict[str, Any]) -> list[str]:
    """Slurm's ``Comment=`` line, printed only for a job with a comment (sbatch --comment)."""
    text = (job.get("slurm") or {}).get("comment")
    return [f"Comment={text}"] if text else []
