"""The daemon's compiled scheduling kernels, compiled and loaded off the event loop.

A unit of kernels (``batchd.engine.warm``) that numba's cache does not hold is compiled
in a child process (``python -m batchd.engine.warm UNIT``), so that a cold compile of
seconds never holds the daemon's interpreter; it is then loaded from the cache into the
daemon by running the unit's warm-up on a worker thread (each thread switch gives the
loop its turn). Before it serves, the daemon makes the units of the policies it starts
with ready (``prepare``); once it serves, it compiles the others into the cache in the
background (``compile_ahead``), one child at a time. A change of policy whose units are
not loaded yet waits for them (``ready``) while the loop answers other requests, and
then runs: no scheduling pass ever compiles.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from typing import Any

import structlog

from batchd.engine import warm
from batchd.server.errors import unavailable

log = structlog.get_logger("batchd")
CHILD_TIMEOUT = 600.0  # seconds a child may compile one unit (a cold ga unit takes ~10-25)


def starting_units(policy: str, meta: Mapping[str, Any], grid: bool) -> list[str]:
    """The units the daemon runs with from its start: the site's policy and those a
    restored state names; a grid site's local policies are any, so every unit."""
    if grid:
        return list(warm.UNITS)
    names = {policy}
    if isinstance(meta.get("policy"), str):
        names.add(meta["policy"])
    for entry in (meta.get("policies") or {}).values():
        if isinstance(entry, Mapping) and isinstance(entry.get("policy"), str):
            names.add(entry["policy"])
    return warm.units_for(names)


async def loaded(futures: Iterable[Future[None]]) -> None:
    """Wait, off the loop, for units being loaded; 503 if one could not be built."""
    try:
        for future in futures:
            await asyncio.wrap_future(future)
    except Exception as exc:
        raise unavailable(
            f"the compiled scheduling kernels of this policy could not be built ({exc}); "
            "nothing was changed; the daemon's log has the details"
        ) from None


class KernelWarmer:
    """Compiles units in a child process and loads them on one worker thread."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._loads: deque[str] = deque()  # units a change waits for, loaded in order
        self._compiles: deque[str] = deque()  # units compiled ahead, nobody waiting
        self._futures: dict[str, Future[None]] = {}  # units asked to load, by unit
        self._child: subprocess.Popen[bytes] | None = None
        self._ahead: tuple[str, subprocess.Popen[bytes]] | None = None  # compiling ahead
        self._thread: threading.Thread | None = None
        self._closed = False
        self.enabled = warm.jit_enabled()

    # -- before serving -----------------------------------------------------------------
    def prepare(self, units: Iterable[str]) -> None:
        """Make ``units`` ready now, on the caller's thread (the daemon before it serves)."""
        for unit in units:
            if self.enabled and unit not in self._futures:
                future: Future[None] = Future()
                self._futures[unit] = future
                self._make_ready(unit, future)
                future.result()

    # -- while serving ------------------------------------------------------------------
    def compile_ahead(self, units: Iterable[str] = warm.UNITS) -> None:
        """Compile into numba's cache, in the background, the units nobody asked for yet."""
        if not self.enabled:
            return
        with self._lock:
            self._compiles.extend(u for u in units if u not in self._futures)
            self._start()

    def ready(self, units: Iterable[str]) -> list[Future[None]]:
        """Futures of ``units`` being loaded (none if they all are): each is loaded once,
        those asked for ahead of those only compiled ahead, whose child (compiling
        another unit) gives way and is started again later."""
        if not self.enabled:
            return []
        waiting = []
        with self._lock:
            for unit in units:
                future = self._futures.get(unit)
                if future is None:
                    self._futures[unit] = future = Future()
                    self._loads.append(unit)
                if not future.done():
                    waiting.append(future)
            ahead = self._ahead
            if self._loads and ahead is not None and ahead[0] not in self._futures:
                self._compiles.appendleft(ahead[0])
                self._give_way(ahead[1])
                self._ahead = None
            self._start()
        return waiting

    def close(self) -> None:
        """Stop: the child compiling (if any) is killed, the worker ends after its unit."""
        with self._lock:
            self._closed = True
            self._lock.notify_all()
            if self._child is not None:
                self._give_way(self._child)

    @staticmethod
    def _give_way(child: subprocess.Popen[bytes]) -> None:
        if child.poll() is None:
            child.kill()

    # -- the worker ---------------------------------------------------------------------
    def _start(self) -> None:
        self._lock.notify_all()
        if self._thread is None and not self._closed:
            self._thread = threading.Thread(target=self._run, name="batchd-kernels", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not (self._closed or self._loads or self._compiles):
                    self._lock.wait()
                if self._closed:
                    return
                if self._loads:
                    unit, load = self._loads.popleft(), True
                else:
                    unit, load = self._compiles.popleft(), False
                    if unit in self._futures:
                        continue  # asked for meanwhile: it loads (and compiles) then
            if load:
                self._make_ready(unit, self._futures[unit])
            else:
                self._compile(unit, ahead=True)

    def _make_ready(self, unit: str, future: Future[None]) -> None:
        self._compile(unit, ahead=False)
        if self._closed:
            future.cancel()
            return
        try:
            seconds = warm.warm(unit)
        except Exception as exc:
            log.exception("kernels_failed", unit=unit)
            future.set_exception(exc)
            return
        log.info("kernels_loaded", unit=unit, seconds=round(seconds, 3))
        future.set_result(None)

    def _compile(self, unit: str, *, ahead: bool) -> None:
        """Compile ``unit`` in a child process unless numba's cache holds it; a failure
        is logged, and the unit is compiled where it is loaded. Compiled ``ahead`` (nobody
        waits), the child runs at a lower priority and gives way to a unit asked for."""
        if warm.cached(unit):
            return
        began = time.perf_counter()
        # -P: the daemon's working directory is not searched for modules.
        argv = [sys.executable, "-P", "-m", "batchd.engine.warm", unit]
        if ahead:
            argv.insert(4, "--nice")
        with self._lock:
            if self._closed or (ahead and self._loads):
                if ahead and not self._closed:
                    self._compiles.appendleft(unit)
                return
            self._child = child = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            self._ahead = (unit, child) if ahead else None
        try:
            _, err = child.communicate(timeout=CHILD_TIMEOUT)
        except subprocess.TimeoutExpired:
            child.kill()
            _, err = child.communicate()
        finally:
            with self._lock:
                self._child = self._ahead = None
        seconds = round(time.perf_counter() - began, 3)
        if child.returncode == 0:
            log.info("kernels_compiled", unit=unit, seconds=seconds)
        elif ahead and child.returncode == -signal.SIGKILL:
            log.info("kernels_compile_deferred", unit=unit)
        elif not self._closed:
            tail = err.decode(errors="replace").strip().splitlines()[-1:] or [""]
            log.warning("kernels_compile_failed", unit=unit, code=child.returncode, error=tail[0])
