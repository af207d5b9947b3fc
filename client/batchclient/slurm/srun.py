"""srun: run a command as tasks.

Inside a job (SLURM_JOB_ID set), it runs the command as a step of the job: ``-n`` copies
(default SLURM_NTASKS, or 1) on this node, each with SLURM_PROCID, SLURM_LOCALID and
SLURM_STEP_ID set, and exits with the highest exit code. Outside a job, it submits a job
that runs the command that way, shows its output as it is written, and exits with its
exit code.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from typing import IO

from ..transport import Client, quote
from . import values
from .command import SlurmError, SlurmParser, run
from .options import add_job_options, read_options
from .request import build_body
from .submit import post_job, resolve, slurm_exit_code, wait_job

PROG = "srun"


def parser() -> SlurmParser:
    p = SlurmParser(PROG, usage=f"{PROG} [OPTIONS...] COMMAND [ARGS...]",
                    description="Run a command as tasks, in a job or as a job of its own.")  # fmt: skip
    add_job_options(p)
    p.add_argument("-l", "--label", dest="label", action="store_true", default=None,
                   help="prefix each output line with its task number")  # fmt: skip
    p.add_argument("-u", "--unbuffered", action="store_true",
                   help="pass output on as it comes (srun never holds it back)")  # fmt: skip
    p.add_argument("--cpu-bind", dest="cpu_bind", metavar="[quiet|verbose,]TYPE",
                   help="accepted: a step runs on the CPUs of its job's placement")  # fmt: skip
    p.add_argument("-o", "--output", dest="output", metavar="PATTERN",
                   help="in a job: each task's output to this file (%%j %%t %%s ... expanded)")  # fmt: skip
    p.add_argument("-e", "--error", dest="error", metavar="PATTERN",
                   help="in a job: each task's error to this file (default: with the output)")  # fmt: skip
    p.add_argument("command", nargs=argparse.REMAINDER, help="the command and its arguments")
    return p


def next_step(job_id: str, environ: Mapping[str, str]) -> int:
    """The job's next step number, counted in a file of the job's TMPDIR (one per job)."""
    folder = environ.get("TMPDIR") or tempfile.gettempdir()
    path = os.path.join(folder, f".slurm-steps-{job_id}")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    with os.fdopen(fd, "r+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        text = fh.read().strip()
        step = int(text) if text.isdigit() else 0
        fh.seek(0)
        fh.truncate()
        fh.write(f"{step + 1}\n")
    return step


def _relay(stream: IO[bytes], out: IO[bytes], prefix: bytes, lock: threading.Lock) -> None:
    for line in iter(stream.readline, b""):
        with lock:
            out.write(prefix + line)
            out.flush()


def task_file(pattern: str, environ: Mapping[str, str], step: int, task: int) -> str:
    """A step's ``--output``/``--error`` pattern for one task: %j (job id), %J (job.step),
    %s (step), %t (task), %n (node index: 0), %N (this host), %u (user), %x (job name),
    %A and %a (array job and task), %% (a %), as srun expands them."""
    job = environ.get("SLURM_JOB_ID", "0")
    fields = {
        "j": job, "J": f"{job}.{step}", "s": str(step), "t": str(task), "n": "0",
        "N": os.uname().nodename.split(".")[0], "u": environ.get("USER", ""),
        "x": environ.get("SLURM_JOB_NAME", ""),
        "A": environ.get("SLURM_ARRAY_JOB_ID", job),
        "a": environ.get("SLURM_ARRAY_TASK_ID", "4294967294"), "%": "%",
    }  # fmt: skip
    out, i = "", 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "%" and i + 1 < len(pattern) and pattern[i + 1] in fields:
            out += fields[pattern[i + 1]]
            i += 2
        else:
            out += ch
            i += 1
    return out


def _open_task_file(path: str) -> IO[bytes]:
    try:
        return open(path, "ab")  # noqa: SIM115 - closed by run_step
    except OSError as exc:
        raise SlurmError(f"Could not open output file {path}: {exc.strerror}") from None


def run_step(
    command: list[str],
    ntasks: int,
    step: int,
    environ: Mapping[str, str],
    label: bool = False,
    cwd: str | None = None,
    output: str | None = None,
    error: str | None = None,
) -> int:
    """The tasks of one step, run at once; the highest exit code (128+N for signal N).
    ``output``/``error``: file patterns (``task_file``) instead of srun's own streams."""
    width = len(str(ntasks - 1))
    procs: list[subprocess.Popen[bytes]] = []
    relays: list[threading.Thread] = []
    files: list[IO[bytes]] = []
    lock = threading.Lock()
    pipe = subprocess.PIPE if label else None
    for task in range(ntasks):
        env = dict(environ)
        env.update(
            SLURM_PROCID=str(task), SLURM_LOCALID=str(task), SLURM_STEP_ID=str(step),
            SLURM_STEPID=str(step), SLURM_STEP_NUM_TASKS=str(ntasks), SLURM_NTASKS=str(ntasks),
            SLURM_NPROCS=str(ntasks), SLURM_NODEID="0",
        )  # fmt: skip
        out_to: int | IO[bytes] | None = pipe
        err_to: int | IO[bytes] | None = pipe
        if output is not None:
            out_to = _open_task_file(task_file(output, environ, step, task))
            files.append(out_to)
            err_to = out_to if error is None else err_to
        if error is not None:
            err_to = _open_task_file(task_file(error, environ, step, task))
            files.append(err_to)
        try:
            proc = subprocess.Popen(command, env=env, cwd=cwd, stdout=out_to, stderr=err_to)
        except OSError as exc:
            for started in procs:
                started.kill()
            for fh in files:
                fh.close()
            raise SlurmError(f"execve(): {command[0]}: {exc.strerror}") from None
        procs.append(proc)
        if label:
            prefix = f"{task:>{width}}: ".encode()
            for stream, out in ((proc.stdout, sys.stdout.buffer), (proc.stderr, sys.stderr.buffer)):
                if stream is None:  # that stream goes to a file
                    continue
                t = threading.Thread(target=_relay, args=(stream, out, prefix, lock), daemon=True)
                t.start()
                relays.append(t)
    codes = [proc.wait() for proc in procs]
    for t in relays:
        t.join()
    for fh in files:
        fh.close()
    return max(128 - code if code < 0 else code for code in codes)


