"""The job's own process, from the supervisor's fork to the shell's exec.

Everything that touches a path or a name a user chose happens after the identity
change, with the owner's rights alone: the output files, the TMPDIR and node file,
the home directory, the shell. Before it, as the supervisor's user, only what
holds the job in place: a new session and process group, its cgroup, its CPUs.

The supervisor learns how it went on a socket that closes on exec: the error
stream's descriptor first (for the messages it may have to add, such as a walltime
kill), then either nothing (the shell runs) or why the job could not start.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
from typing import NoReturn

from batchd.execution import cgroups
from batchd.execution.codes import JOB_EXEC_FAIL1, JOB_EXEC_FAIL2, JOB_EXEC_FAILUID
from batchd.execution.spec import LaunchSpec

SCRIPT_FD = 199  # the script, as /dev/fd/199: a number shells and profiles leave alone
OUTPUT_MODE = 0o666  # with the job's umask (077, as PBS's MoM sets it): 0600


class StartError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _reset_signals() -> None:
    """Dispositions as a fresh process has them: Python ignores SIGPIPE and SIGXFSZ, and an
    exec keeps what is ignored; the supervisor's handlers and mask must not leak either.
    Python knows every disposition it inherited or set, so only those not the default are
    reset (a system call each)."""
    signal.set_wakeup_fd(-1)
    for sig in signal.valid_signals():
        if sig in (signal.SIGKILL, signal.SIGSTOP) or signal.getsignal(sig) == signal.SIG_DFL:
            continue
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


def _become(spec: LaunchSpec) -> None:
    """The job's owner, for good: groups, then gid, then uid, all three ids of each."""
    if os.geteuid() != 0:
        if os.geteuid() != spec.uid:
            raise StartError(
                JOB_EXEC_FAILUID, f"this daemon runs as uid {os.geteuid()} and cannot run "
                f"a job of {spec.user} (uid {spec.uid})"
            )  # fmt: skip
        return
    try:
        os.setgroups(spec.groups)
        os.setresgid(spec.gid, spec.gid, spec.gid)
        os.setresuid(spec.uid, spec.uid, spec.uid)
    except OSError as exc:
        raise StartError(JOB_EXEC_FAILUID, f"cannot become {spec.user}: {exc.strerror}") from None
    if os.getresuid() != (spec.uid,) * 3 or os.getresgid() != (spec.gid,) * 3:
        raise StartError(JOB_EXEC_FAILUID, f"cannot become {spec.user}: ids did not change")
    if spec.uid != 0:
        try:
            os.setuid(0)
        except PermissionError:
            pass
        else:
            raise StartError(JOB_EXEC_FAILUID, "could regain root after the identity change")


def _open_output(path: str, name: str, what: str, append: bool) -> int:
    if name and os.path.isdir(path):
        path = os.path.join(path, name)
    keep = os.O_APPEND if append else os.O_TRUNC
    try:
        return os.open(path, os.O_WRONLY | os.O_CREAT | keep, OUTPUT_MODE)
    except OSError as exc:
        raise StartError(
            JOB_EXEC_FAIL1, f"cannot open the {what} file {path}: {exc.strerror}"
        ) from None


