"""``batchd demo``: the daemon on an accelerated clock with a synthetic stream, used as a user would.

It starts ``batchd serve`` on hpcline96 with a temporary socket and state,
runs qsub, qstat, qnodes, qmgr and sbatch, squeue, sinfo against it, prints what
they show, and stops
the daemon with SIGTERM. This is what ``make run`` does.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPT = """#!/bin/sh
#PBS -N demo_lu
#PBS -l walltime=00:45:00
echo "emulated: batchd runs no commands; BATCHD_RUNTIME sets how long it runs"
"""


def _tool(name: str) -> str:
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else (shutil.which(name) or name)


class Demo:
    def __init__(self, config: str, speed: float, jobs: int, keep_lines: int) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="batchd-demo-"))
        self.sock = self.dir / "batchd.sock"
        self.env = dict(os.environ, BATCHD_SOCKET=str(self.sock))
        self.env.pop("BATCHD_URL", None)
        self.config = config
        self.speed = speed
        self.jobs = jobs
        self.keep = keep_lines
        self.proc: subprocess.Popen[bytes] | None = None

    def say(self, text: str) -> None:
        print(f"\n## {text}", flush=True)

    def run(self, *argv: str, stdin: str | None = None) -> str:
        print(f"$ {shlex.join(argv)}", flush=True)
        cmd = [_tool(argv[0]), *argv[1:]]
        out = subprocess.run(cmd, env=self.env, input=stdin, capture_output=True, text=True)
        lines = (out.stdout + out.stderr).rstrip("\n").splitlines()
        shown = lines if len(lines) <= self.keep else lines[: self.keep]
        for line in shown:
            print(line)
        if len(lines) > len(shown):
            print(f"... ({len(lines) - len(shown)} more lines)")
        return out.stdout.strip()

    def start(self) -> None:
        argv = [
            _tool("batchd"), "serve", "--config", self.config,
            "--speed", f"{self.speed:g}", "--replay", f"synthetic:{self.jobs}",
            "--shrink", "0.03", "--seed", "7",
            "--socket", str(self.sock), "--state", str(self.dir / "state.db"),
        ]  # fmt: skip
        print(f"$ batchd {shlex.join(argv[1:])} &", flush=True)
        log = open(self.dir / "daemon.log", "wb")  # noqa: SIM115 - the daemon keeps writing to it
        self.proc = subprocess.Popen(argv, stdout=log, stderr=log)
        deadline = time.monotonic() + 60
        while not self.sock.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the daemon did not start:\n{self.log_tail()}")
            time.sleep(0.1)

    def log_tail(self) -> str:
        return (self.dir / "daemon.log").read_text(errors="replace")[-2000:]

    def stop(self) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(30)
        lines = (self.dir / "daemon.log").read_text(errors="replace").splitlines()
        print(f"daemon exited with status {code}; it wrote {len(lines)} JSON log lines")
        print(f"last: {lines[-1] if lines else '(none)'}")
        return code

    def main(self) -> int:
        self.say(f"the daemon: hpcline96 at {self.speed:g}x, a synthetic stream beside your jobs")
        self.start()
        try:
            time.sleep(4)
            script = self.dir / "lu.sh"
            script.write_text(SCRIPT)
            self.say("submit: a script with #PBS directives, then a job that depends on it")
            first = self.run("qsub", "-l", "nodes=8", "-v", "BATCHD_RUNTIME=1200", str(script))
            self.run(
                "qsub", "-l", "select=16,walltime=02:00:00", "-N", "post", "-p", "10",
                "-W", f"depend=afterok:{first}",
            stdin="echo post\n")  # fmt: skip
            held = self.run(
                "qsub", "-h", "-l", "nodes=2,walltime=00:10:00", "-N", "held", stdin="true\n"
            )  # fmt: skip
            self.say("the queue, as PBS shows it")
            self.run("qstat")
            self.run("qstat", "-a", "-T")
            self.run("qstat", "-x", "-f", first)  # -x: shown even if it has ended by now
            self.run("qstat", "-Q")
            self.say("the same jobs, as Slurm shows them")
            self.run("sbatch", "-N", "4", "-t", "30", "-J", "slurmjob", "--wrap", "true")
            self.run("squeue", "-u", os.environ.get("USER") or _whoami())
            self.run("sinfo")
            self.say("nodes")
            self.run("qnodes", "node001", "node002")
            self.say("the scheduler, switched live to self-tuning dynP")
            self.run("qmgr", "-c", "list sched")
            self.run("qmgr", "-c", "set server scheduler_policy = dynp")
            self.run("qmgr", "-c", "set sched dynp_decider = advanced")
            self.run("qmgr", "-c", "list sched")
            self.run("qrls", held)
            time.sleep(3)
            self.say("half an emulated hour later")
            self.run("qstat", "-x", "-u", os.environ.get("USER") or _whoami())
            self.run("qmgr", "-c", "list server")
        finally:
            self.say("stop the daemon cleanly (SIGTERM)")
            code = self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
        return code


def _whoami() -> str:
    import pwd

    return pwd.getpwuid(os.geteuid()).pw_name


def run_demo(config: str, speed: float, jobs: int, keep_lines: int = 14) -> int:
    return Demo(config, speed, jobs, keep_lines).main()
