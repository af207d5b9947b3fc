"""Who sees which job: ``query_other_jobs`` off (the default) hides another user's jobs
from every view; on, shows them without their variables; operators and managers see
everything. Every route that answers with job data is read as the other user."""

from __future__ import annotations

from pathlib import Path

from api_helpers import T0, Api, jid, serve, site_config, start_api
from batchd.engine.clock import VirtualClock
from batchd.server.service import BatchService
from batchd.server.store import Store

SECRET = "hunter2-s3cret"
NAME = "alices-job"

# Every GET of the API that a user may send, job data or not.
READS = (
    "/jobs",
    "/jobs?history=true",
    "/jobs?history=true&subjobs=true",
    "/jobs?history=true&brief=true",
    "/jobs?user=alice&history=true",
    "/jobs?history=true&limit=2",
    "/jobs?state=QRHWEFBX&subjobs=true",
    "/plan",
    "/nodes",
    "/queues",
    "/server",
    "/scheduler",
    "/reservations",
    "/metrics",
)


async def alice_jobs(api: Api) -> list[str]:
    """alice's jobs with the secret among their variables: running, waiting, an array."""
    secret = {"SECRET": SECRET}
    fields = {"name": NAME, "variables": secret}
    running = await api.submit("alice", nodes=2, walltime=200, runtime=100, **fields)
    waiting = await api.submit("alice", nodes=8, walltime=300, **fields)
    array = await api.submit("alice", nodes=1, walltime=100, array_indices="1-2", **fields)
    return [running["id"], waiting["id"], array["id"]]


async def everything(api: Api, who: str) -> str:
    """All that ``who`` reads of the API, as one text."""
    texts = []
    for path in READS:
        status, body = await api.raw(who, "GET", path)
        assert status == 200, (path, body)
        texts.append(str(body))
    return "\n".join(texts)


async def listed(api: Api, who: str) -> list[str]:
    return [j["id"] for j in await api.jobs("history=true&subjobs=true", who=who)]


async def test_off_another_users_job_is_invisible_everywhere(tmp_path: Path) -> None:
    async with serve(tmp_path, site_config(query_other_jobs=False)) as api:
        ids = await alice_jobs(api)
        own = (await api.submit("bob", nodes=1, walltime=50, runtime=10))["id"]
        for moment in (0, 150):  # with alice's first job running, then in the history
            api.at(moment)
            seen = await everything(api, "bob")
            assert SECRET not in seen and NAME not in seen and "alice" not in seen
            assert await listed(api, "bob") == [own]
            assert await api.jobs("user=alice&history=true", who="bob") == []
            for ref, job in [*zip(ids, ids, strict=True), ("2", jid(2)), ("3[1]", "3[1].mini")]:
                await api.error("bob", "GET", f"/jobs/{ref}", status=403, code="forbidden",
                                says=f"Unauthorized Request {job}")  # fmt: skip
                await api.error("bob", "GET", f"/jobs/{ref}/events", status=403,
                                code="forbidden", says="Unauthorized Request")  # fmt: skip
            plan = await api.call("bob", "GET", "/plan")
            assert {row[0] for row in plan["jobs"]} <= {int(own.split(".")[0])}
        # Acting on it is refused the same way, without naming its owner.
        for method, path, body in (
            ("DELETE", f"/jobs/{ids[1]}", None),
            ("POST", f"/jobs/{ids[1]}/hold", {}),
            ("PATCH", f"/jobs/{ids[1]}", {"name": "mine"}),
            ("POST", f"/jobs/{ids[1]}/move", {"queue": "small"}),
        ):
            message = await api.error("bob", method, path, body, status=403, code="forbidden",
                                      says=f"Unauthorized Request {ids[1]}")  # fmt: skip
            assert "alice" not in message
        # alice herself sees all of hers, variables included.
        assert SECRET in await everything(api, "alice")
        assert (await api.job(ids[1], who="alice"))["variables"]["SECRET"] == SECRET


async def test_operators_and_managers_see_every_job_whole(tmp_path: Path) -> None:
    async with serve(tmp_path, site_config(query_other_jobs=False)) as api:
        ids = await alice_jobs(api)
        for who in ("oper", "boss"):
            assert set(ids) <= set(await listed(api, who))
            assert (await api.job(ids[0], who=who))["variables"]["SECRET"] == SECRET
            seen = await everything(api, who)
            assert SECRET in seen and NAME in seen
            plan = await api.call(who, "GET", "/plan")
            assert {info[2] for info in plan["info"]} == {"alice"}


async def test_on_others_see_the_job_but_not_its_variables(tmp_path: Path) -> None:
    async with serve(tmp_path, site_config(query_other_jobs=True)) as api:
        ids = await alice_jobs(api)
        for moment in (0, 150):  # running, then finished: its view saved in the history
            api.at(moment)
            seen = await everything(api, "bob")
            assert SECRET not in seen and NAME in seen
            assert set(ids) <= set(await listed(api, "bob"))
            job = await api.job(ids[0], who="bob")
            assert (job["owner"], job["variables"]) == ("alice", {})
            events = await api.call("bob", "GET", f"/jobs/{ids[0]}/events")
            assert events["events"]
            plan = await api.call("bob", "GET", "/plan")
            assert {info[2] for info in plan["info"]} == {"alice"}
            # Seeing is not acting.
            await api.error("bob", "DELETE", f"/jobs/{ids[1]}", status=403, code="forbidden",
                            says=f"bob may not delete job {ids[1]}, owned by alice")  # fmt: skip
        assert SECRET in await everything(api, "alice")


async def test_the_plan_feed_deltas_hold_only_the_callers_jobs(tmp_path: Path) -> None:
    async with serve(tmp_path, site_config(query_other_jobs=False)) as api:
        await api.submit("bob", nodes=1, walltime=50, runtime=10)
        first = await api.call("bob", "GET", "/plan")
        await alice_jobs(api)
        resp = await api.client.get(
            f"/plan?since={first['version']}",
            headers={"Authorization": "Bearer bob-token-0123456789"},
        )
        delta = await resp.json()
        assert delta["base"] == first["version"]
        assert (delta["jobs"], delta["info"], delta["gone"]) == ([], [], [])
        assert all(not order for order in delta["order"] if order is not None)


async def test_a_manager_sets_it_live_and_it_outlasts_the_config(tmp_path: Path) -> None:
    site = site_config(query_other_jobs=False)
    path = tmp_path / "state.db"
    async with serve(tmp_path, site) as api:
        ids = await alice_jobs(api)
        assert (await api.call("bob", "GET", "/server"))["query_other_jobs"] is False
        await api.error("alice", "PATCH", "/server", {"query_other_jobs": True}, status=403,
                        code="forbidden", says="managers only")  # fmt: skip
        await api.error("boss", "PATCH", "/server", {"query_other_jobs": "yes"}, status=400,
                        code="bad_request", says="query_other_jobs")  # fmt: skip
        assert await listed(api, "bob") == []
        body = await api.call("boss", "PATCH", "/server", {"query_other_jobs": True})
        assert body["query_other_jobs"] is True
        assert set(ids) <= set(await listed(api, "bob"))
    # Saved: it wins over the config at the next start and at a reload.
    svc = BatchService(site, VirtualClock(T0), Store(path), daemon_user="batchd")
    svc.restore(Store(path).load())
    svc.reload(site)
    async with start_api(svc) as api:
        assert set(ids) <= set(await listed(api, "bob"))
        await api.call("boss", "PATCH", "/server", {"query_other_jobs": False})
        assert await listed(api, "bob") == []
