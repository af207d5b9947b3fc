"""Who may hold a connection: caps per caller and in all, with room kept for managers.

A caller is a peer: on the Unix socket the uid of the process that connected (its
peer credentials), on TCP the remote address (a token is only read with the request,
after the connection is taken). Managers on the Unix socket (root, the daemon's
user, ``[auth] managers``) have no cap of their own and may open ``managers_room``
connections beyond ``max_open``, so that a flood by others never locks them out.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge

from batchd.metrics.catalog import BY_NAME
from batchd.server.auth import user_name
from batchd.server.fdlimit import connection_budget
from batchd.site.tables import ConnectionsConfig

DEFAULT_MAX_OPEN = 1024
# Why a connection was refused or dropped (batchd_connections_refused_total's reasons).
REFUSAL_REASONS = ("peer_limit", "total_limit", "header_timeout", "accept_failed")
_NAMES_KEPT = 4096  # uid -> user name lookups remembered


class LimitError(ValueError):
    """Connection limits the daemon's descriptors cannot hold; names the key."""


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float
    idle_timeout: float
    max_open: int
    max_per_peer: int
    managers_room: int


def connection_limits(conf: ConnectionsConfig, nofile: int) -> ConnectionLimits:
    """The limits in force under an RLIMIT_NOFILE of ``nofile``: ``max_open`` unset is
    what the budget allows (at most DEFAULT_MAX_OPEN); set, it must fit."""
    budget = connection_budget(nofile)
    room = conf.managers_room
    if conf.max_open is None:
        max_open = min(DEFAULT_MAX_OPEN, budget - room)
        if max_open < 1:
            raise LimitError(
                f"connections.managers_room: {room} connections for managers leave none for "
                f"anyone else of the {budget} file descriptors connections may use (RLIMIT_NOFILE "
                f"{nofile}, minus those kept for the state, the spool and jobs): lower it or "
                "raise the limit (LimitNOFILE)"
            )
    else:
        max_open = conf.max_open
        if max_open + room > budget:
            raise LimitError(
                f"connections.max_open: {max_open} connections and managers_room {room} need "
                f"{max_open + room} file descriptors; connections may use {budget} (RLIMIT_NOFILE "
                f"{nofile}, minus those kept for the state, the spool and jobs): lower them or "
                "raise the limit (LimitNOFILE)"
            )
    return ConnectionLimits(
        header_timeout=conf.header_timeout,
        idle_timeout=conf.idle_timeout,
        max_open=max_open,
        max_per_peer=conf.max_per_peer,
        managers_room=room,
    )


@dataclass(frozen=True)
class Peer:
    """Who is at the other end of a connection: ``key`` counts its connections."""

    key: str
    manager: bool


class ConnectionGate:
    """Counts the open connections by peer and says which new one may stay.

    ``is_manager`` tells whether a user name has the manager role (read at each
    connection: a reload that changes ``[auth]`` applies at once).
    """

    def __init__(
        self,
        limits: ConnectionLimits,
        is_manager: Callable[[str], bool],
        registry: CollectorRegistry,
    ) -> None:
        self.limits = limits
        self._is_manager = is_manager
        self.open = 0
        self.by_peer: dict[str, int] = {}
        self._names: dict[int, str] = {}
        d = BY_NAME["batchd_connections_refused_total"]
        self._refused = Counter(d.name, d.help, d.labels, registry=registry)
        for reason in REFUSAL_REASONS:
            self._refused.labels(reason)
        d = BY_NAME["batchd_connections_open"]
        Gauge(d.name, d.help, registry=registry).set_function(lambda: self.open)

    def peer_of(self, conn: socket.socket, address: object) -> Peer:
        """The peer of a connection just accepted (``address``: what accept() gave)."""
        if conn.family == socket.AF_UNIX:
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            _pid, uid, _gid = struct.unpack("3i", creds)
            return Peer(f"uid {uid}", self._is_manager(self._name(uid)))
        host = address[0] if isinstance(address, tuple) else str(address)
        return Peer(f"address {host}", False)

    def _name(self, uid: int) -> str:
        name = self._names.get(uid)
        if name is None:
            if len(self._names) >= _NAMES_KEPT:
                self._names.clear()
            name = self._names[uid] = user_name(uid)
        return name

    def admit(self, peer: Peer) -> str | None:
        """Count a new connection of ``peer`` and None, or the reason it is refused."""
        limits = self.limits
        if peer.manager:
            if self.open >= limits.max_open + limits.managers_room:
                return "total_limit"
        else:
            if self.by_peer.get(peer.key, 0) >= limits.max_per_peer:
                return "peer_limit"
            if self.open >= limits.max_open:
                return "total_limit"
        self.open += 1
        self.by_peer[peer.key] = self.by_peer.get(peer.key, 0) + 1
        return None

    def release(self, peer: Peer) -> None:
        """A connection of ``peer`` that ``admit`` took has closed."""
        self.open -= 1
        left = self.by_peer[peer.key] - 1
        if left:
            self.by_peer[peer.key] = left
        else:
            del self.by_peer[peer.key]

    def refused(self, reason: str) -> None:
        self._refused.labels(reason).inc()

    def refusal_message(self, reason: str) -> str:
        if reason == "peer_limit":
            return (
                f"too many connections open from this caller (at most "
                f"{self.limits.max_per_peer}): close some and try again"
            )
        return (
            f"the daemon has too many connections open (at most {self.limits.max_open}): "
            "try again later"
        )
