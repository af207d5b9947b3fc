"""The Slurm commands squeue, scancel and scontrol run as a user runs them, each a
process of its own, against a test's daemon (its socket in BATCHD_SOCKET)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from daemon_proc import ROOT, Daemon


def run(
    d: Daemon, *argv: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environ = dict(os.environ, BATCHD_SOCKET=str(d.socket), **(env or {}))
    environ.pop("BATCHD_URL", None)
    return subprocess.run(
        [sys.executable, "-m", f"batchclient.slurm.{argv[0]}", *argv[1:]], capture_output=True,
        text=True, env=environ, cwd=ROOT, timeout=60,
    )  # fmt: skip


def ok(d: Daemon, *argv: str, env: dict[str, str] | None = None) -> str:
    """The output of a command that must succeed (and say nothing on stderr)."""
    out = run(d, *argv, env=env)
    assert out.returncode == 0 and out.stderr == "", (argv, out.stderr)
    return out.stdout


# Four nodes, two queues: the site the squeue, scancel and scontrol tests run on.
TINY_SITE = """
[[machine]]
name = "tiny"
nodes = 4

[server]
policy = "fcfs-easy"

[[queue]]
name = "workq"
default_walltime = "01:00:00"

[[queue]]
name = "short"
max_walltime = "00:30:00"
"""


def submit(d: Daemon, **body: object) -> dict[str, Any]:
    """POST /jobs, which must take the job: its JobOut."""
    status, out = d.call("POST", "/jobs", body)
    assert status == 201, out
    job: dict[str, Any] = out
    return job
