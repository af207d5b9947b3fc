"""Shared pieces of the HTTP API tests: a site, a running app on a virtual clock, a caller.

The app is served by aiohttp's TestServer on TCP, so every request carries a bearer token.
Times in the tests are offsets from ``T0`` on the emulated clock.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from batchd.engine.clock import VirtualClock
from batchd.server.app import create_app
from batchd.server.authguard import AuthGuard
from batchd.server.schema_types import ErrorOut
from batchd.server.schemas import JobList, JobOut
from batchd.server.service import BatchService
from batchd.server.store import Store
from batchd.site.config import SiteConfig

T0 = 1_000_000
NODES = 8

TOKENS = {
    "alice": "alice-token-0123456789",
    "bob": "bob-token-0123456789",
    "oper": "oper-token-0123456789",
    "boss": "boss-token-0123456789",
}


def site_config(**server: Any) -> SiteConfig:
    """The 8-node test site; ``server`` overrides keys of the [server] table. Its users
    see each other's jobs (query_other_jobs), as the tests of the views look at any job
    as alice."""
    return SiteConfig.model_validate(
        {
            "machine": [{"name": "mini", "nodes": NODES}],
            "server": {"policy": "fcfs-easy", "query_other_jobs": True, **server},
            "auth": {"operators": ["oper"], "managers": ["boss"]},
            "queue": [
                {"name": "workq", "default_walltime": 3600},
                {"name": "small", "max_nodes": 2, "max_walltime": "01:00:00"},
            ],
        }
    )


def resources_site(shared: bool = False) -> SiteConfig:
    """An 8-node site of 4 cores and 8 GB per node, whole or ``shared``, with resources of
    the site's own: per node (ngpus, cpu_type) and per job (licenses, scratch)."""
    return SiteConfig.model_validate(
        {
            "machine": [
                {
                    "name": "mini",
                    "nodes": 8,
                    "cores_per_node": 4,
                    "mem_per_node": "8gb",
                    "shared": shared,
                    "resources": {"ngpus": 2, "cpu_type": "x86"},
                }
            ],
            "server": {"policy": "fcfs-easy"},
            "auth": {"managers": ["boss"]},
            "queue": [{"name": "workq", "default_walltime": 3600}],
            "resource": [
                {"name": "ngpus", "type": "long", "consumable": True},
                {"name": "cpu_type", "type": "string"},
                {"name": "licenses", "type": "long", "consumable": True, "per": "job",
                 "available": 10},
                {"name": "scratch", "type": "size", "per": "job"},
            ],
        }
    )  # fmt: skip


def new_service(path: Path, site: SiteConfig | None = None, start: int = T0) -> BatchService:
    """A first start on an empty store, as ``batchd serve`` does it."""
    clock = VirtualClock(start)
    svc = BatchService(site or site_config(), clock, Store(path), daemon_user="batchd")
    svc.save_meta(started=svc.now)
    svc.commit()
    return svc


def headers(who: str | None) -> dict[str, str]:
    return {} if who is None else {"Authorization": f"Bearer {TOKENS[who]}"}


def jid(seq: int) -> str:
    return f"{seq}.mini"


def node(i: int) -> str:
    """The name of node ``i`` (1-based, as PBS numbers them): node001 .. node008."""
    return f"node{i:03d}"


def nodes(*numbers: int) -> list[str]:
    return [node(i) for i in numbers]


