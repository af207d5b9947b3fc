"""A job's process as MoM sets it up: paths, shell, environment, CPUs, node file."""

from __future__ import annotations

import pytest

from batchd.execution.account import Account
from batchd.execution.child import SCRIPT_FD
from batchd.model.chunks import Chunk, Place
from batchd.model.job import Job
from batchd.server import launchspec
from batchd.server.arrays import subjob_key
from batchd.server.jobresources import JobResources
from batchd.server.outputs import (
    default_name,
    local_path,
    output_path,
    pick_shell,
    this_host,
)
from batchd.server.records import JobRecord
from batchd.site.config import SiteConfig

HOST = this_host()
ACCT = Account("alice", 1000, 100, (100, 27), "/home/alice", "/bin/bash")


def test_default_output_paths_as_pbs_names_them() -> None:
    assert output_path(None, "o", "run.sh", 12, False, "/w") == f"{HOST}:/w/run.sh.o12"
    assert output_path(None, "e", "a/b", 12, True, "/w") == f"{HOST}:/w/b.e12.^array_index^"
    assert output_path(f"{HOST}:", "o", "job", 3, False, "/w") == f"{HOST}:/w/job.o3"
    assert output_path("rel/out", "o", "job", 3, False, "/w") == f"{HOST}:/w/rel/out"
    assert output_path("localhost:/x/../y", "o", "job", 3, False, "/w") == f"{HOST}:/y"
    assert output_path("/logs/", "o", "job", 3, False, "/w") == f"{HOST}:/logs/"
    with pytest.raises(ValueError, match="-o far:/x: batchd writes a job's output on this host"):
        output_path("far:/x", "o", "job", 3, False, "/w")
    assert local_path(f"{HOST}:/w/j.o12.^array_index^", 7) == "/w/j.o12.7"
    assert local_path(f"{HOST}:/w/j.o12", None) == "/w/j.o12"
    assert default_name("x", "o", 5, False) == "x.o5"


def test_a_shell_list_picks_this_hosts_entry() -> None:
    assert pick_shell("/bin/sh") == "/bin/sh"
    assert pick_shell(f"/bin/zsh@far,/bin/ksh@{HOST},/bin/sh") == "/bin/ksh"
    assert pick_shell("/bin/zsh@far,/bin/sh") == "/bin/sh"
    with pytest.raises(ValueError, match="not an absolute path"):
        pick_shell("bash")
    with pytest.raises(ValueError, match="no shell for this host"):
        pick_shell("/bin/zsh@far")


def test_login_shells_run_the_script_as_a_command() -> None:
    fd = f"/dev/fd/{SCRIPT_FD}"
    assert launchspec.shell_argv("/bin/bash") == ["-bash", "-c", fd]
    assert launchspec.shell_argv("/usr/bin/zsh", "#!/bin/sh\n") == ["-zsh", "-c", f"exec {fd}"]
    assert launchspec.shell_argv("/usr/bin/python3") == ["python3", fd]


def site(shared: bool = True, cores: int = 4) -> SiteConfig:
    return SiteConfig.model_validate(
        {
            "machine": [{"name": "ws", "nodes": 2, "cores_per_node": cores, "shared": shared,
                         "executor": "local"}],
            "execution": {"tmpdir": "/scratch", "path": "/opt/bin:/usr/bin"},
            "server": {"kill_delay": 7},
        }
    )  # fmt: skip


def test_cpus_of_cores_and_of_whole_nodes() -> None:
    shared = site().machine[0]
    assert launchspec.cpus_of([0, 1, 5], shared, [0, 1, 2, 3]) == [0, 1]  # 5 wraps to 1
    whole = site(shared=False, cores=2).machine[0]
    assert launchspec.cpus_of([1], whole, [4, 5, 6]) == [4, 6]  # cores 2, 3 of 3 CPUs
    assert launchspec.cpus_of([0], whole, []) == []


