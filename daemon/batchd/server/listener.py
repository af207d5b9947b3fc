"""The daemon's listening sockets and its own accept loop.

Each connection accepted is admitted by the :class:`ConnectionGate` (caps per
caller and in all) or refused at once with a short 503; one admitted must send a
complete request head within ``header_timeout`` (aiohttp has no such timeout:
``keepalive_timeout`` closes idle connections, and it is the ``idle_timeout``).

asyncio's own accept loop logs every failed accept() and, out of file descriptors,
schedules a retry for each failure of a batch; here a failure takes the socket out
of the loop for a delay that doubles up to a second, and the failures are logged
at most once a second with the count of those not logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from typing import Any

import structlog
from aiohttp import web

from batchd.server.connlimit import ConnectionGate, Peer

log = structlog.get_logger("batchd")

BACKLOG = 128
ACCEPT_BATCH = 64  # connections taken per wake-up of a listener, as asyncio's
BACKOFF_FIRST = 0.05  # seconds a listener rests after a failed accept(), doubled ...
BACKOFF_MAX = 1.0  # ... up to this
LOG_INTERVAL = 1.0  # seconds between two lines of one throttled event
REQUEST_TIMEOUT = b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"


class ThrottledLog:
    """A warning logged at most once per ``interval``, with how many were not."""

    def __init__(self, event: str, interval: float = LOG_INTERVAL) -> None:
        self.event = event
        self.interval = interval
        self.suppressed = 0
        self._last: float | None = None

    def __call__(self, **fields: Any) -> None:
        now = time.monotonic()
        if self._last is not None and now - self._last < self.interval:
            self.suppressed += 1
            return
        log.warning(self.event, suppressed=self.suppressed, **fields)
        self._last = now
        self.suppressed = 0


def refusal(message: str) -> bytes:
    """A whole HTTP answer 503 that closes the connection."""
    body = json.dumps({"error": "too_many_connections", "message": message}).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


def tcp_listeners(host: str, port: int) -> list[socket.socket]:
    """Listening TCP sockets on every address ``host`` names (as asyncio's create_server)."""
    socks: list[socket.socket] = []
    seen: set[tuple[int, Any]] = set()
    try:
        for family, _, _, _, address in socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        ):
            if (family, address) in seen:
                continue
            seen.add((family, address))
            sock = socket.socket(family, socket.SOCK_STREAM)
            socks.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(BACKLOG)
    except OSError:
        for sock in socks:
            sock.close()
        raise
    return socks