class Api:
    """A client of the test app plus the clock and service behind it."""

    def __init__(self, client: TestClient, svc: BatchService) -> None:
        self.client = client
        self.svc = svc
        self.clock: VirtualClock = svc.clock  # type: ignore[assignment]

    def at(self, offset: int) -> None:
        """Move the emulated clock to ``T0 + offset``; the next request catches the engine up."""
        self.clock.set(T0 + offset)

    async def raw(
        self,
        who: str | None,
        method: str,
        path: str,
        json: Any = None,
        *,
        data: bytes | str | None = None,
    ) -> tuple[int, Any]:
        h = headers(who)
        if data is not None:
            h.setdefault("Content-Type", "application/json")
            resp = await self.client.request(method, path, data=data, headers=h)
        else:
            resp = await self.client.request(method, path, json=json, headers=h)
        if resp.content_type == "application/json":
            body = await resp.json()
        else:
            body = await resp.text()
        return resp.status, body

    async def call(
        self, who: str | None, method: str, path: str, json: Any = None, *, status: int = 200
    ) -> Any:
        got, body = await self.raw(who, method, path, json)
        assert got == status, f"{method} {path}: {got} {body}"
        return body

    async def error(
        self,
        who: str | None,
        method: str,
        path: str,
        json: Any = None,
        *,
        status: int,
        code: str,
        says: str | tuple[str, ...] = (),
        data: bytes | str | None = None,
    ) -> str:
        """A refusal: its status, the JSON error body and words its message must contain."""
        got, body = await self.raw(who, method, path, json, data=data)
        assert got == status, f"{method} {path}: expected {status}, got {got} {body}"
        assert isinstance(body, dict), body
        err = ErrorOut.model_validate(body)
        assert err.error == code, body
        for word in (says,) if isinstance(says, str) else says:
            assert word in err.message, f"{word!r} not in {err.message!r}"
        return err.message

    async def submit(self, who: str = "alice", *, runtime: int | None = None, **fields: Any) -> Any:
        """qsub: 201 and a valid JobOut; ``runtime`` sets BATCHD_RUNTIME."""
        if runtime is not None:
            fields.setdefault("variables", {})["BATCHD_RUNTIME"] = str(runtime)
        body = await self.call(who, "POST", "/jobs", fields, status=201)
        JobOut.model_validate(body)
        return body

    async def job(self, seq: int | str, who: str = "alice") -> Any:
        body = await self.call(who, "GET", f"/jobs/{seq}")
        JobOut.model_validate(body)
        return body

    async def jobs(self, query: str = "history=true", who: str = "alice") -> list[Any]:
        body = await self.call(who, "GET", f"/jobs?{query}" if query else "/jobs")
        JobList.model_validate(body)
        return body["jobs"]

    async def state(self) -> dict[str, Any]:
        """Everything a refused request must leave alone (the clock's now aside)."""
        jobs = await self.jobs()
        nodes = await self.call("alice", "GET", "/nodes")
        resvs = await self.call("alice", "GET", "/reservations")
        sched = await self.call("alice", "GET", "/scheduler")
        return {
            "jobs": jobs,
            "nodes": nodes["nodes"],
            "reservations": resvs["reservations"],
            "policy": (sched["policy"], sched["params"], sched["switches"]),
            "seq": self.svc.seq,
        }

    async def node_states(self) -> dict[str, str]:
        body = await self.call("alice", "GET", "/nodes")
        return {n["name"]: n["state"] for n in body["nodes"]}


@contextlib.asynccontextmanager
async def start_api(svc: BatchService) -> AsyncIterator[Api]:
    """Serve ``svc`` over TCP; its store is closed afterwards."""
    # Failed tokens are not slowed down here (the tests of the guard are): only counted.
    tokens = {token: user for user, token in TOKENS.items()}
    app = create_app(svc, tokens=tokens, guard=AuthGuard(delay=0))
    try:
        async with TestClient(TestServer(app)) as client:
            yield Api(client, svc)
    finally:
        if svc.store is not None:
            svc.store.close()


@contextlib.asynccontextmanager
async def serve(tmp_path: Path, site: SiteConfig | None = None) -> AsyncIterator[Api]:
    """A fresh service on ``site`` (the default test site) at T0, served over TCP."""
    async with start_api(new_service(tmp_path / "state.db", site)) as api:
        yield api


def widths_at(jobs: list[dict[str, Any]], t: int) -> int:
    """Nodes held at absolute time ``t`` by jobs that ran (stime <= t < end_time)."""
    total = 0
    for j in jobs:
        if j["stime"] is None:
            continue
        end = j["end_time"] if j["end_time"] is not None else 1 << 62
        if j["stime"] <= t < end:
            total += j["nodes"]
    return total
