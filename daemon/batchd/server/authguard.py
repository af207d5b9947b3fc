"""Failed token authentications on TCP, per peer address: logged (at a bounded rate,
never with the header's text), and made slow to repeat.

Each failure of the last ``window`` seconds counts against the address it came from.
After ``free`` of them (a mistyped token), each further failure is answered only after
a delay that doubles from ``delay`` up to ``max_delay``; once ``budget`` failures are
counted, the address is answered 429 at once, its token unread, until the oldest of
them leaves the window. The delay is an ``asyncio.sleep``: other callers go on.
A success does not clear an address's failures.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from aiohttp import web

from batchd.server.auth import AuthFailure, token_user
from batchd.server.errors import ApiError
from batchd.server.ratelog import RateLimitedLog


class AuthGuard:
    def __init__(
        self,
        *,
        free: int = 3,
        delay: float = 0.25,
        max_delay: float = 4.0,
        budget: int = 30,
        window: float = 60.0,
        max_peers: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
        log: RateLimitedLog | None = None,
    ) -> None:
        self.free = free
        self.delay = delay
        self.max_delay = max_delay
        self.budget = budget
        self.window = window
        self.max_peers = max_peers
        self.clock = clock
        self.log = log if log is not None else RateLimitedLog(clock=clock)
        # peer -> times of its failures in the window, oldest first; least recent peer first
        self.failures: OrderedDict[str, deque[float]] = OrderedDict()

    def _recent(self, peer: str, now: float) -> deque[float] | None:
        times = self.failures.get(peer)
        if times is None:
            return None
        while times and times[0] <= now - self.window:
            times.popleft()
        if not times:
            del self.failures[peer]
            return None
        return times

    def retry_after(self, peer: str) -> float | None:
        """Seconds until ``peer`` may try again, when it has spent its budget; else None."""
        now = self.clock()
        times = self._recent(peer, now)
        if times is None or len(times) < self.budget:
            return None
        return times[len(times) - self.budget] + self.window - now

    def failed(self, peer: str, failure: AuthFailure) -> float:
        """Count a failure of ``peer`` and log it; the delay (seconds) its answer waits."""
        now = self.clock()
        times = self._recent(peer, now)
        if times is None:
            times = self.failures[peer] = deque()
            if len(self.failures) > self.max_peers:
                self.failures.popitem(last=False)
        self.failures.move_to_end(peer)
        times.append(now)
        count = len(times)
        excess = count - self.free
        wait = 0.0 if excess <= 0 else min(self.delay * 2 ** (excess - 1), self.max_delay)
        self.log.warning(
            "auth_failed",
            peer=peer,
            reason=failure.reason,
            header_length=failure.length,
            failures=count,
            delay=wait,
        )
        return wait

    def refused(self, peer: str, wait: float) -> ApiError:
        self.log.warning("auth_blocked", peer=peer, failures=self.budget, retry_after=wait)
        seconds = max(math.ceil(wait), 1)
        return ApiError(
            429,
            "too_many_requests",
            f"too many failed authentications from {peer}; try again in {seconds} s",
            headers={"Retry-After": str(seconds)},
        )


async def guarded_token_user(
    request: web.Request, tokens: dict[bytes, str], guard: AuthGuard
) -> str:
    """The user of the request's bearer token; a refusal costs its address (AuthGuard)."""
    peer = request.remote or "unknown"
    wait = guard.retry_after(peer)
    if wait is not None:
        raise guard.refused(peer, wait)
    try:
        return token_user(request, tokens)
    except AuthFailure as failure:
        delay = guard.failed(peer, failure)
        if delay > 0:
            await asyncio.sleep(delay)
        raise
