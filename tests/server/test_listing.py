"""``GET /jobs`` as the job tables read it (``brief``) and as a listing sent in pages.

The brief view is made without the full one: every field it has must be the full
view's, for every kind of job a table shows. A listing of the whole queue looks the
jobs in memory up once, not once per page, and still lists each job once, as it is
when its page is made.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from api_helpers import T0, jid, resources_site, serve, site_config
from batchd.server import listing
from batchd.server.jobresources import TABLE_RESOURCES
from batchd.server.jobview import BRIEF
from batchd.server.records import JobRecord
from batchd.server.schemas import JobBriefList
from batchd.server.service.access import Caller

# Jobs of every shape a table shows: chunks with memory, the old syntax, a job-wide
# ncpus and mem, per-job resources, a plain width, chunks packed on a node (on shared
# nodes its node count is not its chunks'); they run, wait, are held or wait for their
# execution time, and an array has subjobs.
SHAPES: list[dict[str, Any]] = [
    {"select": [{"count": 2, "ncpus": 2, "mem": "1gb"}], "place": "free"},
    {"nodes_spec": "2:ppn=2", "resources": {"mem": "4gb"}},
    {"resources": {"ncpus": "3", "mem": "2gb"}},
    {"select": [{"count": 1, "ncpus": 1, "custom": {"ngpus": 1}}], "resources": {"scratch": "1tb"}},
    {"nodes": 3},
    {"select": [{"count": 2, "ncpus": 1}], "place": "pack"},  # two chunks, one node
]


def counted_walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The cursors of the walks through the jobs in memory listings make from now on."""
    walks: list[int] = []
    walk = listing.Pages._walk

    def counted(pages: listing.Pages, after: int) -> Iterator[JobRecord]:
        walks.append(after)
        return walk(pages, after)

    monkeypatch.setattr(listing.Pages, "_walk", counted)
    return walks


def cut(view: dict[str, Any]) -> dict[str, Any]:
    """A full view cut to the brief one's fields."""
    out = {k: view[k] for k in BRIEF}
    out["resource_list"] = {k: v for k, v in view["resource_list"].items() if k in TABLE_RESOURCES}
    return out


@pytest.mark.parametrize("shared", [False, True])
async def test_the_brief_view_is_the_full_one_cut_to_the_tables(
    tmp_path: Path, shared: bool
) -> None:
    async with serve(tmp_path, resources_site(shared)) as api:
        await api.submit(nodes=1, walltime=600, runtime=500, array_indices="1-3")
        for fields in SHAPES * 6:  # the machine fills: the later ones wait
            await api.submit(walltime=600, runtime=300, **fields)
        await api.submit(walltime=600, hold=True, **SHAPES[0])
        await api.submit(walltime=600, exec_time=T0 + 5000, **SHAPES[2])
        api.at(300)  # the first ones end, the array runs on
        full = await api.jobs("history=true&subjobs=true")
        body = await api.call("alice", "GET", "/jobs?history=true&subjobs=true&brief=true")
        JobBriefList.model_validate(body)
        brief = body["jobs"]
        assert [j["id"] for j in brief] == [j["id"] for j in full]
        assert brief == [cut(j) for j in full]
        shown = {j["state"] for j in full}
        assert {"R", "Q", "H", "W", "B", "F"} <= shown, shown
        # The fields both views take from one place, as the tables read them.
        now = body["now"]
        for job in brief:
            if job["state"] == "R":
                assert job["stime"] <= now and job["elapsed"] == now - job["stime"]
            elif job["state"] == "Q":  # planned: after the running ones
                assert job["stime"] is None and job["est_start"] > now
            elif job["state"] == "F":
                assert job["elapsed"] == 300 and job["stime"] == T0
        assert any("mem" in j["resource_list"] for j in brief)


async def test_a_listing_sent_whole_looks_the_jobs_up_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with serve(tmp_path, site_config()) as api:
        for _ in range(9):
            await api.submit(nodes=2, walltime=600)
        svc = api.svc
        walks = counted_walks(monkeypatch)
        monkeypatch.setattr(listing, "CHUNK", 2)
        alice = Caller("alice", "user", True)
        query, after, _ = listing.parse(svc, {}, alice)
        chunks = listing.Pages(svc, query, alice).chunks(after)
        seqs = [json.loads(text)["seq"] for text in next(chunks)]
        # Between two pages a job further on leaves the queue and a new one comes.
        await api.call("alice", "DELETE", f"/jobs/{jid(7)}")
        await api.submit(nodes=1, walltime=60)
        for texts in chunks:
            seqs += [json.loads(text)["seq"] for text in texts]
        assert seqs == [1, 2, 3, 4, 5, 6, 8, 9, 10]
        # Once for the jobs there, once for the one that came, once to find none more;
        # not once a page.
        assert walks == [0, 9, 10]


async def test_a_page_made_in_parts_is_the_page_made_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with serve(tmp_path, site_config()) as api:
        for i in range(9):
            await api.submit(nodes=1 + i % 3, walltime=600, hold=i == 4)
        await api.call("alice", "DELETE", f"/jobs/{jid(6)}")  # one in the history
        svc = api.svc
        alice = Caller("alice", "user", True)
        monkeypatch.setattr(listing, "CHUNK", 2)
        for params in ({}, {"brief": "true"}, {"history": "true"}):
            query, _, _ = listing.parse(svc, params, alice)
            for after in (0, 3):
                for limit in (1, 2, 3, 5, 20):
                    whole = listing.Pages(svc, query, alice).page(after, limit)
                    parts = list(listing.Pages(svc, query, alice).parts(after, limit))
                    assert [len(texts) for texts, _ in parts[:-1]] == [2] * (len(parts) - 1)
                    texts = [text for part, _ in parts for text in part]
                    assert (texts, parts[-1][1]) == whole, (params, after, limit)
        # The parts of a page look its jobs up once (not a walk from the start per part).
        walks = counted_walks(monkeypatch)
        query, _, _ = listing.parse(svc, {}, alice)
        parts = list(listing.Pages(svc, query, alice).parts(0, 5))
        assert len(parts) == 3 and parts[-1][1] == 5 and walks == [0]


async def test_the_daemon_runs_other_work_between_the_parts_of_a_listing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with serve(tmp_path, site_config()) as api:
        for _ in range(4):
            await api.submit(nodes=2, walltime=600)
        events: list[str] = []
        page = listing.Pages.page

        async def other() -> None:
            events.append("other")

        def noting(pages: listing.Pages, after: int, limit: int) -> tuple[list[str], int | None]:
            if not events:  # work for the event loop, which it runs at its next turn
                asyncio.get_running_loop().create_task(other())
            events.append("part")
            return page(pages, after, limit)

        monkeypatch.setattr(listing.Pages, "page", noting)
        monkeypatch.setattr(listing, "CHUNK", 1)
        for query in ("", "limit=3&"):
            events.clear()
            body = await api.call("alice", "GET", f"/jobs?{query}brief=true")
            assert events[:3] == ["part", "other", "part"], (query, events)
            assert [j["seq"] for j in body["jobs"]] == [1, 2, 3, 4][: 3 if query else 4]
