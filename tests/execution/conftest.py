"""An executor of this host's, and the account its test jobs run as: one of the tests'
own users when the tests run as root (the supervisor then changes identity as a root
daemon's does), else the user running the tests (as a user daemon runs its own)."""

from __future__ import annotations

import asyncio
import os
import pwd
import secrets
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from batchd.execution import cgroups
from batchd.execution.local import Ended, LocalExecutor
from batchd.execution.spec import LaunchSpec
from batchd.server.launchspec import shell_argv
from users import User, as_root, user


@pytest.fixture
def owner(request: pytest.FixtureRequest) -> User:
    if as_root():
        users: list[User] = request.getfixturevalue("test_users")
        return users[0]
    return user(pwd.getpwuid(os.getuid()).pw_name)


@pytest.fixture
def out_dir(owner: User) -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="batchd-out-", dir="/tmp"))
    os.chown(path, owner.uid, owner.gid)
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


class Jobs:
    """Launch jobs through an executor and wait for their ends."""

    def __init__(self, executor: LocalExecutor, owner: User, out: Path, woke: asyncio.Event):
        self.executor = executor
        self.owner = owner
        self.out = out
        self.woke = woke
        self.ended: dict[str, Ended] = {}
        self.n = 0

    def spec(self, script: str, **changes: Any) -> LaunchSpec:
        self.n += 1
        key = str(self.n)
        entry = pwd.getpwnam(self.owner.name)
        tmp = f"/tmp/pbs.{key}.test.{secrets.token_hex(4)}"
        spec = LaunchSpec(
            job_id=f"{key}.test", key=key, user=entry.pw_name, uid=entry.pw_uid,
            gid=entry.pw_gid, groups=os.getgrouplist(entry.pw_name, entry.pw_gid),
            home=entry.pw_dir, shell="/bin/sh", argv=shell_argv("/bin/sh"),
            env={"PATH": "/usr/bin:/bin", "TMPDIR": tmp, "PBS_NODEFILE": f"{tmp}.nodes",
                 "HOME": entry.pw_dir, "PBS_JOBID": f"{key}.test"},
            script=script, stdout=str(self.out / f"job.o{key}"),
            stderr=str(self.out / f"job.e{key}"), cpus=[], walltime=60, kill_delay=1, mem=None,
            nodes=["here"], cgroup=self.executor.job_cgroup(key),
        )  # fmt: skip
        for name, value in changes.items():
            setattr(spec, name, value)
        return spec

    def launch(self, script: str, **changes: Any) -> LaunchSpec:
        spec = self.spec(script, **changes)
        self.executor.launch(spec)
        return spec

    async def end_of(self, spec: LaunchSpec, timeout: float = 30) -> Ended:
        async with asyncio.timeout(timeout):
            while spec.key not in self.ended:
                await self.woke.wait()
                self.woke.clear()
                for end in self.executor.take_ends():
                    self.ended[end.key] = end
        return self.ended[spec.key]

    def output(self, spec: LaunchSpec, letter: str = "o") -> str:
        return (self.out / f"job.{letter}{spec.key}").read_text()


@pytest.fixture
async def jobs(owner: User, out_dir: Path, tmp_path: Path) -> AsyncIterator[Jobs]:
    parent, _ = cgroups.prepare(f"test-{os.getpid()}") if as_root() else (None, "")
    executor = LocalExecutor(str(tmp_path / "spool"), parent)
    woke = asyncio.Event()
    executor.start(asyncio.get_running_loop(), woke.set)
    runner = Jobs(executor, owner, out_dir, woke)
    try:
        yield runner
    finally:
        runner.executor.close()
        if parent is not None:
            for child in Path(parent.path).iterdir():
                if child.is_dir():
                    cgroups.kill_all(str(child))
                    cgroups.remove(str(child))
            cgroups.remove(parent.path)
