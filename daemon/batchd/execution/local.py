"""The daemon's side of running jobs on this host: launch, signal, stop, and learn ends.

The executor starts the launcher (``launcher``) on first use and sends it each job to
launch; the launcher answers with the supervisor's pid. The executor then watches the
supervisor through a pidfd in the daemon's event loop: when the supervisor exits, the
job's end is in the spool (or, if it is not, the supervisor was lost: the job's
processes are killed and the end is reported as lost). Ends wait in ``ends`` until
the daemon takes them (``take_ends``) and, once it has saved them, forgets the
job's spool directory (``forget``).

After a restart ``attach`` finds each job the state file says runs: still running
(its supervisor holds its lock: watched again), ended meanwhile (its end is in the
spool), lost, or never launched (no supervisor ever held its lock).

Requests to a supervisor (stop, signal) go on its control FIFO; those made while its
launch is under way are sent once the launcher has answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from batchd.execution import cgroups, procs, spool
from batchd.execution.codes import JOB_EXEC_FAIL1
from batchd.execution.launcher import _LENGTH, frame
from batchd.execution.spec import FAILED, EndReport, LaunchSpec

RUNNING, NEVER, LOST = "running", "never", "lost"


@dataclass(slots=True)
class Ended:
    """A job whose processes are over: ``report`` None when its supervisor was lost."""

    key: str
    report: EndReport | None
    why: str = ""  # when lost: what was found


class LocalExecutor:
    def __init__(self, spool_path: str, cgroup: cgroups.CgroupParent | None = None) -> None:
        self.spool_path = spool_path
        self.cgroup = cgroup
        self.spool_fd = spool.open_spool(spool_path)
        self.wake: Callable[[], None] = lambda: None
        self.ends: list[Ended] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._launcher: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._buffer = b""  # the launcher's answers, read so far
        self._out = bytearray()  # launches the launcher has not read yet
        self._writing = False  # waiting for the launcher's socket to take more
        self._launching: dict[str, list[str]] = {}  # key -> requests waiting for its pid
        self._watched: dict[str, int] = {}  # key -> pidfd of its supervisor

    # -- the launcher -----------------------------------------------------------------
    def start(self, loop: asyncio.AbstractEventLoop, wake: Callable[[], None]) -> None:
        """Watch supervisors in ``loop``; ``wake`` is called when an end arrives."""
        self._loop = loop
        self.wake = wake

    def _ensure_launcher(self) -> socket.socket:
        if self._sock is not None:
            return self._sock
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        argv = [sys.executable, "-I", "-m", "batchd.execution.launcher", self.spool_path,
                str(theirs.fileno())]  # fmt: skip
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
        self._launcher = subprocess.Popen(
            argv, pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, close_fds=True,
        )  # fmt: skip
        theirs.close()
        ours.setblocking(False)
        self._sock = ours
        loop = self._loop
        if loop is not None:
            loop.add_reader(ours.fileno(), self._answers)
        return ours

    def close(self) -> None:
        """The daemon stops: the launcher goes, supervisors and their jobs stay."""
        loop = self._loop
        for key, fd in list(self._watched.items()):
            if loop is not None:
                loop.remove_reader(fd)
            os.close(fd)
            del self._watched[key]
        self._drop_launcher()
        if self.spool_fd >= 0:
            os.close(self.spool_fd)
            self.spool_fd = -1

    # -- launching --------------------------------------------------------------------
    def job_cgroup(self, key: str) -> str | None:
        return None if self.cgroup is None else os.path.join(self.cgroup.path, f"job.{key}")

    def launch(self, spec: LaunchSpec) -> None:
        """Launch a job now; its pid comes back from the launcher (``_answers``)."""
        spool.remove(self.spool_fd, spec.key)  # files a launch that never ran may have left
        self._launching[spec.key] = []
        self._ensure_launcher()
        self._out += frame({"spec": spec.to_dict()})
        self._flush()
        if self._loop is None:
            self._answers(block=True)

    def _flush(self) -> None:
        """Send what the launcher has not taken; the rest when its socket takes more (the
        event loop is never blocked by a launcher busy with many launches)."""
        sock = self._sock
        if sock is None:
            return
        loop = self._loop
        try:
            while self._out:
                if loop is None:
                    sock.setblocking(True)
                try:
                    sent = sock.send(self._out)
                finally:
                    if loop is None:
                        sock.setblocking(False)
                del self._out[:sent]
        except BlockingIOError:
            if not self._writing and loop is not None:
                loop.add_writer(sock.fileno(), self._flush)
                self._writing = True
            return
        except OSError as exc:
            self._launcher_gone(f"the launcher is gone: {exc.strerror}")
            return
        if self._writing and loop is not None:
            loop.remove_writer(sock.fileno())
            self._writing = False

    def _answers(self, block: bool = False) -> None:
        sock = self._sock
        if sock is None:
            return
        while True:
            try:
                if block:
                    sock.setblocking(True)
                chunk = sock.recv(65536)
            except BlockingIOError:
                break
            finally:
                if block:
                    sock.setblocking(False)
            if not chunk:
                self._launcher_gone("the launcher exited")
                return
            self._buffer += chunk
            while len(self._buffer) >= _LENGTH.size:
                (length,) = _LENGTH.unpack(self._buffer[: _LENGTH.size])
                if len(self._buffer) < _LENGTH.size + length:
                    break
                body = self._buffer[_LENGTH.size : _LENGTH.size + length]
                self._buffer = self._buffer[_LENGTH.size + length :]
                self._answer(json.loads(body))
            if block:
                break

    def _answer(self, answer: dict[str, object]) -> None:
        key = str(answer.get("key", ""))
        waiting = self._launching.pop(key, None)
        if waiting is None:
            return
        pid = answer.get("pid")
        if not isinstance(pid, int):
            now = time.time()
            why = f"the job's supervisor could not start: {answer.get('error', '?')}"
            self._ended(Ended(key, EndReport(JOB_EXEC_FAIL1, FAILED, now, now, message=why)))
            return
        self._watch(key, pid)
        for request in waiting:
            self._send(key, request)

    def _drop_launcher(self) -> None:
        """Close the launcher's socket (it exits at the end of file) and wait for it."""
        if self._sock is not None:
            if self._loop is not None:
                self._loop.remove_reader(self._sock.fileno())
                if self._writing:
                    self._loop.remove_writer(self._sock.fileno())
            self._sock.close()
            self._sock = None
        if self._launcher is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._launcher.wait(timeout=5)
            self._launcher = None
        self._buffer = b""
        self._out.clear()
        self._writing = False

    def _launcher_gone(self, why: str) -> None:
        """Launches under way: their supervisors started or not; the spool says which."""
        self._drop_launcher()
        for key in list(self._launching):
            waiting = self._launching.pop(key)
            state = self.attach(key)
            if state == RUNNING:
                for request in waiting:
                    self._send(key, request)
            elif state == NEVER:
                now = time.time()
                self._ended(Ended(key, EndReport(JOB_EXEC_FAIL1, FAILED, now, now, message=why)))

    # -- watching ---------------------------------------------------------------------
    def _watch(self, key: str, pid: int) -> None:
        if key in self._watched:
            return
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            self._gone(key)
            return
        if not spool.lock_held(
            self.spool_fd, key
        ):  # gone before the pidfd was open: the pid may be someone else's now
            os.close(fd)
            self._gone(key)
            return
        self._watched[key] = fd
        if self._loop is not None:
            self._loop.add_reader(fd, lambda: self._gone(key))

    def _gone(self, key: str) -> None:
        fd = self._watched.pop(key, None)
        if fd is not None:
            if self._loop is not None:
                self._loop.remove_reader(fd)
            os.close(fd)
        self._ended(self._end_of(key))

    def _ended(self, ended: Ended) -> None:
        self.ends.append(ended)
        self.wake()

    def _end_of(self, key: str) -> Ended:
        """The end a supervisor left, or what is left of a lost one (killed)."""
        text = spool.read_record(self.spool_fd, key, spool.END)
        if text is not None:
            try:
                return Ended(key, EndReport.from_json(text))
            except (ValueError, TypeError) as exc:
                return Ended(key, None, f"its end record is damaged: {exc}")
        started = spool.read_record(self.spool_fd, key, spool.STARTED)
        self._kill_leftovers(key, started)
        return Ended(key, None, "its supervisor ended without recording the job's end")

    def _kill_leftovers(self, key: str, started: str | None) -> None:
        """A lost supervisor's job: kill its cgroup, else its session's processes; then its
        TMPDIR and node file go, removed by a process of the owner's."""
        info: dict[str, object] = {}
        with contextlib.suppress(ValueError, TypeError):
            info = json.loads(started or "{}")
        path = info.get("cgroup") or self.job_cgroup(key)
        if not (isinstance(path, str) and os.path.isdir(path) and cgroups.kill_all(path)):
            pid = info.get("pid")
            if isinstance(pid, int) and pid > 1:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)
                procs.signal_all(_session(pid), signal.SIGKILL)
        files, owner = info.get("files"), info.get("owner")
        if isinstance(files, list) and files and isinstance(owner, list) and len(owner) == 3:
            _remove_as(owner, [str(f) for f in files])

    def take_ends(self) -> list[Ended]:
        ends, self.ends = self.ends, []
        return ends

    def forget(self, key: str) -> None:
        """The job's end is saved: its files go from the spool."""
        spool.remove(self.spool_fd, key)

    # -- after a restart --------------------------------------------------------------
    def attach(self, key: str) -> str | Ended:
        """RUNNING (and watched), NEVER (never launched) or the job's end (or loss)."""
        if key in self._watched:
            return RUNNING
        seen = self._take_end(key)  # seen, not yet taken: this is its end
        if seen is not None:
            return seen
        for _ in range(200):
            # The lock first: a supervisor writes its end, then exits (and lets go).
            held = spool.lock_held(self.spool_fd, key)
            pid = spool.lock_pid(self.spool_fd, key)
            has_end = spool.read_record(self.spool_fd, key, spool.END) is not None
            if not held:
                break
            if pid is not None:
                self._watch(key, pid)
                if key in self._watched:
                    return RUNNING
                seen = self._take_end(key)  # it ended meanwhile (_gone)
                if seen is not None:
                    return seen
                break
            time.sleep(0.01)  # it holds its lock and is about to write its pid
        if pid is None and not has_end:
            return NEVER  # no supervisor ever ran it: the job's process never started
        return self._end_of(key)

    def _take_end(self, key: str) -> Ended | None:
        for i, ended in enumerate(self.ends):
            if ended.key == key:
                return self.ends.pop(i)
        return None

    # -- requests ---------------------------------------------------------------------
    def stop(self, key: str) -> None:
        """SIGTERM, then SIGKILL after the kill delay (qdel, qrerun, a window closing)."""
        self._request(key, "stop")

    def signal(self, key: str, number: int, target: str = "all") -> None:
        """``target``: all the job's processes, its steps (all but the script) or its
        script alone."""
        self._request(key, f"signal {number} {target}")

    def _request(self, key: str, line: str) -> None:
        waiting = self._launching.get(key)
        if waiting is not None:
            waiting.append(line)
        else:
            self._send(key, line)

    def _send(self, key: str, line: str) -> None:
        try:
            fd = os.open(spool.name(key, spool.CONTROL), os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC,
                         dir_fd=self.spool_fd)  # fmt: skip
        except OSError as exc:
            if exc.errno in (errno.ENXIO, errno.ENOENT):
                return  # the supervisor is gone: its end is on its way
            raise
        try:
            os.write(fd, f"{line}\n".encode())
        except OSError:
            pass
        finally:
            os.close(fd)


_PLAIN = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}


def _remove_as(owner: list[object], paths: list[str]) -> None:
    """Remove a job's files with its owner's rights, in a process of their own (the daemon
    never forks itself: subprocess execs at once)."""
    uid, gid, groups = owner
    if not (isinstance(uid, int) and isinstance(gid, int) and isinstance(groups, list)):
        return
    # rm, not the daemon's Python: that may live where only root may read (a venv).
    argv = ["rm", "-rf", "--", *paths]
    null = subprocess.DEVNULL
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        if os.geteuid() == 0:
            subprocess.run(
                argv, env=_PLAIN, timeout=60, stdin=null, stdout=null, stderr=null,
                user=uid, group=gid, extra_groups=[int(str(g)) for g in groups],
            )  # fmt: skip
        elif os.geteuid() == uid:
            subprocess.run(argv, env=_PLAIN, timeout=60, stdin=null, stdout=null, stderr=null)


def _session(sid: int) -> list[int]:
    """The processes of session ``sid``."""
    found: list[int] = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError):
                if os.getsid(int(name)) == sid:
                    found.append(int(name))
    return found
