"""A job's processes without a cgroup: the supervisor's descendants, read from /proc.

The supervisor is a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``), so every
process the job starts stays its descendant, even one that left the job's process
group or session: an orphan is handed to the supervisor, not to init.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal

PR_SET_CHILD_SUBREAPER = 36
_PAGE = os.sysconf("SC_PAGE_SIZE")


_LIBC = ctypes.CDLL(None, use_errno=True)  # once, in the launcher: its forks share it


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux); False if refused."""
    try:
        return bool(_LIBC.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    # The name (field 2) is in parentheses and may hold anything: split after the last ')'.
    rest = data[data.rfind(b")") + 2 :].split()
    return int(rest[1]) if len(rest) > 1 else None


def descendants(root: int) -> list[int]:
    """Every live process below ``root``."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        parent = _parent(pid)
        if parent is not None:
            children.setdefault(parent, []).append(pid)
    found: list[int] = []
    todo = list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def memory_of(pids: list[int]) -> tuple[int, int]:
    """(resident, virtual) bytes of these processes together."""
    rss = vm = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm", "rb") as fh:
                fields = fh.read().split()
        except OSError:
            continue
        if len(fields) >= 2:
            vm += int(fields[0]) * _PAGE
            rss += int(fields[1]) * _PAGE
    return rss, vm


def signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def kill_descendants(root: int) -> None:
    """SIGKILL everything below ``root`` until nothing is left (a process forking while it
    is killed makes another round; a killed one cannot fork any more)."""
    for _ in range(100):
        found = descendants(root)
        if not found:
            return
        signal_all(found, signal.SIGKILL)
