"""A job's supervisor: one small process per running job, outside the daemon.

It holds the job's lock in the spool for as long as it lives, starts the job's
process (``child``), and then waits: for the job's processes to end, for the job's
walltime, for a request of the daemon on the control FIFO (stop, a signal), and,
every few seconds, measures the memory the job's processes hold (killing the job
over its ``mem`` where no cgroup limits it, as OpenPBS's MoM does with
``$enforce mem``). When the job's top process has ended, everything the job started
is killed (its cgroup, else every descendant: the supervisor is their subreaper),
its TMPDIR and node file are removed as its owner, and the end is written to the
spool; then the supervisor exits, and the daemon, watching it, reads the end.

Stopping follows PBS: SIGTERM to every process of the job, SIGKILL to what is left
``kill_delay`` seconds later. Over its walltime or its memory the job is stopped so
too, after a line ``=>> PBS: job killed: walltime 65 exceeded limit 60`` in its
error stream, and its Exit_status is ``JOB_EXEC_KILL_WALLTIME`` (-29) or
``JOB_EXEC_KILL_MEM`` (-27).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import resource
import select
import shutil
import signal
import socket
import time
from collections.abc import Callable
from typing import NoReturn

from batchd.execution import cgroups, procs, spool
from batchd.execution.child import start_job
from batchd.execution.codes import (
    JOB_EXEC_FAIL1,
    JOB_EXEC_KILL_MEM,
    JOB_EXEC_KILL_WALLTIME,
    exit_status,
)
from batchd.execution.spec import EXITED, FAILED, MEM, STOPPED, WALLTIME, EndReport, LaunchSpec

POLL_FIRST, POLL_EVERY = 0.5, 2.0  # seconds: the first memory reading, then the others
DRAIN_LIMIT = 60.0  # seconds to wait for killed processes to go (one stuck in the kernel)


def _kb(n: int) -> str:
    return f"{n // 1024}kb"


class Supervisor:
    def __init__(self, spec: LaunchSpec, spool_fd: int) -> None:
        self.spec = spec
        self.spool_fd = spool_fd
        self.pid = 0  # the job's top process (its session and process group)
        self.top_status: int | None = None
        self.reason = EXITED
        self.message = ""
        self.err_fd: int | None = None
        self.start = 0.0
        self.kill_at: float | None = None  # when what is left of a stopped job gets SIGKILL
        self.stopping = False
        self.poll_at = 0.0
        self.peak_rss = self.peak_vm = 0
        self.cgroup: str | None = None
        self.memory_limited = False  # the cgroup's memory.max holds the job's mem
        # Signals arrive as bytes on this pipe (set before the fork: a job may end at once).
        self.wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, lambda *_: None)  # someone stopping us: as a qdel

    # -- the job's processes ----------------------------------------------------------
    def members(self) -> list[int]:
        if self.cgroup is not None:
            return cgroups.pids(self.cgroup)
        return procs.descendants(os.getpid())

    def send(self, sig: int) -> None:
        procs.signal_all(self.members(), sig)

    def signal_part(self, sig: int, script_only: bool) -> None:
        """Slurm's --signal: to the script's process alone, or to every other one."""
        if script_only:
            procs.signal_all([self.pid], sig)
        else:
            procs.signal_all([p for p in self.members() if p != self.pid], sig)

    def kill_everything(self) -> None:
        if self.cgroup is not None and cgroups.kill_all(self.cgroup):
            return
        procs.kill_descendants(os.getpid())

    def say(self, text: str) -> None:
        """A line in the job's error stream, as MoM's message_job writes it."""
        if self.err_fd is not None:
            with contextlib.suppress(OSError):
                os.write(self.err_fd, text.encode())

    def stop(self, reason: str, message: str = "") -> None:
        """SIGTERM now, SIGKILL after the kill delay; the first reason given stays."""
        if self.stopping:
            return
        self.stopping = True
        self.reason = reason
        if message:
            self.message = message
            self.say(self._killed_line(reason, message))
        self.send(signal.SIGTERM)
        self.kill_at = time.monotonic() + max(self.spec.kill_delay, 0)

    def _killed_line(self, reason: str, message: str) -> str:
        """What the job's error stream is told when it is stopped over a limit: MoM's
        line, or slurmstepd's for a job from sbatch."""
        if self.spec.front_end != "slurm":
            return f"=>> PBS: job killed: {message}\n"
        if reason != WALLTIME:
            return f"slurmstepd: error: Exceeded job memory limit ({message})\n"
        at = time.strftime("%Y-%m-%dT%H:%M:%S")
        host = socket.gethostname().split(".")[0]
        job = self.spec.env.get("SLURM_JOB_ID", self.spec.job_id)
        return (
            f"slurmstepd: error: *** JOB {job} ON {host} CANCELLED AT {at} DUE TO TIME LIMIT ***\n"
        )

    # -- starting ---------------------------------------------------------------------
    def launch(self) -> EndReport | None:
        """Start the job's process; an EndReport if it could not start."""
        spec = self.spec
        if spec.cgroup is not None:
            try:
                self.memory_limited = cgroups.create(spec.cgroup, spec.mem)
                self.cgroup = spec.cgroup
            except OSError:
                self.cgroup = None  # the job runs, found by descent instead
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.start = time.time()
        if self.cgroup is None:
            spec.cgroup = None
        pid = os.fork()
        if pid == 0:
            ours.close()
            start_job(spec, theirs)
        theirs.close()
        self.pid = pid
        failure = self._hear_start(ours)
        ours.close()
        if failure is not None:
            code, message = failure
            self._reap_all()
            return EndReport(code, FAILED, self.start, time.time(), message=message)
        env = spec.env
        started = {
            "pid": pid,
            "start": self.start,
            "cgroup": self.cgroup,
            # What the daemon removes, as the owner, should this supervisor be lost.
            "files": [p for p in (env.get("TMPDIR"), env.get("PBS_NODEFILE")) if p],
            "owner": [spec.uid, spec.gid, spec.groups],
        }
        spool.write_record(self.spool_fd, spec.key, spool.STARTED, json.dumps(started), whole=False)
        return None

    def _hear_start(self, ours: socket.socket) -> tuple[int, str] | None:
        while True:
            try:
                data, fds, _, _ = socket.recv_fds(ours, 4096, 1)
            except InterruptedError:
                continue
            if fds:
                self.err_fd = fds[0]
                continue
            if not data:
                return None  # closed on exec: the shell runs
            text = data.decode(errors="replace")
            if text.startswith("fail "):
                _, code, message = text.split(" ", 2)
                return int(code), message
            return JOB_EXEC_FAIL1, f"the job's process said {text[:200]!r}"

    # -- waiting ----------------------------------------------------------------------
    def run(self) -> EndReport:
        spec = self.spec
        wake_r = self.wake_r
        control = os.open(spool.name(spec.key, spool.CONTROL), os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC,
                          dir_fd=self.spool_fd)  # fmt: skip
        walltime_at = time.monotonic() + spec.walltime if spec.walltime > 0 else None
        warn_at = None
        if walltime_at is not None and spec.warn_signal:
            warn_at = walltime_at - spec.warn_before
        self.poll_at = time.monotonic() + POLL_FIRST
        buffer = b""
        self._reap()
        while self.top_status is None:
            now = time.monotonic()
            timers = [self.poll_at]
            if walltime_at is not None and not self.stopping:
                timers.append(walltime_at)
            if warn_at is not None and not self.stopping:
                timers.append(warn_at)
            if self.kill_at is not None:
                timers.append(self.kill_at)
            timeout = max(0.0, min(timers) - now)
            try:
                ready, _, _ = select.select([wake_r, control], [], [], timeout)
            except InterruptedError:
                ready = []
            if wake_r in ready:
                with contextlib.suppress(BlockingIOError):
                    for sig in os.read(wake_r, 4096):
                        if sig == signal.SIGTERM:
                            self.stop(STOPPED)
            self._reap()
            if control in ready:
                with contextlib.suppress(BlockingIOError):
                    buffer += os.read(control, 4096)
                while b"\n" in buffer:
                    line, _, buffer = buffer.partition(b"\n")
                    self._request(line.decode(errors="replace").split())
            now = time.monotonic()
            if warn_at is not None and now >= warn_at and not self.stopping:
                warn_at = None
                self.signal_part(spec.warn_signal, spec.warn_script)
            if walltime_at is not None and now >= walltime_at and not self.stopping:
                used = int(time.time() - self.start)
                self.stop(WALLTIME, f"walltime {used} exceeded limit {spec.walltime}")
            if self.kill_at is not None and now >= self.kill_at:
                self.kill_at = None
                self.send(signal.SIGKILL)
            if now >= self.poll_at:
                self._measure()
                self.poll_at = now + POLL_EVERY
        end = time.time()
        self._reap_all()
        return self._report(end)

    def _request(self, words: list[str]) -> None:
        if words == ["stop"]:
            self.stop(STOPPED)
        elif 2 <= len(words) <= 3 and words[0] == "signal" and words[1].isdigit():
            target = words[2] if len(words) == 3 else "all"
            with contextlib.suppress(ValueError, OSError):
                if target == "all":
                    self.send(int(words[1]))
                elif target in ("steps", "script"):
                    self.signal_part(int(words[1]), script_only=target == "script")

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.pid:
                self.top_status = status

    def _reap_all(self) -> None:
        """Wait until every process of the job is gone, killing what is left. As their
        subreaper the supervisor has a child as long as any of them lives: none left
        (ECHILD) is all gone, without looking for them."""
        deadline = time.monotonic() + DRAIN_LIMIT
        killed = False
        while time.monotonic() < deadline:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == self.pid:
                self.top_status = status
            if pid == 0:
                self.kill_everything()
                if killed:
                    time.sleep(0.005)
                killed = True

    def _measure(self) -> None:
        members = self.members()
        rss, vm = procs.memory_of(members)
        self.peak_rss = max(self.peak_rss, rss)
        self.peak_vm = max(self.peak_vm, vm)
        mem = self.spec.mem
        if mem is not None and self.spec.enforce_mem and not self.memory_limited and rss > mem:
            self.stop(MEM, f"mem {_kb(rss)} exceeded limit {_kb(mem)}")

    # -- the end ----------------------------------------------------------------------
    def _report(self, end: float) -> EndReport:
        spec = self.spec
        assert self.top_status is not None
        status = exit_status(self.top_status)
        killed_by = os.WTERMSIG(self.top_status) if os.WIFSIGNALED(self.top_status) else 0
        reason = self.reason
        if self.cgroup is not None and self.memory_limited and cgroups.oom_killed(self.cgroup):
            reason = MEM
            self.message = f"mem exceeded limit {_kb(spec.mem or 0)}"
            self.say(self._killed_line(MEM, self.message))
        if reason == WALLTIME:
            status = JOB_EXEC_KILL_WALLTIME
        elif reason == MEM:
            status = JOB_EXEC_KILL_MEM
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        peak = cgroups.memory_peak(self.cgroup) if self.cgroup is not None else None
        mem = peak if peak is not None else max(self.peak_rss, usage.ru_maxrss * 1024)
        return EndReport(
            status=status,
            reason=reason,
            start=self.start,
            end=end,
            cput=usage.ru_utime + usage.ru_stime,
            mem=mem,
            vmem=max(self.peak_vm, mem),
            message=self.message,
            signal=killed_by,
        )

    def clean_up(self) -> None:
        """The job's node file and TMPDIR go, then its cgroup. Unlinking a name and removing
        an empty directory follow no link and open nothing, so the supervisor does them
        itself; a TMPDIR with something in it is emptied by a process of the owner's."""
        if self.err_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.err_fd)
        nodefile, tmpdir = self.spec.env.get("PBS_NODEFILE"), self.spec.env.get("TMPDIR")
        if nodefile:
            with contextlib.suppress(OSError):
                os.unlink(nodefile)
        if tmpdir:
            try:
                os.rmdir(tmpdir)
            except OSError as exc:
                if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    # fd-based, and a symlink put in the TMPDIR's place is refused.
                    _as_owner(self.spec, lambda: shutil.rmtree(tmpdir, ignore_errors=True))
        if self.cgroup is not None:
            cgroups.remove(self.cgroup)


