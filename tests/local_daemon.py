"""A daemon whose machine runs job scripts for real, and the PBS commands against it.

The daemon's directory is reachable by every user (0755) so that other users' commands
reach its socket; its state file and spool are private as always. Jobs of the user
running the tests run as that user (root's too: the site lists root in acl_roots).
After the test, whatever jobs were left running are killed through their supervisors.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from daemon_proc import Daemon
from pbs_commands import MODULES

# Root's jobs in the tests run under /bin/sh: a test host's root login bash may run pyenv,
# whose rehash lock, left behind by a job killed during it, stalls every later login
# shell of root's for a minute. The login shell itself is tested with the tests' own users.
ROOT_SHELL = "/bin/sh"

SITE = """
[[machine]]
name = "{name}"
nodes = 1
cores_per_node = {cores}
mem_per_node = "8gb"
shared = true
executor = "local"

[server]
policy = "fcfs-easy"
kill_delay = {kill_delay}
acl_roots = {roots}

[execution]
tmpdir = "/tmp"

[[queue]]
name = "workq"
default_walltime = "00:10:00"
"""


def write_site(folder: Path, *, cores: int = 4, kill_delay: int = 2, name: str = "ws",
               roots: tuple[str, ...] = ("root",), extra: str = "") -> Path:  # fmt: skip
    path = folder / "site.toml"
    text = SITE.format(name=name, cores=cores, kill_delay=kill_delay, roots=json.dumps(list(roots)))
    path.write_text(text + extra)
    return path


def daemon_dir() -> Path:
    """A directory every user may reach (0755), removed when the test run ends."""
    path = Path(tempfile.mkdtemp(prefix="batchd-local-", dir="/tmp"))
    path.chmod(0o755)
    atexit.register(shutil.rmtree, path, True)
    return path


def supervisors(spool: Path) -> list[int]:
    """The supervisors (forks of the launcher) of the jobs of this spool."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"batchd.execution.launcher" in cmdline and str(spool).encode() in cmdline:
            found.append(int(entry.name))
    return found


def kill_jobs(spool: Path) -> None:
    """SIGTERM every supervisor of the spool (each stops its job), then SIGKILL what is left."""
    for pid in supervisors(spool):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    while supervisors(spool) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in supervisors(spool):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


class LocalDaemon(Daemon):
    def __init__(self, folder: Path, site: Path, *args: str) -> None:
        super().__init__(folder, *args, config=str(site))
        self.spool = self.state.with_suffix(".spool")
        self.work = folder / "work"
        self.work.mkdir(exist_ok=True)
        self.work.chmod(0o1777)

    def pbs(self, *argv: str, stdin: str | None = None, cwd: Path | None = None,
            env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:  # fmt: skip
        """A PBS command of the user running the tests, run from the work directory."""
        full = dict(os.environ, BATCHD_SOCKET=str(self.socket))
        full.pop("BATCHD_URL", None)
        full.update(env or {})
        module = f"batchclient.{MODULES.get(argv[0], argv[0])}"
        return subprocess.run(
            [sys.executable, "-m", module, *argv[1:]], input=stdin, capture_output=True,
            text=True, env=full, cwd=cwd or self.work, timeout=timeout,
        )  # fmt: skip

    def qsub(self, script: str, *options: str, **kw: Any) -> str:
        """Submit ``script``; root's jobs run under /bin/sh unless told otherwise (ROOT_SHELL)."""
        if os.geteuid() == 0 and "-S" not in options:
            options = ("-S", ROOT_SHELL, *options)
        done = self.pbs("qsub", *options, stdin=script, **kw)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def job(self, job_id: str) -> dict[str, Any]:
        """``qstat -x -f -F json ID``: the job's attributes as PBS Pro's JSON has them."""
        done = self.pbs("qstat", "-x", "-f", "-F", "json", job_id)
        assert done.returncode == 0, done.stderr
        jobs: dict[str, Any] = json.loads(done.stdout)["Jobs"]
        return next(iter(jobs.values()))

    def wait(self, job_id: str, states: str = "F", timeout: float = 60) -> dict[str, Any]:
        return wait_until(lambda: self.job(job_id), lambda j: j["job_state"] in states, timeout)

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        kill_jobs(self.spool)


def wait_until(get: Callable[[], Any], done: Callable[[Any], bool], timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = get()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"still {value!r} after {timeout} s")
        time.sleep(0.1)


@pytest.fixture
def local_daemon() -> Iterator[LocalDaemon]:
    """A daemon on this host's real-time clock: one node of 4 cores, kill delay 2 s."""
    folder = daemon_dir()
    try:
        with LocalDaemon(folder, write_site(folder)) as d:
            yield d
    finally:
        shutil.rmtree(folder, ignore_errors=True)
