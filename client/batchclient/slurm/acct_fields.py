"""sacct's fields: their names and widths as Slurm has them (src/sacct/sacct.c), and what
each shows for a job or its batch step, read from the daemon's job views.

Slurm's table is kept whole so that every format a Slurm script asks for is accepted;
the fields batchd keeps nothing for (QOS, associations, energy, disk and TRES usage) are
printed empty.
"""

from __future__ import annotations

import grp
import pwd
from collections.abc import Callable
from dataclasses import dataclass

from ..hints import Any
from . import hostlist, states, times
from .ids import slurm_id

BATCH_STEP = "batch"


@dataclass(frozen=True)
class Row:
    """One line of sacct: a job, or its batch step (``step`` = ``batch``)."""

    job: dict[str, Any]
    step: str | None
    cluster: str


Value = Callable[[Row], "str | None"]

# Slurm's widths: negative is left-justified, positive right-justified.
WIDTHS: dict[str, int] = {
    "Account": 10, "AdminComment": 15, "AllocCPUS": 10, "AllocNodes": 10, "AllocTRES": 10,
    "AssocID": 7, "AveCPU": 10, "AveCPUFreq": 10, "AveDiskRead": 14, "AveDiskWrite": 14,
    "AvePages": 10, "AveRSS": 10, "AveVMSize": 10, "BlockID": 16, "Cluster": 10,
    "Comment": 14, "Constraints": 19, "ConsumedEnergy": 14, "ConsumedEnergyRaw": 17,
    "Container": 19, "CPUTime": 10, "CPUTimeRAW": 10, "DBIndex": -21,
    "DerivedExitCode": 15, "Elapsed": 10, "ElapsedRaw": 10, "Eligible": 19, "End": 19,
    "ExitCode": 8, "Extra": 14, "FailedNode": 8, "Flags": 19, "GID": 6, "Group": 9,
    "JobID": -12, "JobIDRaw": -12, "JobName": 10, "Layout": 9, "Licenses": 10,
    "MaxDiskRead": 12, "MaxDiskReadNode": 15, "MaxDiskReadTask": 15, "MaxDiskWrite": 12,
    "MaxDiskWriteNode": 16, "MaxDiskWriteTask": 16, "MaxPages": 8, "MaxPagesNode": 12,
    "MaxPagesTask": 14, "MaxRSS": 10, "MaxRSSNode": 10, "MaxRSSTask": 10, "MaxVMSize": 10,
    "MaxVMSizeNode": 14, "MaxVMSizeTask": 14, "McsLabel": 12, "MinCPU": 10,
    "MinCPUNode": 10, "MinCPUTask": 10, "NCPUS": 10, "NNodes": 8, "NodeList": 15,
    "NTasks": 8, "Partition": 10, "Planned": 10, "PlannedCPU": 10, "PlannedCPURAW": 13,
    "Priority": 10, "QOS": 10, "QOSRAW": 6, "QOSREQ": 10, "Reason": 22, "ReqCPUFreq": 10,
    "ReqCPUFreqGov": 13, "ReqCPUFreqMax": 13, "ReqCPUFreqMin": 13, "ReqCPUS": 8,
    "ReqMem": 10, "ReqNodes": 8, "ReqTRES": 10, "Reservation": 20, "ReservationId": 8,
    "Restarts": 8, "SegmentSize": 11, "SLUID": 14, "Start": 19, "State": 10,
    "StdErr": 20, "StdIn": 20, "StdOut": 20, "Submit": 19, "SubmitLine": 20,
    "Suspended": 10, "SystemComment": 15, "SystemCPU": 10, "Timelimit": 10,
    "TimelimitRaw": 10, "TotalCPU": 10, "TRESUsageInAve": 14, "TRESUsageInMax": 14,
    "TRESUsageInMaxNode": 18, "TRESUsageInMaxTask": 18, "TRESUsageInMin": 14,
    "TRESUsageInMinNode": 18, "TRESUsageInMinTask": 18, "TRESUsageInTot": 14,
    "TRESUsageOutAve": 15, "TRESUsageOutMax": 15, "TRESUsageOutMaxNode": 19,
    "TRESUsageOutMaxTask": 19, "TRESUsageOutMin": 15, "TRESUsageOutMinNode": 19,
    "TRESUsageOutMinTask": 19, "TRESUsageOutTot": 15, "UID": 6, "User": 9, "UserCPU": 10,
    "WCKey": 10, "WCKeyID": 10, "WorkDir": 20,
}  # fmt: skip


