"""The launcher: a small process the daemon starts, which forks each job's supervisor.

The daemon never forks (it has threads, and a fork of it would carry its state file,
sockets and memory into every job). The launcher is started once, with nothing but
this package loaded, and is single-threaded: each launch is one fork of a small
process, which starts a session of its own; the launcher ignores SIGCHLD, so its
supervisors never wait as zombies for it, and when it stops they are init's (or a
subreaper's) and live on. The supervisor tells the launcher its pid once it holds
its job's lock, and the launcher tells the daemon.

Frames on the daemon's socket: a 4-byte big-endian length, then JSON. The daemon
sends ``{"spec": LaunchSpec}``; the launcher answers ``{"key": K, "pid": P}`` or
``{"key": K, "error": TEXT}``. When the daemon goes (end of file), the launcher
exits; supervisors it started go on.

Run as ``python -I -m batchd.execution.launcher SPOOL FD``.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import socket
import struct
import sys
from typing import Any

from batchd.execution.spec import LaunchSpec
from batchd.execution.supervisor import supervise

_LENGTH = struct.Struct(">I")
MAX_FRAME = 16 << 20


def read_frame(sock: socket.socket) -> dict[str, Any] | None:
    head = _read_exact(sock, _LENGTH.size)
    if head is None:
        return None
    (length,) = _LENGTH.unpack(head)
    if length > MAX_FRAME:
        raise ValueError(f"frame of {length} bytes")
    body = _read_exact(sock, length)
    if body is None:
        return None
    data: dict[str, Any] = json.loads(body)
    return data


def _read_exact(sock: socket.socket, n: int) -> bytes | None:
    chunks: list[bytes] = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def frame(data: dict[str, Any]) -> bytes:
    body = json.dumps(data, separators=(",", ":")).encode()
    return _LENGTH.pack(len(body)) + body


def launch(spec: LaunchSpec, spool_fd: int, daemon: socket.socket) -> int:
    """Fork the supervisor of ``spec``; its pid once it holds its lock. OSError when it
    could not start."""
    read_end, write_end = os.pipe2(os.O_CLOEXEC)
    if os.fork() == 0:
        try:
            daemon.close()
            os.close(read_end)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            os.setsid()
            supervise(spec, spool_fd, write_end)  # never returns
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        data = b""
        while chunk := os.read(read_end, 64):
            data += chunk
            if data.endswith(b"\n"):
                break
    finally:
        os.close(read_end)
    if not data.strip().isdigit():
        raise OSError(f"the supervisor of job {spec.job_id} did not start")
    return int(data)


def serve(spool: str, fd: int) -> int:
    # Each launch is a fork: with the collector off and every object frozen, neither the
    # launcher nor a supervisor walks (and so copies) the objects they share.
    gc.disable()
    gc.freeze()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the daemon's ^C is the daemon's to handle
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # supervisors are reaped as they exit
    daemon = socket.socket(fileno=fd)
    spool_fd = os.open(spool, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    while True:
        try:
            request = read_frame(daemon)
        except (OSError, ValueError):
            return 1
        if request is None:
            return 0  # the daemon went
        key = ""
        try:
            spec = LaunchSpec(**request["spec"])
            key = spec.key
            answer: dict[str, Any] = {"key": key, "pid": launch(spec, spool_fd, daemon)}
        except Exception as exc:
            answer = {"key": key, "error": str(exc)}
        try:
            daemon.sendall(frame(answer))
        except OSError:
            return 1


if __name__ == "__main__":
    sys.exit(serve(sys.argv[1], int(sys.argv[2])))