def _outputs(spec: LaunchSpec) -> int:
    """stdin from /dev/null, stdout and stderr to their files (one file when joined);
    the descriptor of the error stream."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    if null != 0:
        os.close(null)
    append = spec.append_output
    out = (
        _open_output(spec.stdout, spec.stdout_name, "output", append)
        if spec.stdout is not None
        else None
    )
    err = (
        _open_output(spec.stderr, spec.stderr_name, "error", append)
        if spec.stderr is not None
        else None
    )
    if out is None and err is None:
        raise StartError(JOB_EXEC_FAIL1, "neither an output nor an error file")
    os.dup2(out if out is not None else err, 1)  # type: ignore[arg-type]
    os.dup2(err if err is not None else out, 2)  # type: ignore[arg-type]
    for fd in (out, err):
        if fd is not None and fd > 2:
            os.close(fd)
    return 2


def _job_files(spec: LaunchSpec) -> None:
    """The private TMPDIR (0700) and the node file, made as the owner under random names."""
    tmpdir = spec.env.get("TMPDIR")
    if tmpdir:
        try:
            os.mkdir(tmpdir, 0o700)
        except OSError as exc:
            raise StartError(
                JOB_EXEC_FAIL1, f"cannot make TMPDIR {tmpdir}: {exc.strerror}"
            ) from None
    nodefile = spec.env.get("PBS_NODEFILE")
    if nodefile:
        try:
            fd = os.open(nodefile, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            raise StartError(
                JOB_EXEC_FAIL1, f"cannot make PBS_NODEFILE {nodefile}: {exc.strerror}"
            ) from None
        try:
            os.write(fd, "".join(f"{host}\n" for host in spec.nodes).encode())
        finally:
            os.close(fd)


def _script(spec: LaunchSpec) -> None:
    fd = os.memfd_create("job-script", 0)
    data = spec.script.encode()
    while data:
        data = data[os.write(fd, data) :]
    os.lseek(fd, 0, os.SEEK_SET)
    os.dup2(fd, SCRIPT_FD, inheritable=True)
    os.close(fd)


def _enter(spec: LaunchSpec) -> None:
    """The job's directory: its working directory if it has one (a job from sbatch),
    else its owner's home. One it cannot enter fails the job, said in its error file."""
    if spec.workdir:
        try:
            os.chdir(spec.workdir)
        except OSError as exc:
            os.write(
                2,
                f"slurmstepd: error: couldn't chdir to `{spec.workdir}': {exc.strerror}\n".encode(),
            )
            raise StartError(
                JOB_EXEC_FAIL2, f"could not chdir to {spec.workdir}: {exc.strerror}"
            ) from None
        return
    try:
        os.chdir(spec.home)
    except OSError:
        os.write(2, b"Could not chdir to home directory\n")
        raise StartError(JOB_EXEC_FAIL2, f"could not chdir to home directory {spec.home}") from None


def _close_others(keep: int) -> None:
    """Close every descriptor but 0-2, the script and ``keep`` (the status socket, closed
    by the exec)."""
    for low, high in ((3, min(keep, SCRIPT_FD)), (min(keep, SCRIPT_FD) + 1, max(keep, SCRIPT_FD))):
        os.closerange(low, high)
    os.closerange(max(keep, SCRIPT_FD) + 1, os.sysconf("SC_OPEN_MAX"))


def _fail(status: socket.socket, code: int, message: str) -> NoReturn:
    try:
        status.send(f"fail {code} {message}".encode()[:4000])
    finally:
        os._exit(127)


def start_job(spec: LaunchSpec, status: socket.socket) -> NoReturn:
    """Become the job and exec its shell; never returns."""
    try:
        _reset_signals()
        os.setsid()
        if spec.cgroup is not None:
            try:
                cgroups.join(spec.cgroup)
            except OSError as exc:
                raise StartError(JOB_EXEC_FAIL1, f"cannot join cgroup: {exc.strerror}") from None
        if spec.cpus:
            # CPUs this host no longer gives us: the job runs where it may.
            with contextlib.suppress(OSError):
                os.sched_setaffinity(0, spec.cpus)
        _become(spec)
        os.umask(0o077)
        err = _outputs(spec)
        socket.send_fds(status, [b"fds"], [err])
        _job_files(spec)
        _script(spec)
        _enter(spec)
        _close_others(status.fileno())
        try:
            os.execve(spec.shell, spec.argv, spec.env)
        except OSError as exc:
            os.write(2, f"{spec.shell}: cannot run the shell: {exc.strerror}\n".encode())
            raise StartError(
                JOB_EXEC_FAIL2, f"cannot run the shell {spec.shell}: {exc.strerror}"
            ) from None
    except StartError as exc:
        _fail(status, exc.code, exc.message)
    except BaseException as exc:  # anything else: the job does not run, and says why
        _fail(status, JOB_EXEC_FAIL1, f"the job could not start: {exc!r}")