@dataclass(frozen=True)
class Field:
    name: str
    width: int  # Slurm's sign: negative left-justified

    def value(self, row: Row) -> str | None:
        fn = VALUES.get(self.name)
        return fn(row) if fn is not None else None


def find(text: str) -> Field:
    """The field a format item names: ``name`` or ``name%width``, the name matched as
    Slurm matches it (case-insensitive, the first field of the table it begins);
    ValueError ``Invalid field requested: "NAME"`` otherwise."""
    name, pct, width_text = text.strip().partition("%")
    name = name.strip()
    if not name:
        raise ValueError(f'Invalid field requested: "{text.strip()}"')
    for known, width in WIDTHS.items():
        if known.lower().startswith(name.lower()):
            if pct:
                width = _width(width_text, text)
            return Field(known, width)
    raise ValueError(f'Invalid field requested: "{name}"')


def _width(text: str, item: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f'Invalid field width in "{item.strip()}"') from None


def parse_format(text: str) -> list[Field]:
    return [find(item) for item in text.split(",") if item.strip()]


# -- what each field shows ---------------------------------------------------------------


def _started(job: dict[str, Any]) -> bool:
    return job.get("stime") is not None


def job_id(row: Row) -> str:
    job = row.job
    if job.get("array") and job.get("array_indices_remaining") not in (None, "-"):
        base = f"{job['seq']}_[{job['array_indices_remaining']}]"
    elif job.get("array"):
        base = f"{job['seq']}_[{job.get('array_indices_submitted') or ''}]"
    else:
        base = slurm_id(job)
    return f"{base}.{row.step}" if row.step else base


def state(row: Row) -> str:
    name = states.slurm_state(row.job)
    if name == "COMPLETING":
        name = "RUNNING" if row.step else "COMPLETING"
    if row.step and name == "TIMEOUT":
        return "CANCELLED"  # Slurm cancels a timed-out job's batch step
    return name


def alloc_cpus(row: Row) -> str:
    if not _started(row.job):
        return "0"
    return str(_ncpus(row.job))


def _ncpus(job: dict[str, Any]) -> int:
    text = (job.get("resource_list") or {}).get("ncpus")
    try:
        return int(text) if text is not None else int(job.get("nodes") or 1)
    except ValueError:
        return int(job.get("nodes") or 1)


def node_list(row: Row) -> str:
    hosts = row.job.get("exec_host") or []
    if not hosts:
        return "None assigned"
    names = list(dict.fromkeys(h.rpartition("/")[2] for h in hosts))
    return hostlist.compress(names)


def nnodes(row: Row) -> str:
    hosts = row.job.get("exec_host") or []
    if hosts:
        return str(len(set(hosts)))
    return str(row.job.get("nodes") or 1)


def elapsed_seconds(job: dict[str, Any]) -> int:
    return int(job.get("elapsed") or 0)


def _when(epoch: Any) -> str:
    return times.timestamp(epoch, missing="Unknown")


def timelimit(row: Row) -> str | None:
    if row.step:
        return None
    return times.clock(row.job.get("walltime"))