def record(resources: JobResources, index: int | None = None) -> JobRecord:
    job = Job(id=12 if index is None else subjob_key(12, index), submit=0, width=resources.width, estimate=300, runtime=300, name="sim",
              queue="workq", user="alice", external=True, units=[4, 5, 6])  # fmt: skip
    rec = JobRecord(job=job, owner="alice", ctime=0, qtime=0, resources=resources,
                    subjob_index=index, script="echo hi\n")  # fmt: skip
    rec.variables = {"PBS_O_WORKDIR": "/w", "HOME": "/fake", "PBS_JOBID": "forged", "A": "1"}
    rec.output_path = output_path(None, "o", "sim", 12, False, "/w")
    rec.error_path = output_path(None, "e", "sim", 12, False, "/w")
    return rec


def chunks() -> JobResources:
    return JobResources(
        chunks=(Chunk(count=1, ncpus=3, mem=1 << 30, mpiprocs=2, ompthreads=None),),
        place=Place("free"),
        arrangement="free",
        groups=((0,),),
        cores=(3,),
    )


def test_the_environment_in_moms_order() -> None:
    spec = launchspec.build(record(chunks()), ACCT, site(), "12.ws", "12", None, [0, 1, 2, 3])
    env = spec.env
    assert env["PATH"] == "/opt/bin:/usr/bin" and env["A"] == "1"
    assert env["HOME"] == "/home/alice" and env["PBS_JOBID"] == "12.ws"  # MoM's win
    assert (env["LOGNAME"], env["USER"], env["SHELL"]) == ("alice", "alice", "/bin/bash")
    assert (env["NCPUS"], env["OMP_NUM_THREADS"]) == ("3", "3")
    assert (env["PBS_ENVIRONMENT"], env["ENVIRONMENT"], env["PBS_QUEUE"]) == (
        "PBS_BATCH", "BATCH", "workq",
    )  # fmt: skip
    assert env["TMPDIR"].startswith("/scratch/pbs.12.ws.") and env["PBS_NODEFILE"] == (
        env["TMPDIR"] + ".nodes"
    )
    assert "PBS_ARRAY_INDEX" not in env and len(env["PBS_JOBCOOKIE"]) == 32
    assert spec.nodes == [HOST, HOST]  # mpiprocs=2 on this host
    assert (spec.mem, spec.walltime, spec.kill_delay) == (1 << 30, 300, 7)
    assert spec.cpus == [0, 1, 2] and spec.stdout == "/w/sim.o12" and spec.stderr == "/w/sim.e12"
    assert (spec.uid, spec.gid, spec.groups, spec.home) == (1000, 100, [100, 27], "/home/alice")
    assert spec.argv == ["-bash", "-c", f"/dev/fd/{SCRIPT_FD}"] and spec.script == "echo hi\n"


def test_a_subjob_and_joined_streams() -> None:
    rec = record(chunks(), index=7)
    rec.output_path = output_path(None, "o", "sim", 12, True, "/w")
    rec.join = "oe"
    rec.variables["PBS_ARRAY_ID"] = "12[].ws"
    spec = launchspec.build(rec, ACCT, site(), "12[7].ws", "x", None, [0])
    assert spec.stdout == "/w/sim.o12.7" and spec.stderr is None
    assert (spec.env["PBS_ARRAY_INDEX"], spec.env["PBS_ARRAY_ID"]) == ("7", "12[].ws")
    assert spec.stdout_name == "sim.o12.7"


def test_ompthreads_and_a_job_wide_mem() -> None:
    res = JobResources(
        chunks=(Chunk(count=2, ncpus=4, ompthreads=2),),
        place=Place("scatter"), arrangement="scatter", groups=((0,), (0,)),
        job=(("mem", 5 << 20),),
    )  # fmt: skip
    assert launchspec.threads(res) == 2 and launchspec.mem_limit(res) == 5 << 20
    assert launchspec.node_lines(res, "h") == ["h", "h"]
