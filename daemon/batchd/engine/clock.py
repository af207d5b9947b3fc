"""Clocks: the engine's only source of time.

A virtual clock jumps from event to event; a scaled clock maps wall time to
emulated time by a speed factor; a real clock is a scaled clock at speed 1.
Waiting is async and wakeable, so a submission does not sleep until the next
planned event.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Protocol


class Clock(Protocol):
    @property
    def start(self) -> int:
        """Emulated time when the clock started."""
        ...

    def now(self) -> int:
        """Emulated time in integer seconds."""
        ...

    async def sleep_until(self, when: int | None, wake: asyncio.Event) -> None:
        """Return at emulated time ``when`` (never if None) or as soon as ``wake`` is set."""
        ...


class VirtualClock:
    """Emulated time that moves only when told: replay as fast as possible."""

    def __init__(self, start: int = 0) -> None:
        self.start = start
        self._now = start

    def now(self) -> int:
        return self._now

    def set(self, when: int) -> None:
        if when < self._now:
            raise ValueError(f"virtual time cannot go back from {self._now} to {when}")
        self._now = when

    async def sleep_until(self, when: int | None, wake: asyncio.Event) -> None:
        if when is None:
            await wake.wait()
            return
        self.set(max(when, self._now))
        await asyncio.sleep(0)


class ScaledClock:
    """Emulated time = start + (wall - wall_at_start) * speed."""

    def __init__(
        self,
        speed: float = 1.0,
        start: int = 0,
        wall: Callable[[], float] = time.monotonic,
    ) -> None:
        if speed <= 0:
            raise ValueError(f"clock speed must be > 0, got {speed}")
        self.speed = speed
        self.start = start
        self._wall = wall
        self._wall_start = wall()

    def now(self) -> int:
        return self.start + int((self._wall() - self._wall_start) * self.speed)

    def wall_delay(self, when: int) -> float:
        """Wall seconds until emulated time ``when``."""
        target = self._wall_start + (when - self.start) / self.speed
        return max(0.0, target - self._wall())

    async def sleep_until(self, when: int | None, wake: asyncio.Event) -> None:
        delay = None if when is None else self.wall_delay(when)
        if delay == 0.0:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), timeout=delay)


class RealClock(ScaledClock):
    """Wall-clock time in seconds since the epoch, at speed 1."""

    def __init__(self) -> None:
        super().__init__(speed=1.0, start=int(time.time()))
