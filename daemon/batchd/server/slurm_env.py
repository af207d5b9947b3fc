"""The environment of a job from sbatch, as slurmd gives a batch script its SLURM_* variables.

The job's id as Slurm's commands write it (``12``; an array task ``12_3``), its nodes
as a host list (``node[001-004]``), its CPUs per node in Slurm's run-length form
(``2(x4)``) and its tasks spread over its nodes as Slurm's block distribution does
(the first nodes take one more when they do not divide evenly). No PBS_* variable is
set: tools that look for one to tell which batch system runs them (MPI launchers,
workflow engines) then see Slurm alone.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from batchd.model.hostlist import compress
from batchd.server.arrays import ArraySpec
from batchd.server.records import JobRecord
from batchd.site.tables import MachineConfig


def slurm_id(rec: JobRecord) -> str:
    """``12``, or an array task's ``12_3``."""
    if rec.subjob_index is not None:
        return f"{rec.pbs_seq}_{rec.subjob_index}"
    return str(rec.pbs_seq)


def run_length(counts: list[int]) -> str:
    """``[2, 2, 2, 1]`` -> ``2(x3),1``."""
    parts: list[str] = []
    i = 0
    while i < len(counts):
        j = i
        while j < len(counts) and counts[j] == counts[i]:
            j += 1
        parts.append(f"{counts[i]}(x{j - i})" if j - i > 1 else str(counts[i]))
        i = j
    return ",".join(parts)


def cpus_per_node(units: list[int], machine: MachineConfig) -> list[int]:
    """The CPUs a job has on each of its nodes, in node order (its cores on shared nodes,
    every core of a whole node)."""
    if machine.shared:
        per = machine.slots_per_node
        counted = Counter(u // per for u in units)
        return [counted[n] for n in sorted(counted)]
    return [machine.ncpus] * len(units)


def node_indices(units: list[int], machine: MachineConfig) -> list[int]:
    per = machine.slots_per_node
    return sorted({u // per for u in units})


def tasks_per_node(ntasks: int, nodes: int, per_node: int | None) -> list[int]:
    """Tasks on each node: ``per_node`` each when given, else spread in blocks."""
    if nodes <= 0:
        return []
    if per_node is not None:
        return [per_node] * nodes
    base, extra = divmod(ntasks, nodes)
    return [base + (1 if i < extra else 0) for i in range(nodes)]


def array_variables(parent: JobRecord, spec: ArraySpec, index: int) -> dict[str, str]:
    """An array task's SLURM_ARRAY_* variables."""
    return {
        "SLURM_ARRAY_JOB_ID": str(parent.seq),
        "SLURM_ARRAY_TASK_ID": str(index),
        "SLURM_ARRAY_TASK_MIN": str(spec.index(0)),
        "SLURM_ARRAY_TASK_MAX": str(spec.index(spec.count - 1)),
        "SLURM_ARRAY_TASK_STEP": str(spec.step),
        "SLURM_ARRAY_TASK_COUNT": str(spec.count),
    }


def slurm_variables(
    rec: JobRecord, machine: MachineConfig, cluster: str, submit_host: str
) -> dict[str, str]:
    """The SLURM_* variables of a job starting now on its nodes."""
    job = rec.job
    names = machine.node_names()
    indices = node_indices(job.units, machine)
    hosts = compress([names[n] for n in indices])
    cpus = cpus_per_node(job.units, machine)
    req: dict[str, Any] = rec.slurm or {}
    ntasks = int(req.get("ntasks") or len(indices) or 1)
    tasks = tasks_per_node(ntasks, len(indices), req.get("ntasks_per_node"))
    workdir = rec.workdir or ""
    env = {
        "SLURM_JOB_ID": slurm_id(rec),
        "SLURM_JOBID": slurm_id(rec),
        "SLURM_JOB_NAME": job.name,
        "SLURM_JOB_USER": rec.owner,
        "SLURM_SUBMIT_DIR": rec.variables.get("SLURM_SUBMIT_DIR", workdir),
        "SLURM_SUBMIT_HOST": rec.variables.get("SLURM_SUBMIT_HOST", submit_host),
        "SLURM_JOB_NODELIST": hosts,
        "SLURM_NODELIST": hosts,
        "SLURMD_NODENAME": names[indices[0]] if indices else "",
        "SLURM_JOB_NUM_NODES": str(len(indices)),
        "SLURM_NNODES": str(len(indices)),
        "SLURM_NTASKS": str(ntasks),
        "SLURM_NPROCS": str(ntasks),
        "SLURM_CPUS_ON_NODE": str(cpus[0] if cpus else 0),
        "SLURM_JOB_CPUS_PER_NODE": run_length(cpus),
        "SLURM_TASKS_PER_NODE": run_length(tasks),
        "SLURM_JOB_PARTITION": job.queue,
        "SLURM_CLUSTER_NAME": cluster,
        "SLURM_NODEID": "0",
        "SLURM_PROCID": "0",
        "SLURM_LOCALID": "0",
    }
    if req.get("cpus_per_task") is not None:
        env["SLURM_CPUS_PER_TASK"] = str(req["cpus_per_task"])
    if req.get("mem_per_node_mb") is not None:
        env["SLURM_MEM_PER_NODE"] = str(req["mem_per_node_mb"])
    if req.get("mem_per_cpu_mb") is not None:
        env["SLURM_MEM_PER_CPU"] = str(req["mem_per_cpu_mb"])
    if rec.account is not None:
        env["SLURM_JOB_ACCOUNT"] = rec.account
    return env


def pattern_fields(rec: JobRecord, first_host: str) -> dict[str, str]:
    """The values of the filename patterns (slurm_paths.expand) for a job starting now."""
    index = rec.subjob_index
    return {
        "j": slurm_id(rec),
        "J": slurm_id(rec),
        "x": rec.job.name,
        "u": rec.owner,
        "A": str(rec.pbs_seq),
        "a": str(index) if index is not None else "4294967294",
        "N": first_host.split(".")[0],
        "n": "0",
        "t": "0",
        "s": "batch",
    }
