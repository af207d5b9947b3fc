"""A job's process as OpenPBS's MoM would set it up (``src/resmom/start_exec.c``).

- The shell: ``qsub -S`` for this host, else the owner's login shell, started as a
  login shell (``argv[0]`` ``-bash``) that runs the script as a command, so that a
  ``#!`` line is honoured as under PBS (a script with one is exec'd: its interpreter
  takes the login shell's place, one process whatever the shell). batchd hands the
  script over on a descriptor (``/dev/fd/199``) instead of MoM's spool file named on
  the shell's stdin: stdin is /dev/null. An interpreter that is not a shell
  (``-S /usr/bin/python3``) is given the script as its argument.
- The environment, in MoM's order: a fixed base (``[execution] path``; nothing of the
  daemon's own), then the job's Variable_List (``PBS_O_*``, ``-v``, ``-V``), then what
  MoM computes: HOME, LOGNAME, USER, SHELL, PBS_JOBNAME, PBS_JOBID, PBS_QUEUE,
  PBS_JOBCOOKIE, PBS_NODENUM, PBS_TASKNUM, PBS_MOMPORT, NCPUS and OMP_NUM_THREADS (the
  first chunk's ompthreads, else its ncpus), PBS_NODEFILE, PBS_ARRAY_INDEX and
  PBS_ARRAY_ID, TMPDIR, PBS_JOBDIR, PBS_ENVIRONMENT=PBS_BATCH, ENVIRONMENT=BATCH.
- CPUs: core K of node N of the machine is this host's CPU number (N x cores_per_node
  + K) modulo the CPUs the daemon may use, in their order; a machine larger than the
  host wraps around. Every node is this host: PBS_NODEFILE names it once per MPI
  process of each chunk (``mpiprocs``, one by default).
"""

from __future__ import annotations

import os
import posixpath
import secrets
from typing import Any

from batchd.execution.account import Account
from batchd.execution.child import SCRIPT_FD
from batchd.execution.spec import LaunchSpec
from batchd.server.jobresources import JobResources, whole_nodes
from batchd.server.outputs import file_name, local_path, pick_shell, this_host
from batchd.server.records import JobRecord
from batchd.server.slurm_env import pattern_fields, slurm_variables
from batchd.server.slurm_paths import expand
from batchd.site.config import SiteConfig
from batchd.site.tables import MachineConfig

# Shells that take -c and are started as login shells; anything else is an interpreter.
SHELLS = frozenset(
    {"sh", "bash", "dash", "ash", "ksh", "ksh93", "mksh", "pdksh", "zsh", "csh", "tcsh",
     "fish", "yash", "posh", "busybox"}
)  # fmt: skip
MOM_PORT = "15003"  # PBS_MOMPORT: the port a MoM listens on; jobs here talk to none


def shell_of(rec: JobRecord, acct: Account) -> str:
    return pick_shell(rec.shell) if rec.shell else acct.shell


def shell_argv(shell: str, script_text: str = "") -> list[str]:
    """A shell's: a login shell running the script as a command (``exec``: the script's
    interpreter in its place, when the script names one with ``#!``); an interpreter's:
    the script as its argument."""
    name = posixpath.basename(shell)
    script = f"/dev/fd/{SCRIPT_FD}"
    if name in SHELLS:
        return [f"-{name}", "-c", f"exec {script}" if script_text.startswith("#!") else script]
    return [name, script]


def threads(res: JobResources) -> int:
    """NCPUS and OMP_NUM_THREADS: the first chunk's ompthreads, else its ncpus."""
    first = res.chunks[0]
    return first.ompthreads if first.ompthreads is not None else first.ncpus


def mem_limit(res: JobResources) -> int | None:
    """Resource_List.mem: the chunks' mem summed, else a job-wide mem, else none."""
    if any(c.mem is not None for c in res.chunks):
        return sum(c.count * (c.mem or 0) for c in res.chunks)
    for name, value in res.job:
        if name == "mem" and isinstance(value, int):
            return value
    return None


def node_lines(res: JobResources, host: str) -> list[str]:
    """PBS_NODEFILE: the host once per MPI process of each chunk on each of its nodes."""
    lines: list[str] = []
    for group in res.groups:
        for u in group:
            lines += [host] * (res.chunks[u].mpiprocs or 1)
    return lines


def cpus_of(units: list[int], machine: MachineConfig, allowed: list[int]) -> list[int]:
    """This host's CPUs for the job's units (cores of a shared machine, else whole nodes)."""
    if not allowed:
        return []
    per = machine.ncpus
    cores = units if machine.shared else [n * per + k for n in units for k in range(per)]
    return sorted({allowed[c % len(allowed)] for c in cores})


def environment(
    rec: JobRecord, acct: Account, shell: str, job_id: str, res: JobResources, base_path: str,
    tmpdir: str, nodefile: str,
) -> dict[str, str]:  # fmt: skip
    job = rec.job
    env = {"PATH": base_path}
    env.update(rec.variables)
    count = str(threads(res))
    env.update(
        HOME=acct.home,
        LOGNAME=acct.name,
        USER=acct.name,
        SHELL=shell,
        PBS_JOBNAME=job.name,
        PBS_JOBID=job_id,
        PBS_QUEUE=job.queue,
        PBS_JOBCOOKIE=secrets.token_hex(16).upper(),
        PBS_NODENUM="0",
        PBS_TASKNUM="1",
        PBS_MOMPORT=MOM_PORT,
        OMP_NUM_THREADS=count,
        NCPUS=count,
        PBS_NODEFILE=nodefile,
        TMPDIR=tmpdir,
        PBS_JOBDIR=acct.home,
        PBS_ENVIRONMENT="PBS_BATCH",
        ENVIRONMENT="BATCH",
    )
    if rec.subjob_index is not None:
        env["PBS_ARRAY_INDEX"] = str(rec.subjob_index)
        env["PBS_ARRAY_ID"] = rec.variables.get("PBS_ARRAY_ID", "")
    return env