class GuardedConnection(asyncio.Protocol):
    """One admitted connection: aiohttp's protocol inside, the head timer and the gate's
    count around it."""

    def __init__(self, inner: web.RequestHandler, peer: Peer, listeners: Listeners) -> None:
        self.inner = inner
        self.peer = peer
        self._listeners = listeners
        self._transport: asyncio.BaseTransport | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._counted = True

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(
            self._listeners.gate.limits.header_timeout, self._head_too_late
        )
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        self.inner.eof_received()
        return None  # the transport closes: aiohttp's protocol keeps no half-open connection

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed()
        self.inner.connection_lost(exc)

    def head_arrived(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def closed(self) -> None:
        """The connection is gone (or never came to be): uncounted, once."""
        self.head_arrived()
        if self._counted:
            self._counted = False
            self._listeners.forget(self)

    def _head_too_late(self) -> None:
        self._timer = None
        self._listeners.head_too_late(self)
        transport = self._transport
        if isinstance(transport, asyncio.WriteTransport) and not transport.is_closing():
            transport.write(REQUEST_TIMEOUT)
        self.inner.force_close()


class GuardedSite(web.BaseSite):
    """A listening socket served by the runner's aiohttp server through ``listeners``."""

    def __init__(self, runner: web.BaseRunner, sock: socket.socket, listeners: Listeners) -> None:
        super().__init__(runner)
        self._sock = sock
        self._listeners = listeners
        self._loop: asyncio.AbstractEventLoop | None = None
        self._retry: asyncio.TimerHandle | None = None
        self._delay = 0.0

    @property
    def name(self) -> str:
        where = self._sock.getsockname()
        if self._sock.family == socket.AF_UNIX:
            return f"http://unix:{where}:"
        return f"http://{where[0]}:{where[1]}"

    async def start(self) -> None:
        await super().start()
        self._loop = asyncio.get_running_loop()
        self._sock.setblocking(False)
        self._loop.add_reader(self._sock.fileno(), self._accept)

    async def stop(self) -> None:
        if self._loop is not None and self._sock.fileno() >= 0:
            self._loop.remove_reader(self._sock.fileno())
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        self._sock.close()
        await super().stop()

    def _accept(self) -> None:
        for _ in range(ACCEPT_BATCH):
            try:
                conn, address = self._sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue
            except OSError as exc:
                self._rest(exc)
                return
            self._delay = 0.0
            self._listeners.take(conn, address)

    def _rest(self, exc: OSError) -> None:
        """accept() failed (no descriptor left, typically): listen again after a delay."""
        assert self._loop is not None
        self._delay = min(BACKOFF_MAX, self._delay * 2 or BACKOFF_FIRST)
        self._listeners.accept_failed(self.name, exc, self._delay)
        self._loop.remove_reader(self._sock.fileno())
        self._retry = self._loop.call_later(self._delay, self._resume)

    def _resume(self) -> None:
        self._retry = None
        if self._loop is not None and self._sock.fileno() >= 0:
            self._loop.add_reader(self._sock.fileno(), self._accept)


class Listeners:
    """The daemon's listeners: every connection through the gate, to the runner's server."""

    def __init__(self, runner: web.BaseRunner, gate: ConnectionGate) -> None:
        server = runner.server
        if server is None:
            raise RuntimeError("set the runner up before its listeners")
        self._runner = runner
        self._server = server
        self.gate = gate
        self._waiting_head: dict[web.RequestHandler, GuardedConnection] = {}
        self._attaching: set[asyncio.Task[None]] = set()
        self._log_refused = ThrottledLog("connection_refused")
        self._log_late = ThrottledLog("request_head_timeout")
        self._log_failed = ThrottledLog("accept_failed")
        make_request = server.request_factory

        def watched(message: Any, payload: Any, protocol: Any, writer: Any, task: Any) -> Any:
            guard = self._waiting_head.pop(protocol, None)
            if guard is not None:
                guard.head_arrived()
            return make_request(message, payload, protocol, writer, task)

        server.request_factory = watched

    async def add(self, sock: socket.socket) -> None:
        """Serve a bound, listening socket until the runner is cleaned up."""
        await GuardedSite(self._runner, sock, self).start()

    def take(self, conn: socket.socket, address: object) -> None:
        gate = self.gate
        try:
            peer = gate.peer_of(conn, address)
        except OSError:
            conn.close()
            return
        reason = gate.admit(peer)
        if reason is not None:
            self._refuse(conn, peer, reason)
            return
        conn.setblocking(False)
        guard = GuardedConnection(self._server(), peer, self)
        self._waiting_head[guard.inner] = guard
        task = asyncio.get_running_loop().create_task(self._attach(conn, guard))
        self._attaching.add(task)
        task.add_done_callback(self._attaching.discard)

    async def _attach(self, conn: socket.socket, guard: GuardedConnection) -> None:
        loop = asyncio.get_running_loop()
        try:
            await loop.connect_accepted_socket(lambda: guard, conn)
        except OSError:
            guard.closed()
            conn.close()

    def forget(self, guard: GuardedConnection) -> None:
        self._waiting_head.pop(guard.inner, None)
        self.gate.release(guard.peer)

    def _refuse(self, conn: socket.socket, peer: Peer, reason: str) -> None:
        self.gate.refused(reason)
        self._log_refused(reason=reason, peer=peer.key, open=self.gate.open)
        try:
            conn.setblocking(False)
            # What the caller sent already: closed unread, it would reset the
            # connection before the caller reads the answer.
            with contextlib.suppress(OSError):
                conn.recv(65536)
            conn.send(refusal(self.gate.refusal_message(reason)))
        except OSError:
            pass
        finally:
            conn.close()

    def head_too_late(self, guard: GuardedConnection) -> None:
        self.gate.refused("header_timeout")
        self._log_late(peer=guard.peer.key, timeout=self.gate.limits.header_timeout)

    def accept_failed(self, listener: str, exc: OSError, retry_in: float) -> None:
        self.gate.refused("accept_failed")
        self._log_failed(listener=listener, error=exc.strerror or str(exc), retry_in=retry_in)
