"""salloc: get an allocation, run a command with it, release it.

The allocation is a job that holds its nodes (its script waits) until salloc deletes it.
Once it runs, salloc runs the command here (default: $SHELL) with SLURM_JOB_ID and the
allocation's other SLURM_* variables set, so that srun in it runs steps of the job;
then it releases the allocation and exits with the command's status.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence

from ..hints import Any
from ..transport import ApiError, Client, quote
from .command import SlurmError, SlurmParser, run
from .hostlist import compress
from .options import add_job_options, read_options
from .request import build_body
from .submit import FIRST_WAIT, LONGEST_WAIT, post_job, resolve

PROG = "salloc"
HOLDER = "#!/bin/sh\n# salloc's allocation: holds its nodes until released\nwhile :; do sleep 3600; done\n"  # fmt: skip


def parser() -> SlurmParser:
    p = SlurmParser(PROG, usage=f"{PROG} [OPTIONS...] [COMMAND [ARGS...]]",
                    description="Get an allocation, run a command with it, release it.")  # fmt: skip
    add_job_options(p)
    p.add_argument("command", nargs=argparse.REMAINDER, help="the command (default: $SHELL)")
    return p


def say(text: str) -> None:
    sys.stderr.write(f"{PROG}: {text}\n")
    sys.stderr.flush()


def wait_running(client: Client, job_id: str, seq: int) -> dict[str, Any]:
    """The job's view once it runs; SlurmError if it ends first."""
    wait, told = FIRST_WAIT, False
    while True:
        job: dict[str, Any] = client.get(f"/jobs/{quote(job_id)}")
        if job["state"] == "R":
            return job
        if job["state"] in ("E", "F"):
            raise SlurmError(f"Job allocation {seq} has been revoked.")
        if not told:
            say(f"job {seq} queued and waiting for resources")
            told = True
        time.sleep(wait)
        wait = min(wait * 2, LONGEST_WAIT)


def allocation_env(job: dict[str, Any], environ: Mapping[str, str], cwd: str) -> dict[str, str]:
    """The SLURM_* variables of an allocation, over ``environ``."""
    nodes = list(dict.fromkeys(name.rpartition("/")[2] for name in job.get("exec_host") or []))
    slurm = job.get("slurm") or {}
    ntasks = str(slurm.get("ntasks") or max(len(nodes), 1))
    env = dict(environ)
    env.update(
        SLURM_JOB_ID=str(job["seq"]), SLURM_JOBID=str(job["seq"]), SLURM_JOB_NAME=job["name"],
        SLURM_NNODES=str(len(nodes)), SLURM_JOB_NUM_NODES=str(len(nodes)),
        SLURM_JOB_NODELIST=compress(nodes), SLURM_NODELIST=compress(nodes),
        SLURM_NTASKS=ntasks, SLURM_NPROCS=ntasks, SLURM_SUBMIT_DIR=cwd,
        SLURM_SUBMIT_HOST=os.uname().nodename, SLURM_JOB_PARTITION=str(job.get("queue", "")),
    )  # fmt: skip
    if slurm.get("cpus_per_task"):
        env["SLURM_CPUS_PER_TASK"] = str(slurm["cpus_per_task"])
    return env


def _main(argv: list[str]) -> int:
    cli = parser().parse_args(argv)
    command = list(cli.command or [])
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        command = [os.environ.get("SHELL") or "/bin/sh"]
    opts = read_options(cli, None, PROG, PROG)
    cwd = os.getcwd()
    name = os.path.basename(command[0]) or "salloc"
    try:
        body, _ = build_body(opts, HOLDER, name, cwd, os.environ, PROG)
    except ValueError as exc:
        raise SlurmError(str(exc)) from None
    body.pop("shell", None)
    body["output_path"] = body["error_path"] = "/dev/null"
    client = Client()
    resolve(client, opts, body)
    job = post_job(client, body)
    seq = job["seq"]
    say(f"Pending job allocation {seq}")
    try:
        running = wait_running(client, job["id"], seq)
        say(f"Granted job allocation {seq}")
        workdir = os.path.abspath(opts.chdir) if opts.chdir else cwd
        try:
            status = subprocess.call(
                command, env=allocation_env(running, os.environ, cwd), cwd=workdir
            )
        except OSError as exc:
            raise SlurmError(f"{command[0]}: {exc.strerror}") from None
    finally:
        say(f"Relinquishing job allocation {seq}")
        with contextlib.suppress(ApiError):  # it has ended already
            client.delete(f"/jobs/{quote(job['id'])}")
    return 128 - status if status < 0 else status


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