def _as_owner(spec: LaunchSpec, work: Callable[[], None]) -> None:
    """Run ``work`` in a child process with the job owner's identity, and wait for it."""
    pid = os.fork()
    if pid == 0:
        try:
            if os.geteuid() == 0:
                os.setgroups(spec.groups)
                os.setresgid(spec.gid, spec.gid, spec.gid)
                os.setresuid(spec.uid, spec.uid, spec.uid)
            if os.geteuid() == spec.uid:
                work()
        finally:
            os._exit(0)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def supervise(spec: LaunchSpec, spool_fd: int, ready_fd: int) -> NoReturn:
    """The supervisor's life: lock, tell the launcher its pid, run the job, write its end."""
    code = 0
    key = spec.key
    try:
        for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGTSTP,
                    signal.SIGTTIN, signal.SIGTTOU, signal.SIGPIPE):  # fmt: skip
            signal.signal(sig, signal.SIG_IGN)
        os.umask(0o077)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # nothing of the launcher's (the daemon's) output is kept
            os.dup2(null, fd)
        if null > 2:
            os.close(null)
        _lock = spool.take_lock(spool_fd, key)  # held, open, until this process exits
        spool.make_control(spool_fd, key)
        procs.become_subreaper()
        os.write(ready_fd, f"{os.getpid()}\n".encode())
        os.close(ready_fd)
        sup = Supervisor(spec, spool_fd)
        report = sup.launch()
        if report is None:
            report = sup.run()
        sup.clean_up()
        spool.write_record(spool_fd, key, spool.END, report.to_json())
        # The end says it all now: the rest goes.
        spool.remove(spool_fd, key, (spool.CONTROL, spool.STARTED, spool.LOCK))
    except BaseException:
        code = 1
        with contextlib.suppress(BaseException):
            procs.kill_descendants(os.getpid())
            import traceback  # only here: a supervisor that fails

            text = traceback.format_exc(limit=3).strip().splitlines()[-1]
            now = time.time()
            fail = EndReport(JOB_EXEC_FAIL1, FAILED, now, now, message=f"supervisor failed: {text}")
            spool.write_record(spool_fd, key, spool.END, fail.to_json())
    os._exit(code)
