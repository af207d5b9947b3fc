"""The Unix socket listener: the caller is the peer process's user, no token needed.

The test process connects to itself, so the caller is the current user; it is a manager
only when that user is root or the user the daemon runs as.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pwd
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from api_helpers import T0, TOKENS, new_service
from batchd.server.admin_schemas import SchedulerOut
from batchd.server.app import create_app
from batchd.server.schemas import JobList, JobOut
from batchd.server.service import BatchService

ME = pwd.getpwuid(os.geteuid()).pw_name


@contextlib.asynccontextmanager
async def serving(svc: BatchService) -> AsyncIterator[str]:
    """Serve ``svc`` on a Unix socket that anyone may connect to; yield its path."""
    app = create_app(svc, tokens={token: user for user, token in TOKENS.items()})
    runner = web.AppRunner(app)
    await runner.setup()
    # Socket paths are limited to about 100 bytes: keep it short.
    with tempfile.TemporaryDirectory(prefix="bd-") as tmp:
        path = str(Path(tmp) / "s.sock")
        await web.UnixSite(runner, path).start()
        os.chmod(tmp, 0o755)
        os.chmod(path, 0o777)
        try:
            yield path
        finally:
            await runner.cleanup()
            if svc.store is not None:
                svc.store.close()


@contextlib.asynccontextmanager
async def over_socket(svc: BatchService) -> AsyncIterator[aiohttp.ClientSession]:
    """Serve ``svc`` on a Unix socket and yield a session connected to it."""
    async with serving(svc) as path:
        connector = aiohttp.UnixConnector(path=path)
        async with aiohttp.ClientSession(connector=connector, base_url="http://batchd") as session:
            yield session


def _service(tmp_path: Path, daemon_user: str) -> BatchService:
    svc = new_service(tmp_path / "state.db")
    svc.daemon_user = daemon_user
    return svc


async def test_socket_caller_is_the_process_user(tmp_path: Path) -> None:
    async with over_socket(_service(tmp_path, "batchd")) as s:
        async with s.get("/jobs") as resp:
            assert resp.status == 200
            JobList.model_validate(await resp.json())
        async with s.post("/jobs", json={"nodes": 2, "walltime": 60}) as resp:
            assert resp.status == 201
            job = JobOut.model_validate(await resp.json())
        assert (job.id, job.owner, job.ctime) == ("1.mini", ME, T0)
        async with s.get("/jobs", params={"user": ME}) as resp:
            assert [j["id"] for j in (await resp.json())["jobs"]] == ["1.mini"]
        # A bearer token on the socket does not change who is calling.
        headers = {"Authorization": f"Bearer {TOKENS['alice']}"}
        async with s.post("/jobs", json={}, headers=headers) as resp:
            assert resp.status == 201
            assert (await resp.json())["owner"] == ME
        # Nor does a bad one: the socket needs no token.
        async with s.get("/server", headers={"Authorization": "Bearer nonsense"}) as resp:
            assert resp.status == 200
        # The owner acts on its own job.
        async with s.delete("/jobs/2") as resp:
            assert resp.status == 200
            assert (await resp.json())["outcome"] == "cancelled"


async def test_socket_roles(tmp_path: Path) -> None:
    # Root is always a manager; anyone else is a user unless the daemon runs as them.
    manager = ME == "root"
    async with over_socket(_service(tmp_path, "batchd")) as s:
        async with s.patch("/scheduler", json={"policy": "fcfs"}) as resp:
            body = await resp.json()
            if manager:
                assert resp.status == 200
                assert SchedulerOut.model_validate(body).switches[-1]["by"] == ME
            else:
                assert resp.status == 403 and body["error"] == "forbidden"
                assert ME in body["message"]
        async with s.post("/jobs", json={"user": "somebody"}) as resp:
            body = await resp.json()
            if manager:
                assert (resp.status, body["owner"]) == (201, "somebody")
            else:
                assert resp.status == 403 and body["error"] == "forbidden"


async def test_socket_caller_is_a_manager_as_the_daemon_user(tmp_path: Path) -> None:
    async with over_socket(_service(tmp_path, ME)) as s:
        async with s.patch("/scheduler", json={"policy": "sjf-easy"}) as resp:
            assert resp.status == 200
            body = SchedulerOut.model_validate(await resp.json())
        assert body.policy == "sjf-easy" and body.switches[-1]["by"] == ME
        req = {"start": "now", "duration": 60, "nodes": 1}
        async with s.post("/reservations", json=req) as resp:
            assert resp.status == 201
            assert (await resp.json())["owner"] == ME


@pytest.mark.skipif(os.geteuid() != 0, reason="only root is always a manager")
async def test_root_is_a_manager_whoever_the_daemon_user(tmp_path: Path) -> None:
    async with over_socket(_service(tmp_path, "batchd")) as s:
        async with s.patch("/nodes/node001", json={"state": "offline"}) as resp:
            status, body = resp.status, await resp.json()
        assert (status, body["state"]) == (200, "offline")


async def _curl_as(uid: int, sock: str, method: str, path: str, body: object) -> tuple[int, dict]:
    curl = shutil.which("curl")
    assert curl is not None
    proc = await asyncio.create_subprocess_exec(
        curl, "-s", "--unix-socket", sock, "-X", method, "-H", "Content-Type: application/json",
        "-d", json.dumps(body), "-w", "\n%{http_code}", f"http://batchd{path}",
        stdout=asyncio.subprocess.PIPE, user=uid,
    )  # fmt: skip
    out, _ = await proc.communicate()
    text, _, code = out.decode().rpartition("\n")
    return int(code), json.loads(text)


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("curl") is None, reason="needs root to act as nobody"
)
async def test_socket_caller_of_another_uid_is_a_plain_user(tmp_path: Path) -> None:
    # A process of user nobody connects: it owns what it submits and is no manager.
    nobody = pwd.getpwnam("nobody")
    async with serving(_service(tmp_path, "batchd")) as sock:
        status, body = await _curl_as(nobody.pw_uid, sock, "POST", "/jobs", {"nodes": 1})
        assert status == 201 and body["owner"] == "nobody"
        status, body = await _curl_as(
            nobody.pw_uid, sock, "PATCH", "/scheduler", {"policy": "fcfs"}
        )
        assert (status, body["error"]) == (403, "forbidden")
        assert "nobody may not change the scheduler" in body["message"]
        status, body = await _curl_as(nobody.pw_uid, sock, "POST", "/jobs", {"user": "root"})
        assert (status, body["error"]) == (403, "forbidden")
        status, body = await _curl_as(nobody.pw_uid, sock, "DELETE", "/jobs/1", {})
        assert (status, body["outcome"]) == (200, "cancelled")
