"""Other users, for the tests of jobs that run for real: made when the tests run as root.

A root daemon runs each user's jobs as that user. The tests make two accounts of their
own (``batchd-alice``, ``batchd-bob``, homes under a directory of their own) with
``useradd``, and remove them at the end; ``nobody`` is the host's. Commands run as
another user through ``runuser`` with a Python that user may run: the venv's may live
in root's home (pyenv), so the PBS commands (standard library only) run under the
host's ``/usr/bin/python3`` with the client on PYTHONPATH when needed.
"""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from paths import ROOT

CLIENT = ROOT / "client"
NAMES = ("batchd-alice", "batchd-bob")


@dataclass(frozen=True)
class User:
    name: str
    uid: int
    gid: int
    home: str


def as_root() -> bool:
    return os.geteuid() == 0


def need_root() -> None:
    if not as_root():
        pytest.skip("runs jobs as other users: needs a root test run (CI runs as root)")
    if shutil.which("runuser") is None or shutil.which("useradd") is None:
        pytest.skip("needs runuser and useradd (util-linux, passwd)")


def user(name: str) -> User:
    entry = pwd.getpwnam(name)
    return User(entry.pw_name, entry.pw_uid, entry.pw_gid, entry.pw_dir)


def make_users(base: Path) -> list[User]:
    """The tests' accounts, each with a home of its own under ``base`` (made again if a
    crashed run left them)."""
    made = []
    for name in NAMES:
        home = base / name
        try:
            pwd.getpwnam(name)
        except KeyError:
            pass
        else:  # left by a run that was killed: its jobs' processes too, which userdel refuses
            subprocess.run(["pkill", "-KILL", "-U", name], capture_output=True, check=False)
            subprocess.run(["userdel", "-r", name], capture_output=True, check=False)
        subprocess.run(
            ["useradd", "--create-home", "--home-dir", str(home), "--shell", "/bin/bash",
             "--comment", "batchd test user", name],
            check=True, capture_output=True,
        )  # fmt: skip
        made.append(user(name))
    return made


def remove_users() -> None:
    for name in NAMES:
        subprocess.run(["userdel", "-r", name], capture_output=True, check=False)


# Test processes that run at once (pytest-xdist's workers) share the accounts: the first
# makes them, the last removes them, under a lock; a process that died counts no more.
SHARE_LOCK = Path("/tmp/batchd-test-accounts.lock")
SHARE_FILE = Path("/tmp/batchd-test-accounts.json")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


@contextmanager
def _shared() -> Iterator[dict[str, Any]]:
    """The processes that use the accounts and their homes' folder, under the lock."""
    with open(SHARE_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            state: dict[str, Any] = {"pids": [], "base": ""}
            if SHARE_FILE.exists():
                state = json.loads(SHARE_FILE.read_text() or "{}") or state
            state["pids"] = [p for p in state.get("pids", []) if _alive(p)]
            yield state
            if state["pids"]:
                SHARE_FILE.write_text(json.dumps(state))
            else:
                SHARE_FILE.unlink(missing_ok=True)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def test_users() -> Iterator[list[User]]:
    need_root()
    with _shared() as state:
        if not state["pids"] or not all(_exists(name) for name in NAMES):
            base = Path(tempfile.mkdtemp(prefix="batchd-homes-", dir="/tmp"))
            base.chmod(0o755)
            make_users(base)
            state["base"] = str(base)
        state["pids"].append(os.getpid())
    try:
        yield [user(name) for name in NAMES]
    finally:
        with _shared() as state:
            if os.getpid() in state["pids"]:
                state["pids"].remove(os.getpid())
            if not state["pids"]:
                remove_users()
                shutil.rmtree(state.get("base") or "/nonexistent", ignore_errors=True)


def open_dir(prefix: str) -> Path:
    """A directory every user may reach and write in (sticky, as /tmp); removed when the
    test run ends."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    path.chmod(0o1777)
    atexit.register(shutil.rmtree, path, True)
    return path


def their_dir(owner: User, prefix: str) -> Path:
    """A directory of ``owner``'s own, where its jobs' output goes; removed when the test
    run ends."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    os.chown(path, owner.uid, owner.gid)
    path.chmod(0o755)
    atexit.register(shutil.rmtree, path, True)
    return path


def client_python() -> str:
    """A Python other users may run, for the PBS commands."""
    for candidate in ("/usr/bin/python3", sys.executable):
        if os.access(candidate, os.X_OK):
            probe = subprocess.run(
                ["runuser", "-u", "nobody", "--", candidate, "-c", "pass"], capture_output=True
            )
            if probe.returncode == 0:
                return candidate
    pytest.skip("no Python that other users may run (for the PBS commands)")


def command(who: str, name: str, *args: str, socket: Path, cwd: Path | None = None,
            stdin: str | None = None, env: dict[str, str] | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """Run PBS command ``name`` (qsub, qstat, ...) as user ``who``."""
    module = {"pbs_rsub": "rsub", "pbs_rstat": "rstat", "pbs_rdel": "rdel"}.get(name, name)
    extra = [f"{k}={v}" for k, v in (env or {}).items()]
    argv = [
        "runuser", "-u", who, "--", "env", f"BATCHD_SOCKET={socket}", f"PYTHONPATH={CLIENT}",
        *extra, client_python(), "-c",
        f"import sys; from batchclient.{module} import main; sys.exit(main())", *args,
    ]  # fmt: skip
    return subprocess.run(
        argv, input=stdin, capture_output=True, text=True, cwd=cwd, timeout=timeout
    )