def build(
    rec: JobRecord, acct: Account, site: SiteConfig, job_id: str, key: str,
    cgroup: str | None, allowed_cpus: list[int],
) -> LaunchSpec:  # fmt: skip
    """The LaunchSpec of a job that starts now on its nodes."""
    job = rec.job
    res = rec.resources or whole_nodes(job.width)
    execution = site.execution
    safe_id = "".join(c if c.isalnum() or c in "._-" else "_" for c in job_id)
    tmpdir = posixpath.join(execution.tmpdir, f"pbs.{safe_id}.{secrets.token_hex(8)}")
    index = rec.subjob_index
    out = local_path(rec.output_path, index) if rec.output_path and rec.join != "eo" else None
    err = local_path(rec.error_path, index) if rec.error_path and rec.join != "oe" else None
    common = _common(rec, acct, site, job_id, key, cgroup, allowed_cpus, res)
    if rec.front_end == "slurm":
        return slurm_job(rec, acct, site, common, out, err, tmpdir)
    shell = shell_of(rec, acct)
    nodefile = f"{tmpdir}.nodes"
    return LaunchSpec(
        **common,
        shell=shell,
        argv=shell_argv(shell, rec.script),
        env=environment(rec, acct, shell, job_id, res, execution.path, tmpdir, nodefile),
        stdout=out,
        stderr=err,
        stdout_name=file_name(job.name, "o", rec.pbs_seq, index),
        stderr_name=file_name(job.name, "e", rec.pbs_seq, index),
        kill_delay=site.server.kill_delay,
        nodes=node_lines(res, this_host()),
    )


def _common(
    rec: JobRecord, acct: Account, site: SiteConfig, job_id: str, key: str,
    cgroup: str | None, allowed: list[int], res: JobResources,
) -> dict[str, Any]:  # fmt: skip
    """What a job's LaunchSpec holds whichever commands it came from: who runs it, its
    script, CPUs, walltime and memory limit, its cgroup."""
    job = rec.job
    return {
        "job_id": job_id,
        "key": key,
        "user": acct.name,
        "uid": acct.uid,
        "gid": acct.gid,
        "groups": list(acct.groups),
        "home": acct.home,
        "script": rec.script,
        "cpus": cpus_of(job.units, site.machine[job.machine], allowed),
        "walltime": job.estimate,
        "mem": mem_limit(res),
        "cgroup": cgroup,
        "enforce_mem": site.execution.enforce_mem,
    }


SLURM_SHELL = "/bin/sh"  # runs a script without a #! line, as no login shell


def slurm_argv(shell: str, script_text: str) -> list[str]:
    """slurmstepd execs the script itself: a ``#!`` line names its interpreter (the shell
    only execs it, with no login profile); a script without one is run by ``shell``."""
    script = f"/dev/fd/{SCRIPT_FD}"
    name = posixpath.basename(shell)
    if script_text.startswith("#!"):
        return [name, "-c", f"exec {script}"] if name in SHELLS else [name, script]
    return [name, script]


def slurm_job(
    rec: JobRecord, acct: Account, site: SiteConfig, common: dict[str, Any],
    out: str | None, err: str | None, tmpdir: str,
) -> LaunchSpec:  # fmt: skip
    """The LaunchSpec of a job from sbatch: it starts in its working directory with SLURM_*
    variables instead of PBS_* ones, its paths' patterns expanded, no node file, and
    Slurm's KillWait between SIGTERM and SIGKILL."""
    job = rec.job
    machine = site.machine[job.machine]
    shell = pick_shell(rec.shell) if rec.shell else SLURM_SHELL
    env = {"PATH": site.execution.path}
    env.update(rec.variables)
    env.update(HOME=acct.home, LOGNAME=acct.name, USER=acct.name, SHELL=shell, TMPDIR=tmpdir)
    env.update(slurm_variables(rec, machine, site.server_name, this_host()))
    names = machine.node_names()
    first = names[job.units[0] // machine.slots_per_node] if job.units else this_host()
    fields = pattern_fields(rec, first)
    asked: dict[str, Any] = rec.slurm or {}
    warn = asked.get("signal") or {}
    return LaunchSpec(
        **common,
        shell=shell,
        argv=slurm_argv(shell, rec.script),
        env=env,
        stdout=expand(out, fields) if out is not None else None,
        stderr=expand(err, fields) if err is not None else None,
        kill_delay=site.server.kill_wait,
        workdir=rec.workdir or acct.home,
        front_end="slurm",
        warn_signal=int(warn.get("number", 0)),
        warn_before=int(warn.get("before", 0)),
        warn_script=bool(warn.get("script", False)),
        append_output=asked.get("open_mode") == "append",
    )


def allowed_cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))
