"""A change of policy waits, off the event loop, for the kernels it needs.

The service's kernel warmer is replaced by one whose units the test makes ready: the
change waits for them while other requests are answered, then takes effect; a unit that
could not be built refuses the change; a caller who may not change the scheduler is
refused before anything is asked for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from concurrent.futures import Future
from pathlib import Path

from api_helpers import serve
from batchd.server.service.kernels import KernelWarmer


class HeldWarmer(KernelWarmer):
    """Units stay loading until the test resolves their futures."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[list[str]] = []
        self.futures: list[Future[None]] = []

    def ready(self, units: Iterable[str]) -> list[Future[None]]:
        self.asked.append(list(units))
        future: Future[None] = Future()
        self.futures.append(future)
        return [future]


async def test_a_switch_waits_for_its_kernels_and_the_api_answers_meanwhile(
    tmp_path: Path,
) -> None:
    async with serve(tmp_path) as api:
        warmer = api.svc.kernels = HeldWarmer()
        switch = asyncio.create_task(api.call("boss", "PATCH", "/scheduler", {"policy": "ga"}))
        for _ in range(50):
            await asyncio.sleep(0.01)
            if warmer.futures:
                break
        assert warmer.asked == [["profile", "ga"]]
        assert not switch.done()
        assert (await api.call(None, "GET", "/healthz"))["status"] == "ok"
        assert (await api.call("alice", "GET", "/scheduler"))["policy"] == "fcfs-easy"
        warmer.futures[0].set_result(None)
        assert (await asyncio.wait_for(switch, 10))["policy"] == "ga"
        assert (await api.call("alice", "GET", "/scheduler"))["policy"] == "ga"


async def test_kernels_that_cannot_be_built_refuse_the_switch(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        warmer = api.svc.kernels = HeldWarmer()
        switch = asyncio.create_task(
            api.error(
                "boss",
                "PATCH",
                "/scheduler",
                {"policy": "moldable-iterative"},
                status=503,
                code="unavailable",
                says=("could not be built", "LLVM ran out", "nothing was changed"),
            )
        )
        while not warmer.futures:
            await asyncio.sleep(0.01)
        warmer.futures[0].set_exception(RuntimeError("LLVM ran out of memory"))
        await asyncio.wait_for(switch, 10)
        assert (await api.call("alice", "GET", "/scheduler"))["policy"] == "fcfs-easy"


async def test_who_may_not_switch_is_refused_before_anything_compiles(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        warmer = api.svc.kernels = HeldWarmer()
        await api.error(
            "alice", "PATCH", "/scheduler", {"policy": "ga"}, status=403, code="forbidden"
        )
        assert warmer.asked == []
