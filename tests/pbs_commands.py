"""The PBS commands run as a user runs them, each a process of its own, against a
test's daemon (its socket in BATCHD_SOCKET)."""

from __future__ import annotations

import os
import subprocess
import sys

from daemon_proc import ROOT, Daemon

# Command name -> batchclient module (some console scripts are named apart).
MODULES = {
    "qsub": "qsub", "qstat": "qstat", "qselect": "qselect", "qrerun": "qrerun",
    "qmove": "qmove", "qsig": "qsig", "tracejob": "tracejob", "qmgr": "qmgr",
    "pbs_rsub": "rsub", "pbs_rstat": "rstat", "pbs_rdel": "rdel", "qdel": "qdel",
    "qhold": "qhold", "pbsnodes": "pbsnodes", "qnodes": "qnodes",
}  # fmt: skip


def run(d: Daemon, *argv: str, stdin: str = "true\n") -> subprocess.CompletedProcess[str]:
    """``argv`` run against ``d``; ``stdin``: a job script for qsub."""
    env = dict(os.environ, BATCHD_SOCKET=str(d.socket))
    env.pop("BATCHD_URL", None)
    module = f"batchclient.{MODULES[argv[0]]}"
    return subprocess.run(
        [sys.executable, "-m", module, *argv[1:]], input=stdin, capture_output=True,
        text=True, env=env, cwd=ROOT, timeout=60,
    )  # fmt: skip


def ok(d: Daemon, *argv: str, stdin: str = "true\n") -> str:
    """The output of a command that must succeed."""
    out = run(d, *argv, stdin=stdin)
    assert out.returncode == 0, (argv, out.stderr)
    return out.stdout
