"""PBS resources over the API: chunks placed on nodes of 4 cores and 8gb, the width the
scheduler gives, what a job and a node show, refusals that change nothing, a restart."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

import pytest

from api_helpers import T0, Api, new_service, resources_site, serve, start_api
from batchd.engine.clock import VirtualClock
from batchd.server.service import BatchService
from batchd.server.store import Store

GB = 1 << 30


@pytest.fixture
async def excl(tmp_path: Path):  # type: ignore[no-untyped-def]
    async with serve(tmp_path, resources_site()) as api:
        yield api


@pytest.fixture
async def shared(tmp_path: Path):  # type: ignore[no-untyped-def]
    async with serve(tmp_path, resources_site(shared=True)) as api:
        yield api


def chunk(count: int = 1, **res: Any) -> dict[str, Any]:
    return {"count": count, **res}


@pytest.mark.parametrize(
    "fields,width,resource_list",
    [
        # Exclusive nodes: one chunk per node unless place says otherwise.
        ({"select": [chunk(3, ncpus=2)]}, 3,
         {"ncpus": "6", "nodect": "3", "place": "scatter", "select": "3:ncpus=2"}),
        # free: first fit by cores: 2+2 on node 1, 2 on node 2.
        ({"select": [chunk(3, ncpus=2)], "place": "free"}, 2,
         {"ncpus": "6", "nodect": "3", "place": "free", "select": "3:ncpus=2"}),
        # pack: all on one node.
        ({"select": [chunk(2, ncpus=2, mem="3gb")], "place": "pack:excl"}, 1,
         {"mem": "6gb", "ncpus": "4", "nodect": "2", "place": "pack:excl",
          "select": "2:ncpus=2:mem=3gb"}),
        # free by memory: 5gb chunks do not share an 8gb node.
        ({"select": [chunk(2, ncpus=1, mem=5 * GB)], "place": "free"}, 2,
         {"mem": "10gb", "ncpus": "2", "nodect": "2", "place": "free",
          "select": "2:ncpus=1:mem=5gb"}),
        # Old syntax: nodes=2:ppn=2 is 2:ncpus=2:mpiprocs=2, scattered; mem shared out.
        ({"nodes_spec": "2:ppn=2", "resources": {"mem": "4gb"}}, 2,
         {"mem": "4gb", "mpiprocs": "4", "ncpus": "4", "nodect": "2", "nodes": "2:ppn=2",
          "place": "scatter", "select": "2:ncpus=2:mem=2gb:mpiprocs=2"}),
        ({"nodes_spec": "1:ppn=4+2#excl"}, 3,
         {"mpiprocs": "4", "ncpus": "6", "nodect": "3", "nodes": "1:ppn=4+2#excl",
          "place": "scatter:excl", "select": "1:ncpus=4:mpiprocs=4+2:ncpus=1"}),
        # A job-wide ncpus multiplies each node's CPUs.
        ({"nodes_spec": "2", "resources": {"ncpus": 8}}, 2,
         {"ncpus": "8", "nodect": "2", "nodes": "2", "place": "scatter",
          "select": "2:ncpus=4"}),
        # ncpus and mem alone: one chunk, packed.
        ({"resources": {"ncpus": "3", "mem": "2gb"}}, 1,
         {"mem": "2gb", "ncpus": "3", "nodect": "1", "place": "pack",
          "select": "1:ncpus=3:mem=2gb"}),
        # nodes: N is -l nodes=N.
        ({"nodes": 4}, 4,
         {"ncpus": "4", "nodect": "4", "nodes": "4", "place": "scatter", "select": "4:ncpus=1"}),
        # The site's resources: per node in chunks, per job beside them.
        ({"select": [chunk(2, ncpus=1, custom={"ngpus": 2, "cpu_type": "x86"})], "place": "free",
          "resources": {"licenses": "4", "scratch": "1tb"}}, 2,
         {"licenses": "4", "ncpus": "2", "nodect": "2", "place": "free", "scratch": "1tb",
          "select": "2:ncpus=1:cpu_type=x86:ngpus=2"}),
    ],
)  # fmt: skip
async def test_chunks_give_the_width_and_the_resource_list(
    excl: Api, fields: dict[str, Any], width: int, resource_list: dict[str, str]
) -> None:
    job = await excl.submit(walltime=600, **fields)
    assert job["state"] == "R" and job["nodes"] == width and len(job["exec_host"]) == width
    assert job["resource_list"] == resource_list


async def test_exec_vnode_and_the_nodes_resources(excl: Api) -> None:
    job = await excl.submit(select=[chunk(3, ncpus=2, mem="1gb")], place="free", walltime=600)
    assert job["exec_vnode"] == (
        "(node001:ncpus=2:mem=1048576kb)+(node001:ncpus=2:mem=1048576kb)"
        "+(node002:ncpus=2:mem=1048576kb)"
    )
    nodes = {n["name"]: n for n in (await excl.call("alice", "GET", "/nodes"))["nodes"]}
    one, two, three = nodes["node001"], nodes["node002"], nodes["node003"]
    assert one["resources_available"] == {
        "cpu_type": "x86", "host": "node001", "mem": "8gb", "ncpus": "4", "ngpus": "2",
        "vnode": "node001",
    }  # fmt: skip
    assert one["resources_assigned"] == {"mem": "2gb", "ncpus": "4", "ngpus": "0"}
    assert two["resources_assigned"] == {"mem": "1gb", "ncpus": "2", "ngpus": "0"}
    assert three["resources_assigned"] == {"mem": "0kb", "ncpus": "0", "ngpus": "0"}
    assert one["sharing"] == "default_excl" and one["state"] == "job-exclusive"
    assert one["job_cores"] == [f"{job['id']}/{core}" for core in range(4)]  # 2+2 CPUs


async def test_a_shared_machine_packs_chunks_by_default(shared: Api) -> None:
    job = await shared.submit(select=[chunk(4, ncpus=2)], walltime=600)
    assert job["nodes"] == 2 and job["resource_list"]["place"] == "free"
    scattered = await shared.submit(select=[chunk(4, ncpus=2)], place="scatter", walltime=600)
    assert scattered["nodes"] == 4
    nodes = (await shared.call("alice", "GET", "/nodes"))["nodes"]
    assert nodes[0]["sharing"] == "default_shared"


async def test_the_scheduler_counts_the_nodes_the_chunks_fill(excl: Api) -> None:
    # 8 nodes: a job of 4 chunks scattered takes 4, one of 8 chunks packed two to a node
    # another 4; a third waits for nodes.
    a = await excl.submit(select=[chunk(4, ncpus=4)], walltime=600)
    b = await excl.submit(select=[chunk(8, ncpus=2)], place="free", walltime=600)
    c = await excl.submit(select=[chunk(1, ncpus=1)], walltime=600)
    assert (a["state"], a["nodes"], b["state"], b["nodes"]) == ("R", 4, "R", 4)
    assert c["state"] == "Q"


@pytest.mark.parametrize(
    "fields,says",
    [
        ({"select": [chunk(1, ncpus=5)]},
         "select: chunk 1 asks for ncpus=5; a node has 4 (resources_available.ncpus), on "
         "machine mini"),
        ({"select": [chunk(1), chunk(1, mem="9gb")]},
         "select: chunk 2 asks for mem=9gb; a node has 8gb (resources_available.mem)"),
        ({"select": [chunk(1, custom={"ngpus": 3})]},
         "select: chunk 1 asks for ngpus=3; a node has 2 (resources_available.ngpus)"),
        ({"select": [chunk(1, custom={"cpu_type": "arm"})]},
         "select: chunk 1 asks for cpu_type=arm; the nodes have cpu_type=x86"),
        ({"select": [chunk(3, ncpus=2)], "place": "pack"},
         "place=pack: the chunks ask for ncpus=6 in all; a node has 4"),
        ({"select": [chunk(9)]}, "nodes: 9 nodes requested; machine mini has 8"),
        ({"nodes_spec": "99999999999999999999"},
         "nodes: 99999999999999999999 nodes requested; machine mini has 8"),
        ({"select": [chunk(1_000_000, ncpus=0)], "place": "free"},
         "select: 1000000 chunks requested; the site's nodes have 32 cores in all"),
        ({"select": [chunk(1, custom={"gpu": 1})]}, "Unknown resource: gpu (this site has"),
        ({"resources": {"vmem": "1gb"}}, "Unknown resource: vmem"),
        ({"select": [chunk(1, custom={"licenses": 1})]},
         'Resource invalid in "select" specification, resource is: licenses'),
        ({"select": [chunk(1)], "resources": {"mem": "1gb"}},
         '"-lresource=" cannot be used with "select" or "place", resource is: mem'),
        ({"select": [chunk(1)], "nodes_spec": "2"}, "Cannot be used with select or place: nodes"),
        ({"place": "pack"}, 'Cannot have "place" without "select"'),
        ({"select": [chunk(1)], "place": "spread"}, "place=spread: 'spread' is not allowed"),
        ({"select": [chunk(1, mem="4xb")]}, "Illegal attribute or resource value: select chunk 1"),
        ({"resources": {"licenses": "11"}}, "licenses: 11 requested; the site has 10"),
        ({"resources": {"licenses": "two"}}, "licenses=two: expected a non-negative integer"),
        ({"nodes_spec": "2:ppn=2", "resources": {"ncpus": 3}},
         "ncpus=3: with nodes=2:ppn=2 it must be a multiple of the 4 CPUs"),
        ({"nodes_spec": "2:fast"}, "Unknown resource: fast"),
        ({"nodes": 2, "nodes_max": 4, "select": [chunk(1)]}, "a moldable job takes whole nodes"),
    ],
)  # fmt: skip
async def test_a_bad_request_is_refused_and_changes_nothing(
    excl: Api, fields: dict[str, Any], says: str
) -> None:
    await excl.submit(nodes=2, walltime=60)
    before = await excl.state()
    await excl.error("alice", "POST", "/jobs", fields, status=400, code="bad_request", says=says)
    assert await excl.state() == before


async def test_moldable_ranges_and_plain_widths_keep_working(excl: Api) -> None:
    job = await excl.submit(nodes=2, nodes_max=4, walltime=600)
    assert job["nodes"] == 2 and job["resource_list"]["select"] == "2:ncpus=1"
    assert "nodes" not in job["resource_list"]  # the range is the job's own attribute


async def test_a_restart_keeps_the_chunks_on_their_nodes(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    fields = {"select": [chunk(3, ncpus=2, mem="1gb")], "place": "free", "walltime": 900}
    async with start_api(new_service(path, resources_site())) as api:
        running = await api.submit(**fields)
        waiting = await api.submit(select=[chunk(8, ncpus=3)], walltime=900)
        before = {j["seq"]: j for j in await api.jobs()}
        nodes_before = await api.call("alice", "GET", "/nodes")
    assert running["state"] == "R" and waiting["state"] == "Q"
    svc = BatchService(resources_site(), VirtualClock(T0), Store(path), daemon_user="batchd")
    svc.restore(Store(path).load())
    async with start_api(svc) as api:
        assert {j["seq"]: j for j in await api.jobs()} == before
        assert await api.call("alice", "GET", "/nodes") == nodes_before
        api.at(1000)
        ended = await api.job(running["seq"])
        started = await api.job(waiting["seq"])
    assert ended["state"] == "F" and ended["exec_vnode"] == running["exec_vnode"]
    assert started["state"] == "R" and started["nodes"] == 8


async def test_jobs_that_ask_alike_share_one_resources_object(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    alike = {"select": [chunk(2, ncpus=2, mem="1gb")], "place": "free", "walltime": 900}
    async with start_api(new_service(path, resources_site())) as api:
        first, second = [await api.submit(**alike) for _ in range(2)]
        # The same chunks in another place, and the same again in the old syntax.
        other = await api.submit(**{**alike, "place": "scatter"})
        old = await api.submit(nodes_spec="2:ppn=2", walltime=900)
        again = await api.submit(nodes_spec="2:ppn=2", walltime=900)
        res = {
            j["seq"]: api.svc.records[j["seq"]].resources
            for j in (first, second, other, old, again)
        }
        assert res[first["seq"]] is res[second["seq"]] and res[old["seq"]] is res[again["seq"]]
        assert res[other["seq"]] is not res[first["seq"]] and res[other["seq"]] != res[first["seq"]]
        assert res[old["seq"]] is not res[first["seq"]]
        # Each job shows what it asked for.
        assert (await api.job(other["seq"]))["resource_list"]["place"] == "scatter"
        assert (await api.job(second["seq"]))["resource_list"]["place"] == "free"
        # One job altered: the other keeps its resources.
        await api.call("alice", "DELETE", f"/jobs/{old['seq']}")
        assert api.svc.records[again["seq"]].resources is res[again["seq"]]
    # Restored from the state file, they are shared again.
    svc = BatchService(resources_site(), VirtualClock(T0), Store(path), daemon_user="batchd")
    svc.restore(Store(path).load())
    restored = [svc.records[j["seq"]].resources for j in (first, second, other)]
    assert restored[0] is restored[1] and restored[0] == res[first["seq"]]
    assert restored[2] is not restored[0]
    if svc.store is not None:
        svc.store.close()


def test_resources_no_job_holds_are_let_go() -> None:
    from batchd.server.jobresources import _alike, shared, whole_nodes

    kept = shared(whole_nodes(97))
    assert shared(whole_nodes(97)) is kept and shared(whole_nodes(98)) is not kept
    held, count = weakref.ref(kept), len(_alike)
    del kept
    gc.collect()
    assert held() is None and len(_alike) < count
