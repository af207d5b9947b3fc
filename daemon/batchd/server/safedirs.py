"""Reaching a directory the daemon keeps its files in without being led elsewhere.

A directory is opened one component at a time from ``/`` (``openat`` with
``O_NOFOLLOW``), so what is checked is what is then used: the caller keeps the open
descriptor and works through it. Every directory on the way must be one nobody else
can change under the daemon: root's or the daemon user's, and sticky (as ``/tmp``)
if its group or others may write to it, since in a sticky directory only an entry's
owner may rename or remove it. A symbolic link on the way is followed only when
root or the daemon's user made it; in the last components, the ones the daemon
makes or checks itself, no symbolic link is followed at all.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable

from batchd.server.auth import user_name

OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
MAX_LINKS = 40  # as the kernel's own limit on links followed in one lookup

# Called with each directory reached (its path, its fstat, and its place among the
# last components: 0 for the directory asked for, 1 for the one above..., None
# above those); raises UnsafePath to refuse it.
Check = Callable[[str, os.stat_result, int | None], None]


class UnsafePath(ValueError):
    """A directory on the way the daemon will not use; ``path`` names it."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path} {problem}")
        self.path = path
        self.problem = problem


def trusted(uid: int) -> bool:
    return uid in (0, os.geteuid())


def check_on_the_way(path: str, info: os.stat_result) -> None:
    """A directory above the daemon's own: nobody else may replace what is in it."""
    if not trusted(info.st_uid):
        raise UnsafePath(path, f"is owned by {user_name(info.st_uid)}, who could replace it")
    if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
        raise UnsafePath(
            path,
            "may be written by its group or others and is not sticky "
            f"(mode {stat.S_IMODE(info.st_mode):04o})",
        )


def same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def open_dir(path: str, check: Check, *, own: int, make: int | None = None) -> int:
    """An ``O_DIRECTORY|O_NOFOLLOW`` descriptor of directory ``path`` (absolute), every
    directory on the way passed to ``check``. Its last ``own`` components must be real
    directories, never symbolic links. ``make``: the mode to make the directory with when
    it is missing (its missing parents are made 0700); None: a missing one is an error.
    Raises :class:`UnsafePath`, or the ``OSError`` of a directory that cannot be opened."""
    names = [n for n in path.split("/") if n]
    first_own = len(names) - own
    pending = [(n, len(names) - 1 - i if i >= first_own else None) for i, n in enumerate(names)]
    pending.reverse()
    root = os.open("/", OPEN_DIR)
    stack = [(root, "/")]
    try:
        check("/", os.fstat(root), len(names) if first_own < 0 else None)
        links = 0
        while pending:
            name, place = pending.pop()
            if name in ("", "."):
                continue
            if name == "..":
                if len(stack) > 1:
                    os.close(stack.pop()[0])
                continue
            fd, shown = stack[-1]
            here = os.path.join(shown, name)
            mode = (make if place == 0 else 0o700) if make is not None else None
            info, made = _entry(fd, name, mode)
            if stat.S_ISLNK(info.st_mode):
                target = os.readlink(name, dir_fd=fd)
                if place is not None:
                    raise UnsafePath(here, f"is a symbolic link (to {target})")
                if not trusted(info.st_uid):
                    raise UnsafePath(
                        here, f"is a symbolic link made by {user_name(info.st_uid)} (to {target})"
                    )
                links += 1
                if links > MAX_LINKS:
                    raise UnsafePath(here, "leads through too many symbolic links")
                if target.startswith("/"):
                    while len(stack) > 1:
                        os.close(stack.pop()[0])
                pending.extend((n, None) for n in reversed(target.split("/")))
                continue
            if not stat.S_ISDIR(info.st_mode):
                raise UnsafePath(here, "is not a directory")
            sub = os.open(name, OPEN_DIR, dir_fd=fd)
            stack.append((sub, here))
            got = os.fstat(sub)
            if not same_file(got, info):
                raise UnsafePath(here, "was replaced while it was being checked")
            if made and mode is not None and got.st_uid == os.geteuid():
                os.fchmod(sub, mode)  # exactly this mode, whatever the umask
                got = os.fstat(sub)
            check(here, got, place)
        fd = stack.pop()[0]
    except BaseException:
        for fd, _ in stack:
            os.close(fd)
        raise
    for other, _ in stack:
        os.close(other)
    return fd


def _entry(fd: int, name: str, make: int | None) -> tuple[os.stat_result, bool]:
    """The lstat of ``name`` in directory ``fd``, made first (mode ``make``) when it is
    missing and ``make`` is given; and whether it was made here."""
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False), False
    except FileNotFoundError:
        if make is None:
            raise
    made = False
    with contextlib.suppress(FileExistsError):  # made meanwhile: checked as found
        os.mkdir(name, make, dir_fd=fd)
        made = True
    return os.stat(name, dir_fd=fd, follow_symlinks=False), made
