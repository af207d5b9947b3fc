"""The Slurm commands squeue, scancel and scontrol run as a user runs them, each a
process of its own, against a test's daemon (its socket in BATCHD_SOCKET)."""

from __future__ import annotations

import os
import subprocess
import sys

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
