"""The daemon's Unix socket: its directory checked, then the socket made in that very one.

The directory is reached and checked through a descriptor (:mod:`batchd.server.safedirs`);
the socket is bound, opened up to every user and removed through that descriptor
(``/proc/self/fd/N/NAME``), never by its path, so a directory swapped meanwhile (a
symbolic link put in place of ``/tmp/batchd-<uid>``) leads nothing the daemon does
elsewhere. After the bind the path must still lead to the directory checked: clients
look for the socket by its path.
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
from pathlib import Path

from batchd.server.auth import user_name
from batchd.server.safedirs import UnsafePath, check_on_the_way, open_dir, same_file
from batchd.server.serve_errors import ServeError

SOCKET_MODE = 0o666  # anyone may connect; peer credentials say who they are
FOLDER_MODE = 0o755  # every user reaches the socket, as PBS's; nobody else may add one
ABOVE_MODE = 0o700  # a runtime directory the daemon makes (/tmp/batchd-<uid>)


def _check_above(folder: Path, info: os.stat_result) -> None:
    """The directory above the socket's decides who may replace it: root's or the daemon
    user's, and sticky (as /tmp is) if its group or others may write to it."""
    if info.st_uid not in (0, os.geteuid()):
        raise ServeError(
            f"socket directory {folder} is in {folder.parent}, owned by "
            f"{user_name(info.st_uid)}, who could replace it: give --socket elsewhere"
        )
    if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
        raise ServeError(
            f"socket directory {folder} is in {folder.parent}, which its group or others may "
            f"write and is not sticky (mode {stat.S_IMODE(info.st_mode):04o}): "
            "give --socket elsewhere"
        )


def _check_socket_dir(folder: Path, info: os.stat_result) -> None:
    """The socket's directory must be the daemon user's own and writable by nobody else."""
    me = os.geteuid()
    mode = stat.S_IMODE(info.st_mode)
    if info.st_uid != me:
        raise ServeError(
            f"socket directory {folder} is owned by {user_name(info.st_uid)}, not by "
            f"{user_name(me)} who runs batchd: remove it or give --socket elsewhere"
        )
    if mode & 0o022:
        raise ServeError(
            f"socket directory {folder} is writable by its group or others (mode {mode:04o}): "
            "chmod 755 it or give --socket elsewhere"
        )


def _open_folder(folder: Path, make: bool) -> int:
    """The socket's directory, opened and checked with every directory on the way; made
    0755 (missing parents 0700) when ``make``."""

    def check(path: str, info: os.stat_result, place: int | None) -> None:
        if place == 0:
            _check_socket_dir(folder, info)
        elif place == 1:
            _check_above(folder, info)
        else:
            check_on_the_way(path, info)

    try:
        return open_dir(str(folder), check, own=2, make=FOLDER_MODE if make else None)
    except UnsafePath as exc:
        fix = "remove it or " if "symbolic link" in exc.problem else ""
        raise ServeError(
            f"socket directory {folder}: {exc}: {fix}give --socket elsewhere"
        ) from None
    except OSError as exc:
        raise ServeError(f"socket directory {folder}: {exc.strerror or exc}") from None


class ClaimedSocket:
    """A checked socket directory, held open, and the socket's name in it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.folder = Path(os.path.abspath(path)).parent
        self.name = Path(os.path.abspath(path)).name
        self.fd = _open_folder(self.folder, make=True)
        self.checked = os.fstat(self.fd)
        self.bound = False

    def through_fd(self) -> str:
        """The socket's path through the held directory, whatever its path leads to now."""
        return f"/proc/self/fd/{self.fd}/{self.name}"

    def clear(self) -> None:
        """Remove a stale socket; refuse a file that is not one, or a daemon answering."""
        try:
            info = os.stat(self.name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return
        if not stat.S_ISSOCK(info.st_mode):
            raise ServeError(f"{self.path} exists and is not a socket: give --socket another path")
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(self.through_fd())
        except OSError:
            os.unlink(self.name, dir_fd=self.fd)
            return
        finally:
            probe.close()
        raise ServeError(f"another batchd is listening on {self.path}")

    def bind(self) -> socket.socket:
        """The socket, bound in the checked directory and open to every user; refused
        (and removed) if the directory's path no longer leads to that directory."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            try:
                sock.bind(self.through_fd())
            except OSError as exc:
                raise ServeError(f"cannot make the socket {self.path}: {exc.strerror}") from None
            self.bound = True
            self._open_up()
            self._check_still_there()
        except BaseException:
            sock.close()
            self.unlink()
            raise
        return sock

    def _open_up(self) -> None:
        # A socket's mode is set on its file, never through the socket (fchmod of a socket
        # changes nothing on disk): through an O_PATH descriptor of that very file.
        fd = os.open(self.name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self.fd)
        try:
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                raise ServeError(f"{self.path} was replaced while batchd was making it")
            os.chmod(f"/proc/self/fd/{fd}", SOCKET_MODE)
        finally:
            os.close(fd)

    def _check_still_there(self) -> None:
        try:
            fd = _open_folder(self.folder, make=False)
        except ServeError as exc:
            raise ServeError(f"{exc} (found after binding the socket)") from None
        try:
            now = os.fstat(fd)
        finally:
            os.close(fd)
        if not same_file(now, self.checked):
            raise ServeError(
                f"socket directory {self.folder} was replaced while batchd made its socket: "
                "give --socket elsewhere"
            )

    def unlink(self) -> None:
        """Remove the socket this daemon bound (by its name in the held directory)."""
        if self.bound:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.name, dir_fd=self.fd)
            self.bound = False

    def close(self) -> None:
        """Remove the socket and let the directory go (again: nothing more)."""
        if self.fd < 0:
            return
        self.unlink()
        os.close(self.fd)
        self.fd = -1


def claim_socket(path: Path) -> ClaimedSocket:
    """Check the socket's directory, or make it 0755 (every user may reach the socket,
    as PBS's) in a checked parent, its own missing parents 0700; remove a stale socket;
    refuse if another daemon answers on it. Every refusal is a :class:`ServeError`."""
    claimed = ClaimedSocket(path)
    try:
        claimed.clear()
    except BaseException:
        claimed.close()
        raise
    return claimed
