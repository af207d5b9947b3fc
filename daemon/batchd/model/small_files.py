"""Reading a small configuration file (a site file, a holidays file) safely.

Only a regular file is read, and at most ``cap`` bytes of it: a path naming a
device (/dev/zero), a FIFO or a huge file is refused instead of read forever.
Symbolic links are followed (a site file may be one). Whether an error message
may quote the file's content is decided from its owner and mode: the daemon may
run as root, and its messages go to logs that others read.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

MAX_CONFIG_BYTES = 1 << 20  # site files and holidays files are a few kilobytes
# What a message about a file it may not quote says instead.
NOT_SHOWN = " (the file is not readable by others: its content is not shown)"


class FileRefused(ValueError):
    """A path that is not a small regular file: the message says what it is ("is a FIFO")."""


@dataclass(frozen=True, slots=True)
class SmallFile:
    data: bytes
    # Whether messages may quote its content: anyone may read it (o+r), or it belongs to
    # the user running this who is not root (root reads every file: its files stay quiet).
    quotable: bool


def _kind(mode: int) -> str | None:
    """What a file that is not a regular file is, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory"
    if stat.S_ISFIFO(mode):
        return "is a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device"
    if stat.S_ISSOCK(mode):
        return "is a socket"
    return "is not a regular file"


def _too_large(cap: int) -> str:
    size = f"{cap >> 20} MiB" if cap % (1 << 20) == 0 else f"{cap:,} bytes"
    return f"is larger than {size}"


def _check(st: os.stat_result, cap: int) -> None:
    kind = _kind(st.st_mode)
    if kind is not None:
        raise FileRefused(kind)
    if st.st_size > cap:
        raise FileRefused(_too_large(cap))


def may_quote(st: os.stat_result) -> bool:
    """Whether a message may show the content of the file ``st`` describes."""
    if st.st_mode & stat.S_IROTH:
        return True
    uid = os.getuid()
    return uid != 0 and st.st_uid == uid


def read_small_file(path: str | Path, cap: int = MAX_CONFIG_BYTES) -> SmallFile:
    """The bytes of the regular file ``path`` (at most ``cap``).

    FileRefused: not a regular file, or larger than ``cap``. OSError: it cannot be
    opened (FileNotFoundError, PermissionError, ...).
    """
    _check(os.stat(path), cap)  # refused before opening: opening a device may act on it
    # O_NONBLOCK: a FIFO put in its place since is opened without waiting for a writer.
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        _check(st, cap)
        data = fh.read(cap + 1)  # a file that grew since its fstat stops here
    if len(data) > cap:
        raise FileRefused(_too_large(cap))
    return SmallFile(data, may_quote(st))
