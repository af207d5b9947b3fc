"""``scontrol show node``, ``show partition`` and ``show config``: batchd's nodes
(GET /nodes), queues (GET /queues) and server (GET /server) in Slurm's layouts
(src/api/node_info.c, partition_info.c, config_info.c)."""

from __future__ import annotations

from ..hints import Any
from ..nodes import size_bytes
from . import hostlist
from .joblist import MIN_JOB_AGE
from .sinfo import node_state
from .times import UNLIMITED, clock, timestamp

NULL = "(null)"
_NODE_STATES = {
    "idle": "IDLE", "alloc": "ALLOCATED", "mix": "MIXED", "drain": "IDLE+DRAIN",
    "drng": "ALLOCATED+DRAIN", "down": "DOWN", "resv": "IDLE+RESERVED",
}  # fmt: skip


def _ncpus(node: dict[str, Any]) -> int:
    return int((node.get("resources_available") or {}).get("ncpus", 1))


def _alloc_cpus(node: dict[str, Any]) -> int:
    if not node.get("jobs"):
        return 0
    if "exclusive" in str(node.get("state", "")):
        return _ncpus(node)
    return int((node.get("resources_assigned") or {}).get("ncpus", _ncpus(node)))


def _mem_mb(node: dict[str, Any]) -> int:
    """RealMemory: the node's memory in MB, 1 (Slurm's default) when batchd has none."""
    text = (node.get("resources_available") or {}).get("mem")
    return max(size_bytes(str(text)) >> 20, 1) if text else 1


def _alloc_mem_mb(node: dict[str, Any]) -> int:
    text = (node.get("resources_assigned") or {}).get("mem")
    return size_bytes(str(text)) >> 20 if text else 0


def node_record(node: dict[str, Any], queues: list[dict[str, Any]], one_liner: bool) -> str:
    name = str(node["name"])
    total, alloc = _ncpus(node), _alloc_cpus(node)
    mem, alloc_mem = _mem_mb(node), _alloc_mem_mb(node)
    parts = ",".join(q["name"] for q in queues if q.get("machine") == node.get("machine"))
    lines = [
        f"NodeName={name} Arch={NULL} CoresPerSocket={total} ",
        f"CPUAlloc={alloc} CPUEfctv={total} CPUTot={total} CPULoad=N/A",
        f"AvailableFeatures={NULL}",
        f"ActiveFeatures={NULL}",
        f"Gres={NULL}",
        f"NodeAddr={name} NodeHostName={name} ",
        f"RealMemory={mem} AllocMem={alloc_mem} FreeMem=N/A Sockets=1 Boards=1",
        f"State={_NODE_STATES[node_state(node)]} ThreadsPerCore=1 TmpDisk=0 Weight=1 "
        "Owner=N/A MCS_label=N/A",
        f"Partitions={parts} ",
        "BootTime=None SlurmdStartTime=None",
        "LastBusyTime=Unknown ResumeAfterTime=None",
        f"CfgTRES=cpu={total},mem={mem}M,billing={total}",
        "AllocTRES="
        + (f"cpu={alloc}" + (f",mem={alloc_mem}M" if alloc_mem else "") if alloc else ""),
        "CurrentWatts=0 AveWatts=0",
    ]
    if node.get("comment"):
        lines.append(f"Reason={' '.join(str(node['comment']).split())}")
    line_end = " " if one_liner else "\n   "
    return line_end.join(lines) + ("\n" if one_liner else "\n\n")


def _partition_state(queue: dict[str, Any]) -> str:
    """PBS's enabled (takes jobs) and started (runs them) as Slurm's partition state."""
    enabled, started = queue.get("enabled", True), queue.get("started", True)
    if enabled and started:
        return "UP"
    if started:
        return "DRAIN"  # runs its jobs, takes no new ones
    return "DOWN" if enabled else "INACTIVE"


def partition_record(queue: dict[str, Any], nodes: list[dict[str, Any]], one_liner: bool) -> str:
    mine = [n for n in nodes if n.get("machine") == queue.get("machine")]
    total_cpus = sum(_ncpus(n) for n in mine)
    total_mem = sum(_mem_mb(n) for n in mine)
    max_nodes = queue.get("max_nodes")
    max_time = queue.get("max_walltime")
    lines = [
        f"PartitionName={queue['name']}",
        "AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL",
        f"AllocNodes=ALL Default={'YES' if queue.get('default') else 'NO'} QoS=N/A",
        f"DefaultTime={clock(queue.get('default_walltime'))} DisableRootJobs=NO "
        "ExclusiveUser=NO ExclusiveTopo=NO GraceTime=0 Hidden=NO",
        f"MaxNodes={UNLIMITED if max_nodes is None else max_nodes} "
        f"MaxTime={clock(max_time)} MinNodes=0 LLN=NO "
        "MaxCPUsPerNode=UNLIMITED MaxCPUsPerSocket=UNLIMITED",
        f"Nodes={hostlist.compress([n['name'] for n in mine]) if mine else NULL}",
        "PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO",
        "OverTimeLimit=NONE PreemptMode=OFF",
        f"State={_partition_state(queue)} TotalCPUs={total_cpus} TotalNodes={len(mine)} "
        "SelectTypeParameters=NONE",
        f"JobDefaults={NULL}",
        "DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED",
        f"TRES=cpu={total_cpus},mem={total_mem}M,node={len(mine)},billing={total_cpus}",
    ]
    line_end = " " if one_liner else "\n   "
    return line_end.join(lines) + ("\n" if one_liner else "\n\n")


def config_lines(server: dict[str, Any]) -> str:
    """The part of Slurm's configuration batchd has, as ``scontrol show config`` prints
    it (``%-23s = %s``)."""
    pairs = [
        ("BatchdVersion", str(server.get("version", ""))),
        ("ClusterName", str(server.get("name", ""))),
        ("MinJobAge", f"{MIN_JOB_AGE} sec"),
        ("SchedulerType", f"batchd/{server.get('policy', '')}"),
    ]
    head = f"Configuration data as of {timestamp(server.get('now'))}\n"
    return head + "".join(f"{key:<23} = {value}\n" for key, value in pairs)
