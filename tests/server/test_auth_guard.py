"""Failed token authentications: logged without the header's text, at a bounded rate,
and slowed per peer address (a delay that grows, then 429), while callers from other
addresses go on at once."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from structlog.testing import capture_logs

from api_helpers import TOKENS, new_service
from batchd.server.app import create_app
from batchd.server.auth import AuthFailure
from batchd.server.authguard import AuthGuard, guarded_token_user
from batchd.server.errors import ApiError
from batchd.server.ratelog import RateLimitedLog

GOOD = {"Authorization": f"Bearer {TOKENS['alice']}"}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def unknown() -> AuthFailure:
    return AuthFailure("unknown_token", 40, "the bearer token is not valid")


def test_the_delay_grows_with_the_failures_and_is_capped() -> None:
    clock = Clock()
    guard = AuthGuard(free=3, delay=0.25, max_delay=4.0, budget=30, window=60, clock=clock)
    with capture_logs():
        delays = [guard.failed("10.0.0.1", unknown()) for _ in range(10)]
    assert delays == [0, 0, 0, 0.25, 0.5, 1, 2, 4, 4, 4]
    assert guard.retry_after("10.0.0.1") is None
    assert guard.failed("10.0.0.2", unknown()) == 0  # each address on its own


def test_past_the_budget_an_address_waits_until_its_failures_age() -> None:
    clock = Clock()
    guard = AuthGuard(free=0, delay=0, budget=5, window=60, clock=clock)
    with capture_logs():
        for _ in range(5):
            guard.failed("10.0.0.1", unknown())
            clock.now += 10
    # failures at 100, 110, ..., 140; now 150: the first leaves the window at 160
    assert guard.retry_after("10.0.0.1") == pytest.approx(10)
    assert guard.retry_after("10.0.0.2") is None
    clock.now = 160.5
    assert guard.retry_after("10.0.0.1") is None


def test_the_addresses_it_remembers_are_bounded() -> None:
    guard = AuthGuard(max_peers=3, clock=Clock())
    with capture_logs():
        for i in range(10):
            guard.failed(f"10.0.0.{i}", unknown())
    assert list(guard.failures) == ["10.0.0.7", "10.0.0.8", "10.0.0.9"]


def test_the_log_is_bounded_and_says_how_much_it_left_out() -> None:
    clock = Clock()
    limited = RateLimitedLog(limit=3, period=10, clock=clock)
    with capture_logs() as logs:
        sent = [limited.warning("auth_failed", n=i) for i in range(10)]
        clock.now += 10
        limited.warning("auth_failed", n=10)
    assert sent == [True] * 3 + [False] * 7
    assert [e["n"] for e in logs] == [0, 1, 2, 10]
    assert logs[-1]["suppressed"] == 7 and "suppressed" not in logs[0]


async def _client(local: str) -> aiohttp.ClientSession:
    """A session whose one keep-alive connection comes from address ``local``."""
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=1, local_addr=(local, 0), force_close=False)
    )


async def test_guesses_per_connection_are_bounded_and_others_go_on(tmp_path: Path) -> None:
    """Over one connection for 2 s with the daemon's defaults: at most 7 guesses (3 free,
    then waits of 0.25, 0.5, 1 and 2 s, the last sent before the 2 s are over); while
    one waits, a correct token from another address is answered at once."""
    app = create_app(new_service(tmp_path / "s.db"), {t: u for u, t in TOKENS.items()})
    async with TestServer(app, host="127.0.0.1") as server:
        url = str(server.make_url("/server"))
        guesser = await _client("127.0.0.1")
        other = await _client("127.0.0.2")
        try:
            checked = 0
            start = time.monotonic()
            while time.monotonic() - start < 2.0:
                async with guesser.get(url, headers={"Authorization": "Bearer xxx"}) as resp:
                    assert resp.status == 401
                    checked += 1
            assert 4 <= checked <= 7
            pending = asyncio.ensure_future(guesser.get(url, headers={"Authorization": "Bearer y"}))
            await asyncio.sleep(0.05)  # the guess now waits its 2 s in the daemon
            began = time.monotonic()
            async with other.get(url, headers=GOOD) as resp:
                assert resp.status == 200
            assert time.monotonic() - began < 0.5
            assert not pending.done()
            (await pending).release()
        finally:
            await guesser.close()
            await other.close()


async def test_past_the_budget_even_a_correct_token_waits(tmp_path: Path) -> None:
    guard = AuthGuard(free=0, delay=0, budget=4, window=60)
    app = create_app(new_service(tmp_path / "s.db"), {t: u for u, t in TOKENS.items()}, guard)
    async with TestServer(app, host="127.0.0.1") as server:
        url = str(server.make_url("/server"))
        session = await _client("127.0.0.1")
        other = await _client("127.0.0.2")
        try:
            with capture_logs() as logs:
                for _ in range(4):
                    async with session.get(url, headers={"Authorization": "Bearer no"}) as r:
                        assert r.status == 401
                async with session.get(url, headers=GOOD) as resp:
                    assert resp.status == 429
                    assert int(resp.headers["Retry-After"]) == 60
                    body = await resp.json()
                    assert body["error"] == "too_many_requests"
                    assert "127.0.0.1" in body["message"]
                async with other.get(url, headers=GOOD) as resp:
                    assert resp.status == 200
            failed = [e for e in logs if e["event"] == "auth_failed"]
            assert [e["failures"] for e in failed] == [1, 2, 3, 4]
            assert {(e["peer"], e["reason"], e["header_length"]) for e in failed} == {
                ("127.0.0.1", "unknown_token", 9)
            }
            assert [e["event"] for e in logs][-1] == "auth_blocked"
        finally:
            await session.close()
            await other.close()


async def test_a_token_of_any_bytes_is_refused_not_a_failure(tmp_path: Path) -> None:
    """Tokens that are not ASCII used to fail the comparison itself (a 500)."""
    app = create_app(
        new_service(tmp_path / "s.db"), {"tökén-0123456789abcdef": "alice"}, AuthGuard(delay=0)
    )
    async with TestServer(app, host="127.0.0.1") as server:
        url = str(server.make_url("/server"))
        async with aiohttp.ClientSession() as session:
            for given in ("Bearer tökén-0123456789abcdeX", "Bearer é", "Bearer \u2603x"):
                async with session.get(url, headers={"Authorization": given}) as resp:
                    assert resp.status == 401, given
            good = {"Authorization": "Bearer tökén-0123456789abcdef"}
            async with session.get(url, headers=good) as resp:
                assert resp.status == 200


def test_a_refusal_says_when_to_try_again_in_whole_seconds_and_is_logged() -> None:
    guard = AuthGuard(budget=5, clock=Clock())
    with capture_logs() as logs:
        soon = guard.refused("10.0.0.1", 0.2)
        later = guard.refused("10.0.0.1", 7.1)
    assert (soon.status, soon.code, soon.headers) == (
        429,
        "too_many_requests",
        {"Retry-After": "1"},
    )
    assert soon.message == "too many failed authentications from 10.0.0.1; try again in 1 s"
    assert later.headers == {"Retry-After": "8"}
    assert [(e["event"], e["peer"], e["failures"], e["retry_after"]) for e in logs] == [
        ("auth_blocked", "10.0.0.1", 5, 0.2),
        ("auth_blocked", "10.0.0.1", 5, 7.1),
    ]


def test_the_defaults_are_three_free_then_a_quarter_second_doubling_to_four() -> None:
    clock = Clock()
    guard = AuthGuard(clock=clock)
    with capture_logs():
        delays = [guard.failed("10.0.0.1", unknown()) for _ in range(29)]
        assert delays[:9] == [0, 0, 0, 0.25, 0.5, 1, 2, 4, 4]
        assert guard.retry_after("10.0.0.1") is None  # 29 of a budget of 30
        guard.failed("10.0.0.1", unknown())
        clock.now += 59.5
        assert guard.retry_after("10.0.0.1") == pytest.approx(0.5)  # a window of 60 s
        for i in range(10_000):
            guard.failed(f"10.1.{i // 256}.{i % 256}", unknown())
    assert len(guard.failures) == 10_000  # the first address was forgotten
    assert "10.0.0.1" not in guard.failures and "10.1.0.0" in guard.failures


def test_a_failure_leaves_the_window_exactly_its_length_later() -> None:
    clock = Clock()
    guard = AuthGuard(free=0, delay=0, budget=1, window=60, clock=clock)
    with capture_logs():
        guard.failed("10.0.0.1", unknown())
    clock.now += 59
    assert guard.retry_after("10.0.0.1") == pytest.approx(1)
    clock.now += 1
    assert guard.retry_after("10.0.0.1") is None
    assert "10.0.0.1" not in guard.failures


def test_a_failure_is_logged_with_its_delay_to_the_log_given() -> None:
    clock = Clock()
    limited = RateLimitedLog(limit=1, period=10, clock=clock)
    guard = AuthGuard(free=0, delay=0.5, clock=clock, log=limited)
    assert guard.log is limited
    with capture_logs() as logs:
        guard.failed("10.0.0.1", unknown())
        guard.failed("10.0.0.1", unknown())  # over the log's limit: left out
    assert logs == [
        {
            "event": "auth_failed",
            "log_level": "warning",
            "peer": "10.0.0.1",
            "reason": "unknown_token",
            "header_length": 40,
            "failures": 1,
            "delay": 0.5,
        }
    ]


class Peerless:
    """A request as aiohttp gives it when the peer's address is unknown."""

    remote = None
    headers: dict[str, str] = {}


async def test_an_unknown_address_is_counted_as_unknown_and_waits_its_delay() -> None:
    guard = AuthGuard(free=0, delay=0.3, budget=1, clock=Clock())
    began = time.monotonic()
    with capture_logs(), pytest.raises(AuthFailure):
        await guarded_token_user(Peerless(), {}, guard)  # type: ignore[arg-type]
    assert time.monotonic() - began >= 0.25
    with pytest.raises(ApiError) as refused:
        await guarded_token_user(Peerless(), {}, guard)  # type: ignore[arg-type]
    assert refused.value.message.startswith("too many failed authentications from unknown;")
