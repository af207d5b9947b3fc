"""sbatch's options as batchd's job request (``POST /jobs``).

Slurm asks for tasks and CPUs; batchd places chunks (``select``) on nodes (``place``):

- ``-N N`` (with ``-n``, ``--ntasks-per-node``): N chunks, one a node (``scatter``), each
  with the CPUs of the tasks it holds (tasks per node times ``-c``);
- ``-n N`` without ``-N``: N one-task chunks placed where they fit (``free``);
- neither: one chunk of ``-c`` CPUs;
- ``-N MIN-MAX``: a moldable job (``nodes`` to ``nodes_max``), its width the scheduler's;
- ``--mem`` is per node (a chunk's ``mem``; without ``-N``, shared among the task chunks),
  ``--mem-per-cpu`` a chunk's CPUs times it; ``--exclusive`` adds ``excl``.

The request as Slurm sees it goes in ``slurm`` (for SLURM_* variables and the views).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shlex
from collections.abc import Mapping

from ..hints import Any
from ..jobenv import origin_variables
from ..text import sendable
from . import values

FRONT_END = "slurm"
# SLURM_* variables describe a job: the daemon gives a job its own, never the submitter's.
_JOB_VARIABLE = re.compile(r"^SLURM_")
_VAR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SH_FAMILY = ("sh", "bash", "dash", "ksh", "zsh", "mksh", "ash")


def placement(opts: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the request's placement fields, the ``slurm`` object)."""
    cpt = values.count("--cpus-per-task", opts.cpus_per_task) if opts.cpus_per_task else 1
    per_node = (
        values.count("--ntasks-per-node", opts.ntasks_per_node) if opts.ntasks_per_node else None
    )
    ntasks = values.count("--ntasks", opts.ntasks) if opts.ntasks else None
    nodes, nodes_max = values.node_range(opts.nodes) if opts.nodes else (None, None)
    mem = values.megabytes("--mem", opts.mem) if opts.mem else None
    mem_cpu = values.megabytes("--mem-per-cpu", opts.mem_per_cpu) if opts.mem_per_cpu else None
    exclusive = opts.exclusive is not None
    if nodes is None and ntasks is not None and per_node is not None:
        nodes = math.ceil(ntasks / per_node)
    body: dict[str, Any] = {}
    if nodes_max is not None:
        body["nodes"], body["nodes_max"] = nodes, nodes_max
        tasks = ntasks or (per_node or 1) * (nodes or 1)
        if exclusive:
            body["place"] = "scatter:excl"
    elif nodes is not None:
        tasks = ntasks or (per_node or 1) * nodes
        if ntasks is not None and ntasks < nodes:
            raise ValueError(f"--ntasks={ntasks} is below --nodes={nodes}: every node runs a task")
        on_node = per_node or math.ceil(tasks / nodes)
        body["select"] = [_chunk(nodes, on_node, cpt, mem, mem_cpu)]
        body["place"] = "scatter" + (":excl" if exclusive else "")
    elif ntasks is not None and ntasks > 1:
        tasks = ntasks
        share = math.ceil(mem / ntasks) if mem else None
        body["select"] = [_chunk(ntasks, 1, cpt, share, mem_cpu)]
        body["place"] = "free" + (":excl" if exclusive else "")
    else:
        tasks = 1
        body["select"] = [_chunk(1, 1, cpt, mem, mem_cpu)]
        if exclusive:
            body["place"] = "pack:excl"
    slurm = {
        "ntasks": tasks,
        "cpus_per_task": cpt,
        "ntasks_per_node": per_node,
        "mem_per_node_mb": mem,
        "mem_per_cpu_mb": mem_cpu,
        "exclusive": exclusive,
    }
    return body, slurm


def _chunk(
    count: int, tasks: int, cpt: int, mem_mb: int | None, mem_cpu_mb: int | None
) -> dict[str, Any]:
    chunk: dict[str, Any] = {"count": count, "ncpus": tasks * cpt, "mpiprocs": tasks}
    if cpt > 1:
        chunk["ompthreads"] = cpt
    if mem_mb:  # --mem=0: all of a node's memory, which is no limit here
        chunk["mem"] = f"{mem_mb}mb"
    elif mem_cpu_mb:
        chunk["mem"] = f"{mem_cpu_mb * tasks * cpt}mb"
    return chunk


def environment(
    spec: str | None, environ: Mapping[str, str], prog: str
) -> tuple[dict[str, str], list[str]]:
    """``--export``: (the variables sent, the names left out because they cannot be sent)."""
    mode, named = values.export(spec) if spec is not None else ("ALL", {})
    out: dict[str, str] = {}
    skipped: list[str] = []
    if mode == "ALL":
        for name, value in environ.items():
            if _JOB_VARIABLE.match(name) or name.startswith("PBS_O_"):
                continue
            if not _VAR.match(name) or not sendable(value):
                skipped.append(name)
                continue
            out[name] = value
    for name, given in named.items():
        chosen = given if given is not None else environ.get(name)
        if chosen is None:
            continue
        if not sendable(chosen):
            raise ValueError(f"--export: {name}: the value holds a control character")
        out[name] = chosen
    return out, skipped


