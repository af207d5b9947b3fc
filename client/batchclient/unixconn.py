"""``http.client`` over batchd's Unix socket, for the tests and benchmarks that want
its API (``from batchclient.transport import UnixHTTPConnection`` still works). The
commands do without it: see :mod:`batchclient.http11`."""

from __future__ import annotations

import http.client
import socket

from .transport import connect_unix


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP/1.1 over a Unix stream socket (the Host header is ``batchd``).

    Before anything is sent, the socket's directory and the server's user must be
    trusted (:func:`batchclient.transport.trusted_users`): root, the daemon's user or
    yourself.
    """

    def __init__(self, path: str, timeout: float, daemon_user: str | None = None) -> None:
        super().__init__("batchd", timeout=timeout)
        self.unix_path = path
        self.daemon_user = daemon_user

    def connect(self) -> None:
        raw = connect_unix(self.unix_path, self.timeout, self.daemon_user)
        # The same connection as a socket.socket, whose makefile() http.client reads with.
        self.sock = socket.socket(fileno=raw.detach())
        self.sock.settimeout(self.timeout)