def timelimit_raw(row: Row) -> str | None:
    if row.step:
        return None
    wall = row.job.get("walltime")
    return "UNLIMITED" if wall is None else str(int(wall) // 60)


def uid(row: Row) -> str | None:
    try:
        return str(pwd.getpwnam(row.job["owner"]).pw_uid)
    except (KeyError, TypeError):
        return None


def group(row: Row) -> str | None:
    if row.job.get("egroup"):
        return str(row.job["egroup"])
    try:
        return grp.getgrgid(pwd.getpwnam(row.job["owner"]).pw_gid).gr_name
    except (KeyError, TypeError):
        return None


def gid(row: Row) -> str | None:
    name = group(row)
    try:
        return str(grp.getgrnam(name).gr_gid) if name else None
    except KeyError:
        return None


def size(value: float) -> str:
    """A size as sacct's ReqMem and MaxRSS show it: the largest unit (K M G T) that
    keeps it a whole number, ``0`` for nothing."""
    n = int(value)
    if n <= 0:
        return "0"
    for unit, shift in (("T", 40), ("G", 30), ("M", 20), ("K", 10)):
        if n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return f"{(n + 1023) >> 10}K"


def req_mem(row: Row) -> str:
    text = (row.job.get("resource_list") or {}).get("mem")
    if not text:
        return "0"
    digits = text.rstrip("bkmgtpBKMGTP")
    unit = text[len(digits) :].lower().removesuffix("b")
    shift = {"": 0, "k": 10, "m": 20, "g": 30, "t": 40, "p": 50}.get(unit, 0)
    return size(int(digits or 0) << shift)


def max_rss(row: Row) -> str | None:
    used = row.job.get("resources_used")
    if not row.step or not used or "mem" not in used:
        return None
    return size(used["mem"])


def cpu_seconds(row: Row) -> int:
    return elapsed_seconds(row.job) * int(alloc_cpus(row))


def total_cpu(row: Row) -> str | None:
    used = row.job.get("resources_used")
    if not used or "cput" not in used:
        return None
    return cpu_clock(float(used["cput"]))


def cpu_clock(seconds: float) -> str:
    """sacct's TotalCPU: ``D-HH:MM:SS``, ``HH:MM:SS``, or ``MM:SS.mmm`` under an hour."""
    whole = int(seconds)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"
    if hours:
        return f"{hours:02d}:{minutes:02d}:{secs:02d}"
    millis = int(round((seconds - whole) * 1000)) % 1000
    return f"{minutes:02d}:{secs:02d}.{millis:03d}"


def _slurm(job: dict[str, Any], key: str) -> Any:
    return (job.get("slurm") or {}).get(key)


def ntasks(row: Row) -> str | None:
    if row.step:
        return "1"
    return None


def reason(row: Row) -> str | None:
    if row.step:
        return None
    return states.reason(row.job)


def _job_only(fn: Callable[[dict[str, Any]], Any]) -> Value:
    def value(row: Row) -> str | None:
        if row.step:
            return None
        got = fn(row.job)
        return None if got is None else str(got)

    return value


def _any(fn: Callable[[dict[str, Any]], Any]) -> Value:
    def value(row: Row) -> str | None:
        got = fn(row.job)
        return None if got is None else str(got)

    return value


VALUES: dict[str, Value] = {
    "Account": _any(lambda j: j.get("account")),
    "AllocCPUS": alloc_cpus,
    "NCPUS": alloc_cpus,
    "AllocNodes": lambda r: nnodes(r) if _started(r.job) else "0",
    "Cluster": lambda r: r.cluster,
    "Comment": _job_only(lambda j: (j.get("slurm") or {}).get("comment")),
    "CPUTime": lambda r: times.clock(cpu_seconds(r)),
    "CPUTimeRAW": lambda r: str(cpu_seconds(r)),
    "Elapsed": lambda r: times.clock(elapsed_seconds(r.job)),
    "ElapsedRaw": lambda r: str(elapsed_seconds(r.job)),
    "Eligible": lambda r: _when(r.job.get("etime")),
    "End": lambda r: _when(r.job.get("end_time")),
    "ExitCode": lambda r: states.exit_code(r.job),
    "DerivedExitCode": _job_only(lambda j: states.exit_code(j)),
    "GID": gid,
    "Group": group,
    "JobID": job_id,
    "JobIDRaw": job_id,
    "JobName": lambda r: BATCH_STEP if r.step else str(r.job.get("name", "")),
    "MaxRSS": max_rss,
    "NNodes": nnodes,
    "NodeList": node_list,
    "NTasks": ntasks,
    "Partition": _job_only(lambda j: j.get("queue")),
    "Priority": _job_only(lambda j: j.get("priority")),
    "Reason": reason,
    "ReqCPUS": _job_only(_ncpus),
    "ReqMem": req_mem,
    "ReqNodes": _job_only(lambda j: j.get("nodes")),
    "Start": lambda r: _when(r.job.get("stime")),
    "State": state,
    "StdErr": _job_only(lambda j: (j.get("error_path") or "").partition(":")[2] or None),
    "StdOut": _job_only(lambda j: (j.get("output_path") or "").partition(":")[2] or None),
    "Submit": lambda r: _when(r.job.get("ctime")),
    "Suspended": lambda r: "00:00:00",
    "Timelimit": timelimit,
    "TimelimitRaw": timelimit_raw,
    "TotalCPU": total_cpu,
    "UID": uid,
    "User": _job_only(lambda j: j.get("owner")),
    "WorkDir": _job_only(lambda j: j.get("workdir")),
}
