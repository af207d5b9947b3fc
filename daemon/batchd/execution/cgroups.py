"""cgroup v2: one cgroup per job under a parent of the daemon's, where the host allows.

A job's cgroup holds every process it starts, whatever they do with their process
group or session; ``cgroup.kill`` ends them all at once; with the memory controller
``memory.max`` stops a job over its ``mem`` (the kernel's OOM killer acts inside the
cgroup only) and ``memory.peak`` is what it used. The parent is made by the daemon
(``prepare``) in the cgroup2 hierarchy, ``batchd-SERVER`` below its root; a daemon
that cannot make it (not root, no cgroup2, a read-only mount) runs jobs without
cgroups, and their supervisors find their processes as their descendants instead.
"""

from __future__ import annotations

import contextlib
import errno
import os
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CgroupParent:
    path: str  # the parent's directory in the cgroup2 file system
    memory: bool  # whether its children have the memory controller
    kill: bool  # whether cgroup.kill is there (Linux 5.14)


def cgroup2_mount() -> str | None:
    """Where the cgroup2 file system is mounted (unified or hybrid hierarchy)."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                left, _, right = line.partition(" - ")
                if right.split(" ", 1)[0] == "cgroup2":
                    return left.split()[4]
    except OSError:
        return None
    return None


def _read(path: str) -> str:
    with open(path, encoding="ascii", errors="replace") as fh:
        return fh.read()


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def prepare(server: str, configured: str | None = None) -> tuple[CgroupParent | None, str]:
    """The parent of the jobs' cgroups, made when missing; (None, why not) when this host or
    this daemon cannot have one. ``configured``: a directory in the cgroup2 file system."""
    mount = cgroup2_mount()
    if mount is None:
        return None, "no cgroup2 file system is mounted"
    path = configured or os.path.join(mount, f"batchd-{server}")
    if not os.path.realpath(path).startswith(os.path.realpath(mount) + os.sep):
        return None, f"{path} is not in the cgroup2 file system at {mount}"
    try:
        os.mkdir(path, 0o755)
    except FileExistsError:
        pass
    except OSError as exc:
        return None, f"cannot make {path}: {exc.strerror}"
    probe = os.path.join(path, f"probe.{os.getpid()}")
    try:
        os.mkdir(probe)
        os.rmdir(probe)
    except OSError as exc:
        return None, f"cannot make cgroups in {path}: {exc.strerror}"
    memory = False
    try:
        available = _read(os.path.join(path, "cgroup.controllers")).split()
        if "memory" in available:
            if "memory" not in _read(os.path.join(path, "cgroup.subtree_control")).split():
                _write(os.path.join(path, "cgroup.subtree_control"), "+memory")
            memory = True
    except OSError:
        memory = False
    kill = os.path.exists(os.path.join(path, "cgroup.kill"))
    return CgroupParent(path, memory, kill), ""


# -- one job's cgroup (the supervisor's side) --------------------------------------------


def create(path: str, mem: int | None) -> bool:
    """Make a job's cgroup and, where it has the memory controller, set its limit (no swap
    beyond it); whether the limit is set."""
    os.mkdir(path, 0o755)
    limit = os.path.join(path, "memory.max")
    if mem is None or not os.path.exists(limit):
        return False
    _write(limit, str(mem))
    if os.path.exists(os.path.join(path, "memory.swap.max")):
        _write(os.path.join(path, "memory.swap.max"), "0")
    return True


def join(path: str) -> None:
    """Move the calling process into the cgroup."""
    _write(os.path.join(path, "cgroup.procs"), "0")


def pids(path: str) -> list[int]:
    try:
        return [int(p) for p in _read(os.path.join(path, "cgroup.procs")).split()]
    except OSError:
        return []


def kill_all(path: str) -> bool:
    """SIGKILL every process in the cgroup; False if cgroup.kill is not there."""
    try:
        _write(os.path.join(path, "cgroup.kill"), "1")
    except FileNotFoundError:
        return False
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return False
        raise
    return True


def memory_peak(path: str) -> int | None:
    try:
        return int(_read(os.path.join(path, "memory.peak")).strip())
    except (OSError, ValueError):
        return None


def oom_killed(path: str) -> bool:
    """Whether the kernel killed a process of the cgroup over its memory.max."""
    try:
        for line in _read(os.path.join(path, "memory.events")).splitlines():
            name, _, value = line.partition(" ")
            if name == "oom_kill" and int(value) > 0:
                return True
    except (OSError, ValueError):
        return False
    return False


def remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.rmdir(path)