def script_with_args(script: str, args: list[str], source: str) -> str:
    """The script given its arguments: ``set -- ARGS`` after the ``#!`` line, for the
    shells that take it; ValueError for another interpreter."""
    if not args:
        return script
    first, nl, rest = script.partition("\n")
    words = first[2:].split()
    name = os.path.basename(words[0]) if words else ""
    if name == "env" and len(words) > 1:
        name = words[1]
    if name not in _SH_FAMILY:
        raise ValueError(
            f"{source}: arguments after the script are passed to sh-family scripts only "
            f"(#!{first[2:].strip()} is not one)"
        )
    return f"{first}{nl}set -- {shlex.join(args)}\n{rest}"


def interpreter(script: str) -> str | None:
    """The program the ``#!`` line names, as ``shell`` (the daemon hands it the script):
    its path, or for ``/usr/bin/env NAME`` NAME as found in PATH; None when not found."""
    words = script.partition("\n")[0][2:].split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env" and len(words) > 1:
        from shutil import which

        return which(words[1])
    return words[0]


def check_script(script: str) -> None:
    """Slurm's checks of a batch script (src/sbatch/sbatch.c: get_script_buffer)."""
    if not script:
        raise ValueError("Batch script is empty!")
    if not script.strip():
        raise ValueError("Batch script contains only whitespace!")
    if not script.startswith("#!"):
        raise ValueError(
            "This does not look like a batch script.  The first line must start with #! "
            "followed by the path to an interpreter. For instance: #!/bin/sh"
        )
    if "\0" in script:
        raise ValueError("The Slurm controller does not allow scripts that contain a NULL character '\\0'.")  # fmt: skip
    if "\r\n" in script:
        raise ValueError(
            "Batch script contains DOS line breaks (\\r\\n) instead of expected UNIX line "
            "breaks (\\n)."
        )


def depend_text(deps: list[values.Dependency]) -> str:
    """batchd's ``depend``: Slurm's 12 is ``12``, its 12_3 ``12[3]``."""
    parts = []
    for dep in deps:
        if dep.kind == "singleton":
            parts.append("singleton")
            continue
        ids = [f"{seq}[{task}]" if task is not None else str(seq) for seq, task in dep.ids]
        parts.append(":".join([dep.kind, *ids]))
    return ",".join(parts)


def build_body(
    opts: argparse.Namespace,
    script: str,
    default_name: str,
    cwd: str,
    environ: Mapping[str, str],
    prog: str = "sbatch",
) -> tuple[dict[str, Any], list[str]]:
    """The request (without ``exec_time``, ``depend`` and an UNLIMITED time, which need
    the daemon) and the environment's names left out. ValueError naming the option."""
    body: dict[str, Any] = {"front_end": FRONT_END, "script": script}
    body["name"] = values.job_name(opts.job_name) if opts.job_name else default_name
    fields, slurm = placement(opts)
    body.update(fields)
    body["slurm"] = slurm
    if opts.time is not None:
        seconds = values.time_limit(opts.time)
        if seconds is not None:
            body["walltime"] = seconds
    if opts.partition:
        body["queue"] = opts.partition
    if opts.account:
        body["account"] = opts.account
    if opts.hold:
        body["hold"] = True
    if opts.nice is not None:
        body["priority"] = values.nice(opts.nice)
    if opts.requeue is False:
        body["rerunable"] = False
    workdir = cwd
    if opts.chdir:
        workdir = os.path.normpath(os.path.join(cwd, os.path.expanduser(opts.chdir)))
        if not os.path.isdir(workdir):
            raise ValueError(f"--chdir={opts.chdir}: no such directory")
    body["workdir"] = workdir
    variables, skipped = environment(opts.export, environ, prog)
    variables.update(origin_variables(environ, workdir))
    variables["SLURM_SUBMIT_DIR"] = cwd
    variables["SLURM_SUBMIT_HOST"] = os.uname().nodename
    body["variables"] = variables
    for key, field in (("output", "output_path"), ("error", "error_path")):
        given = getattr(opts, key, None)
        if given:
            body[field] = given
    warn = getattr(opts, "signal", None)
    if warn is not None:
        spec_ = values.warn_signal(warn)
        slurm["signal"] = {"number": spec_.number, "before": spec_.before, "script": spec_.script}
    if getattr(opts, "comment", None):
        slurm["comment"] = opts.comment
    if getattr(opts, "open_mode", None) is not None:
        slurm["open_mode"] = values.open_mode(opts.open_mode)
    array = getattr(opts, "array", None)
    if array is not None:
        spec = values.array(array)
        body["array_indices"] = spec.span
        if spec.max_running is not None:
            body["max_run_subjobs"] = spec.max_running
    shell = interpreter(script)
    if shell is not None:
        body["shell"] = shell
    return body, skipped
