"""PBS resources from qsub to qstat -f and qnodes against a real daemon, through kill -9."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from daemon_proc import ROOT, Daemon

BIN = Path(sys.executable).parent

SITE = """
[[machine]]
name = "tiny"
nodes = 4
cores_per_node = 2
mem_per_node = "1gb"
[machine.resources]
ngpus = 1

[[resource]]
name = "ngpus"
type = "long"
consumable = true

[[resource]]
name = "licenses"
type = "long"
consumable = true
per = "job"
available = 8

[[queue]]
name = "workq"
default_walltime = "01:00:00"
"""

SCRIPT = """#!/bin/sh
#PBS -N mpi
#PBS -l select=2:ncpus=2:mem=512mb:mpiprocs=2:ngpus=1
#PBS -l place=scatter:excl
#PBS -l walltime=00:30:00,licenses=4
mpirun ./a.out
"""


def run(d: Daemon, *argv: str, stdin: str = "true\n") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, BATCHD_SOCKET=str(d.socket))
    env.pop("BATCHD_URL", None)
    return subprocess.run(
        [str(BIN / argv[0]), *argv[1:]], input=stdin, capture_output=True, text=True,
        env=env, cwd=ROOT, timeout=30,
    )  # fmt: skip


def full(d: Daemon, job_id: str) -> dict[str, str]:
    out = run(d, "qstat", "-f", job_id)
    assert out.returncode == 0, out.stderr
    attrs: dict[str, str] = {}
    key = ""
    for line in out.stdout.splitlines()[1:]:
        if line.startswith("\t"):
            attrs[key] += line[1:]
        elif line.strip():
            key, _, value = line.strip().partition(" = ")
            attrs[key] = value
    return attrs


def steady(text: str) -> str:
    """qstat -f without what moves with the clock."""
    return "\n".join(line for line in text.splitlines() if "resources_used" not in line)


def test_resources_from_qsub_to_qstat_and_qnodes_through_kill_9(tmp_path: Path) -> None:
    conf = tmp_path / "tiny.toml"
    conf.write_text(SITE)
    script = tmp_path / "mpi.sh"
    script.write_text(SCRIPT)
    with Daemon(tmp_path, "--speed", "1", config=str(conf)) as d:
        mpi = run(d, "qsub", str(script)).stdout.strip()
        old = run(d, "qsub", "-l", "nodes=1:ppn=2,mem=256mb", stdin="true\n").stdout.strip()
        attrs = full(d, mpi)
        assert {k: v for k, v in attrs.items() if k.startswith("Resource_List")} == {
            "Resource_List.licenses": "4",
            "Resource_List.mem": "1gb",
            "Resource_List.mpiprocs": "4",
            "Resource_List.ncpus": "4",
            "Resource_List.nodect": "2",
            "Resource_List.place": "scatter:excl",
            "Resource_List.select": "2:ncpus=2:mem=512mb:mpiprocs=2:ngpus=1",
            "Resource_List.walltime": "00:30:00",
        }
        assert attrs["exec_host"] == "node001/0*2+node002/0*2"
        assert attrs["exec_vnode"] == (
            "(node001:ncpus=2:mem=524288kb:ngpus=1)+(node002:ncpus=2:mem=524288kb:ngpus=1)"
        )
        converted = full(d, old)
        assert converted["Resource_List.select"] == "1:ncpus=2:mem=256mb:mpiprocs=2"
        assert converted["Resource_List.nodes"] == "1:ppn=2"
        assert converted["exec_host"] == "node003/0*2"

        node = run(d, "qnodes", "node001").stdout
        for line in (
            "pcpus = 2",
            "resources_available.mem = 1gb",
            "resources_available.ncpus = 2",
            "resources_available.ngpus = 1",
            "resources_assigned.mem = 512mb",
            "resources_assigned.ncpus = 2",
            "resources_assigned.ngpus = 1",
        ):
            assert f"     {line}\n" in node
        summary = run(d, "qnodes", "-aSj").stdout.splitlines()
        # pbsnodes brings 512mb up to 1gb's unit rounding up ((v % 1024 + v) >> 10): 0gb free
        assert summary[3].split()[5:7] == ["0gb/1gb", "0/2"]
        assert summary[6].split()[5:7] == ["1gb/1gb", "2/2"]  # node004 is free

        # Refusals name the limit and change nothing.
        before = steady(run(d, "qstat", "-f").stdout)
        for argv, says in (
            (["-l", "select=1:ncpus=4"], "chunk 1 asks for ncpus=4; a node has 2"),
            (["-l", "select=1:mem=2gb"], "chunk 1 asks for mem=2gb; a node has 1gb"),
            (["-l", "mem=4gb"], "chunk 1 asks for mem=4gb; a node has 1gb"),
            (["-l", "select=1:ngpus=2"], "chunk 1 asks for ngpus=2; a node has 1"),
            (["-l", "select=5"], "nodes: 5 nodes requested; machine tiny has 4"),
            (["-l", "vmem=1gb"], "Unknown resource: vmem"),
            (["-l", "licenses=9"], "licenses: 9 requested; the site has 8"),
            (["-l", "select=1", "-l", "ncpus=2"], '"-lresource=" cannot be used with'),
        ):
            bad = run(d, "qsub", *argv)
            assert bad.returncode != 0 and says in bad.stderr, (argv, bad.stderr)
        assert steady(run(d, "qstat", "-f").stdout) == before

        d.crash()
    with Daemon(tmp_path, "--speed", "1", config=str(conf)) as again:
        after = full(again, mpi)
        assert {k: v for k, v in after.items() if k != "resources_used.walltime"} == {
            k: v for k, v in attrs.items() if k != "resources_used.walltime"
        }
        assert run(again, "qnodes", "node001").stdout == node
