"""The state file's directory and files: the daemon user's own, none reached through a link.

The state holds every job script. Its directory must be the daemon user's and
writable by nobody else: in a shared directory (``/tmp``) another user could make
``state.db`` or its ``-wal`` first and read what the daemon writes there, or put a
symbolic link by those names for the daemon to follow. The directory is reached
through a descriptor (:mod:`batchd.server.safedirs`), and each file is checked and
narrowed to 0600 through one opened without following a link; nothing is changed by
path.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from batchd.server.auth import user_name
from batchd.server.safedirs import UnsafePath, check_on_the_way, open_dir, same_file

SIDE_FILES = ("-wal", "-shm", "-journal")  # SQLite's, beside the database
OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


class StateFileRefused(ValueError):
    """A state file or directory the daemon will not use; the message says why."""


def claim_state_files(path: Path) -> None:
    """Check the state's directory (made 0700 with its missing parents when missing) and
    the files in it, make ``path`` if missing, all of them 0600."""
    folder = Path(os.path.abspath(path)).parent
    me = user_name(os.geteuid())

    def check(shown: str, info: os.stat_result, place: int | None) -> None:
        if place != 0:
            check_on_the_way(shown, info)
            return
        if info.st_uid != os.geteuid():
            raise StateFileRefused(
                f"state directory {folder} is owned by {user_name(info.st_uid)}, not by {me} "
                f"who runs batchd: give --state a file in a directory of {me}'s own"
            )
        if info.st_mode & 0o022:
            raise StateFileRefused(
                f"state directory {folder} is writable by its group or others (mode "
                f"{stat.S_IMODE(info.st_mode):04o}): another user could make the state files "
                f"there first; give --state a file in a directory of {me}'s own"
            )

    try:
        fd = open_dir(str(folder), check, own=1, make=0o700)
    except UnsafePath as exc:
        raise StateFileRefused(f"state directory {folder}: {exc}: give --state elsewhere") from None
    try:
        files = [folder / (Path(path).name + suffix) for suffix in ("", *SIDE_FILES)]
        found = [_found(fd, file) for file in files]  # all checked before any is made
        for file, info in zip(files, found, strict=True):
            _make_private(fd, file, info, create=file == files[0])
    finally:
        os.close(fd)


def _refused(file: Path, info: os.stat_result) -> str | None:
    """What is wrong with a state file found, if anything."""
    if not stat.S_ISREG(info.st_mode):
        return f"state file {file} is not a regular file: remove it or give --state elsewhere"
    if info.st_uid != os.geteuid():
        return (
            f"state file {file} is owned by {user_name(info.st_uid)}, not by "
            f"{user_name(os.geteuid())} who runs batchd, and could be read by them: "
            "remove it, or give --state a file of your own"
        )
    return None


def _found(folder_fd: int, file: Path) -> os.stat_result | None:
    """The lstat of a state file (in the directory open as ``folder_fd``), None if it is
    missing; refused if it is a link, not a regular file, or another user's."""
    try:
        found = os.stat(file.name, dir_fd=folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(found.st_mode):
        raise StateFileRefused(
            f"state file {file} is a symbolic link (to "
            f"{os.readlink(file.name, dir_fd=folder_fd)}), which batchd does not follow: "
            "remove it, or give --state the file itself"
        )
    if (why := _refused(file, found)) is not None:
        raise StateFileRefused(why)
    return found


def _make_private(folder_fd: int, file: Path, found: os.stat_result | None, create: bool) -> None:
    """``file`` 0600 (``found``: as checked; None: missing, then made if ``create``),
    through a descriptor opened without following a link. SQLite gives the -wal and -shm
    it creates the database's mode; a file left readable by others (an older batchd) is
    narrowed to 0600."""
    if found is None and not create:
        return
    flags = OPEN_FILE | (os.O_CREAT if create else 0)
    try:
        fd = os.open(file.name, flags, 0o600, dir_fd=folder_fd)
    except OSError as exc:
        raise StateFileRefused(f"state file {file}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        why = _refused(file, info)
        if why is None and found is not None and not same_file(info, found):
            why = f"state file {file} was replaced while it was checked: start again"
        if why is not None:
            raise StateFileRefused(why)
        if stat.S_IMODE(info.st_mode) != 0o600:
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