class _Follower:
    """Copies what a job writes to its output and error files to ours, as it comes."""

    def __init__(self, pairs: list[tuple[str, IO[bytes]]]) -> None:
        self.pairs = pairs
        self.offsets = [0] * len(pairs)

    def __call__(self) -> None:
        for i, (path, out) in enumerate(self.pairs):
            try:
                with open(path, "rb") as fh:
                    fh.seek(self.offsets[i])
                    data = fh.read()
            except OSError:
                continue
            if data:
                self.offsets[i] += len(data)
                out.write(data)
                out.flush()


def as_job(cli: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Outside a job: a job that runs the step, its output shown as it is written."""
    opts = read_options(cli, None, "srun", PROG)
    inner = [sys.executable, "-m", "batchclient.slurm.srun"]
    if cli.ntasks:
        inner += ["-n", cli.ntasks]
    if cli.label:
        inner.append("-l")
    for flag, pattern in (("--output", cli.output), ("--error", cli.error)):
        if pattern is not None:  # the tasks write there, in the job, as srun in a job does
            inner += [flag, pattern]
    # The step runs inside the job: SLURM_JOB_ID tells the inner srun so (from PBS_JOBID
    # where the daemon sets no SLURM_* variables).
    script = (
        '#!/bin/sh\nSLURM_JOB_ID="${SLURM_JOB_ID:-${PBS_JOBID%%.*}}"; export SLURM_JOB_ID\n'
        f"exec {shlex.join([*inner, '--', *cli.command])}\n"
    )
    folder = tempfile.mkdtemp(prefix="srun-")
    try:
        opts.output, opts.error = os.path.join(folder, "out"), os.path.join(folder, "err")
        try:
            body, _ = build_body(opts, script, _name(cli), os.getcwd(), environ, PROG)
        except ValueError as exc:
            raise SlurmError(str(exc)) from None
        client = Client()
        resolve(client, opts, body)
        job = post_job(client, body)
        follow = _Follower([(opts.output, sys.stdout.buffer), (opts.error, sys.stderr.buffer)])
        try:
            ended = wait_job(client, job["id"], tick=follow)
        except KeyboardInterrupt:
            client.delete(f"/jobs/{quote(job['id'])}")
            sys.stderr.write(f"{PROG}: Job step aborted: job {job['seq']} cancelled\n")
            raise
        follow()
        return slurm_exit_code(ended)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _name(cli: argparse.Namespace) -> str:
    name = os.path.basename(cli.command[0]) if cli.command else "srun"
    return "".join("_" if ch.isspace() or ch in "@:" else ch for ch in name)[:236] or "srun"


def _main(argv: list[str]) -> int:
    cli = parser().parse_args(argv)
    if cli.command and cli.command[0] == "--":
        cli.command = cli.command[1:]
    if not cli.command:
        raise SlurmError("no command to run")
    environ = dict(os.environ)
    job_id = environ.get("SLURM_JOB_ID")
    if job_id is None:
        return as_job(cli, environ)
    try:
        given = values.count("--ntasks", cli.ntasks) if cli.ntasks else None
    except ValueError as exc:
        raise SlurmError(str(exc)) from None
    default = environ.get("SLURM_NTASKS", "1")
    ntasks = given or (int(default) if default.isdigit() and int(default) > 0 else 1)
    cwd = os.path.abspath(cli.chdir) if cli.chdir else None
    step = next_step(job_id, environ)
    sys.stdout.flush()
    return run_step(cli.command, ntasks, step, environ, bool(cli.label), cwd, cli.output, cli.error)


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
