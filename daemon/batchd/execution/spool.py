"""The spool: where each supervisor keeps what the daemon must find again after a restart.

One private directory (0700, the daemon's user's), with a few files per running job,
named by the job's key::

    SPOOL/KEY.lock      the supervisor's pid; it holds an exclusive lock on the file for
                        as long as it lives
    SPOOL/KEY.started   the job's process (its pid, which is also its session and process
                        group), its start time and cgroup, once it runs
    SPOOL/KEY.end       the EndReport, written once everything of the job has ended
    SPOOL/KEY.control   a FIFO: the daemon's requests (stop, signal)

Once its end is written the supervisor removes the other three: the daemon finds an
``end`` alone, and removes it once it has saved the end. No directory per job: making
and removing one cost the daemon a millisecond per job.

Nothing here is ever opened by or for a job's owner: the job's files (its output,
TMPDIR, node file) are made by its own process, as its owner. An end is written under a
temporary name and renamed, so that a reader sees all of it or none.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat

LOCK, STARTED, END, CONTROL = "lock", "started", "end", "control"
KINDS = (LOCK, STARTED, END, CONTROL)
_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def name(key: str, kind: str) -> str:
    """A job's file in the spool: ``KEY.KIND`` (keys are job numbers, or test names)."""
    if not _KEY.match(key):
        raise ValueError(f"{key!r} is not a spool key")
    return f"{key}.{kind}"


class SpoolError(OSError):
    """A spool directory that cannot be used safely, named with the reason."""


def _check_private(path: str, info: os.stat_result) -> None:
    if not stat.S_ISDIR(info.st_mode):
        raise SpoolError(f"spool {path} is not a directory (a symlink is refused)")
    if info.st_uid != os.geteuid():
        raise SpoolError(
            f"spool {path} is owned by uid {info.st_uid}, not by uid {os.geteuid()} who "
            "runs batchd: remove it or give another [execution] spool"
        )
    if stat.S_IMODE(info.st_mode) & 0o077:
        raise SpoolError(
            f"spool {path} may be used by others (mode {stat.S_IMODE(info.st_mode):04o}): "
            "chmod 700 it"
        )


def open_spool(path: str) -> int:
    """The spool directory, made 0700 when missing, as a directory descriptor; refused
    when it is a symlink, someone else's, or open to others."""
    parent = os.path.dirname(os.path.abspath(path)) or "/"
    os.makedirs(parent, 0o700, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise SpoolError(f"spool {path} is not a directory (a symlink is refused)") from None
        raise
    try:
        _check_private(path, os.fstat(fd))
    except SpoolError:
        os.close(fd)
        raise
    return fd


def write_record(spool_fd: int, key: str, kind: str, text: str, *, whole: bool = True) -> None:
    """Write a record whole or not at all: under a temporary name, then renamed (``whole``
    False: a plain write, for what a reader can do without when it is cut short).

    Not synced: a daemon that dies finds the page cache as the supervisor left it; only a
    crash of the host loses a record, and the host's jobs with it (the daemon then finds
    the job lost, as when a supervisor is killed).
    """
    final = name(key, kind)
    target = f".{final}.tmp" if whole else final
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600, dir_fd=spool_fd)  # fmt: skip
    try:
        data = text.encode()
        while data:
            data = data[os.write(fd, data) :]
    finally:
        os.close(fd)
    if whole:
        os.rename(target, final, src_dir_fd=spool_fd, dst_dir_fd=spool_fd)


def read_record(spool_fd: int, key: str, kind: str) -> str | None:
    """A record's text, or None when it was never written."""
    try:
        fd = os.open(name(key, kind), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=spool_fd)
    except FileNotFoundError:
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks).decode()


def lock_held(spool_fd: int, key: str) -> bool:
    """Whether a supervisor holds the job's lock (it lives)."""
    try:
        fd = os.open(name(key, LOCK), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=spool_fd)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # also lets go of the shared lock, if it was taken
    return False


def take_lock(spool_fd: int, key: str) -> int:
    """The supervisor's lock, held for as long as the returned descriptor stays open; its
    pid is written in the file once it holds it."""
    fd = os.open(name(key, LOCK), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                 dir_fd=spool_fd)  # fmt: skip
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def lock_pid(spool_fd: int, key: str) -> int | None:
    """The pid of the supervisor that held (or holds) the job's lock; None if none did."""
    text = (read_record(spool_fd, key, LOCK) or "").strip()
    return int(text) if text.isdigit() else None


def make_control(spool_fd: int, key: str) -> None:
    with contextlib.suppress(FileExistsError):
        os.mkfifo(name(key, CONTROL), 0o600, dir_fd=spool_fd)


def remove(spool_fd: int, key: str, kinds: tuple[str, ...] = KINDS) -> None:
    """Remove a job's files (those of ``kinds``) and a temporary end left half-written."""
    for kind in kinds:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name(key, kind), dir_fd=spool_fd)
    if END in kinds:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f".{name(key, END)}.tmp", dir_fd=spool_fd)


def job_keys(spool_fd: int) -> list[str]:
    """The jobs that have a file in the spool."""
    keys = {entry.rpartition(".")[0] for entry in os.listdir(spool_fd) if not entry.startswith(".")}
    return sorted(keys)
