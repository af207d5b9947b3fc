"""The listeners' parts on their own: the gate's counts, the limits' checks, the accept loop."""

from __future__ import annotations

import asyncio
import errno
import socket
from pathlib import Path

import pytest
from aiohttp import web
from prometheus_client import CollectorRegistry
from structlog.testing import capture_logs

from batchd.server.connlimit import (
    DEFAULT_MAX_OPEN,
    ConnectionGate,
    ConnectionLimits,
    LimitError,
    Peer,
    connection_limits,
)
from batchd.server.fdlimit import connection_budget
from batchd.server.listener import BACKOFF_MAX, GuardedSite, Listeners
from batchd.site.config import ConfigError, load_site
from batchd.site.tables import ConnectionsConfig

LIMITS = ConnectionLimits(
    header_timeout=1.0, idle_timeout=5.0, max_open=4, max_per_peer=2, managers_room=2
)
ALICE = Peer("uid 1001", manager=False)
BOB = Peer("uid 1002", manager=False)
ROOT = Peer("uid 0", manager=True)


def gate(registry: CollectorRegistry | None = None) -> ConnectionGate:
    return ConnectionGate(LIMITS, lambda user: user == "root", registry or CollectorRegistry())


def test_a_peer_stops_at_its_cap_and_all_at_the_total() -> None:
    g = gate()
    assert [g.admit(ALICE) for _ in range(3)] == [None, None, "peer_limit"]
    assert [g.admit(BOB) for _ in range(3)] == [None, None, "peer_limit"]
    assert g.admit(Peer("address 127.0.0.1", manager=False)) == "total_limit"
    # A manager has room beyond the total, and no cap of their own.
    assert [g.admit(ROOT) for _ in range(3)] == [None, None, "total_limit"]
    g.release(ALICE)
    g.release(ROOT)
    assert g.admit(BOB) == "peer_limit"
    assert g.admit(ALICE) == "total_limit"  # managers' connections count in the total
    g.release(ROOT)
    assert g.admit(ALICE) is None
    assert g.open == 4
    assert g.by_peer == {ALICE.key: 2, BOB.key: 2}


def test_refusals_are_counted_by_reason() -> None:
    registry = CollectorRegistry()
    g = gate(registry)
    g.refused("peer_limit")
    g.refused("peer_limit")
    value = registry.get_sample_value
    assert value("batchd_connections_refused_total", {"reason": "peer_limit"}) == 2
    assert value("batchd_connections_refused_total", {"reason": "header_timeout"}) == 0
    g.admit(ALICE)
    assert value("batchd_connections_open", {}) == 1


def test_limits_fit_the_descriptors() -> None:
    assert connection_budget(1024) == 768
    assert connection_budget(256) == 128
    unset = connection_limits(ConnectionsConfig(), 1 << 20)
    assert unset.max_open == DEFAULT_MAX_OPEN
    assert connection_limits(ConnectionsConfig(), 256).max_open == 128 - 16
    with pytest.raises(LimitError, match=r"connections.max_open: 200 .*\(RLIMIT_NOFILE 256"):
        connection_limits(ConnectionsConfig(max_open=200), 256)
    with pytest.raises(LimitError, match=r"connections.managers_room: 128 .*leave none"):
        connection_limits(ConnectionsConfig(managers_room=128), 256)


class OutOfDescriptors(socket.socket):
    """A listening socket whose accept() always fails as with no descriptor left."""

    calls = 0

    def accept(self) -> tuple[socket.socket, object]:
        type(self).calls += 1
        raise OSError(errno.EMFILE, "Too many open files")


async def test_failed_accepts_rest_the_listener_and_log_once_a_second(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    sock = OutOfDescriptors(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.listen(8)
    runner = web.AppRunner(web.Application())
    await runner.setup()
    registry = CollectorRegistry()
    listeners = Listeners(runner, gate(registry))
    client = socket.socket(socket.AF_UNIX)
    client.setblocking(False)
    try:
        with capture_logs() as logs:
            await GuardedSite(runner, sock, listeners).start()
            client.connect(str(path))  # waits in the backlog: the socket stays readable
            await asyncio.sleep(2.0)
    finally:
        client.close()
        await runner.cleanup()
    # Rests of 0.05, 0.1, 0.2, 0.4, 0.8, 1, ... s: a handful of tries in 2 s, not a
    # spin; asyncio's loop of Python 3.11 logged each of 100 tries a wake-up.
    assert 4 <= OutOfDescriptors.calls <= 7
    failed = [e for e in logs if e["event"] == "accept_failed"]
    assert 1 <= len(failed) <= 3
    assert failed[0]["error"] == "Too many open files"
    assert sum(e["suppressed"] for e in failed[1:]) <= OutOfDescriptors.calls
    assert failed[-1]["retry_in"] <= BACKOFF_MAX
    counted = registry.get_sample_value(
        "batchd_connections_refused_total", {"reason": "accept_failed"}
    )
    assert counted == OutOfDescriptors.calls


def test_a_bad_limit_in_the_site_file_names_its_key(tmp_path: Path) -> None:
    path = tmp_path / "site.toml"
    path.write_text('[[machine]]\nname = "m"\nnodes = 2\n[connections]\nheader_timeout = 0\n')
    with pytest.raises(
        ConfigError, match=r"site.toml: connections.header_timeout: .*greater than 0"
    ):
        load_site(path)
    path.write_text('[[machine]]\nname = "m"\nnodes = 2\n[connections]\nmax_per_user = 3\n')
    with pytest.raises(ConfigError, match=r"connections.max_per_user: not a key of this table"):
        load_site(path)
