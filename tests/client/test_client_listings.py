"""qstat's listings agree with each other and with tracejob, against a real daemon: the
alternate format of several jobs as of one, qstat -n's hosts as exec_host, a finished
array's subjobs in every view, tracejob's exec_vnode as qstat -f's."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon_proc import Daemon
from pbs_commands import ok

SITE = """
[[machine]]
name = "tiny"
nodes = 3
cores_per_node = 4
mem_per_node = "8gb"
shared = true

[server]
policy = "fcfs-easy"

[[queue]]
name = "workq"
default_walltime = "01:00:00"
"""

WIDE = "select=2:ncpus=2:mem=512mb"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """Job 1 (two chunks of 2 CPUs and 512mb) and job 2 running; array 3 finished."""
    tmp = tmp_path_factory.mktemp("listings")
    conf = tmp / "tiny.toml"
    conf.write_text(SITE)
    with Daemon(Path(tmp), "--speed", "1", config=str(conf)) as d:
        ok(d, "qsub", "-l", WIDE, stdin="sleep 100\n")
        ok(d, "qsub", "-l", "select=1:ncpus=1", stdin="sleep 100\n")
        ok(d, "qsub", "-J", "1-3", "-v", "BATCHD_RUNTIME=1", stdin="true\n")
        deadline = time.monotonic() + 30
        while " F " not in ok(d, "qstat", "-x", "3[].tiny"):
            assert time.monotonic() < deadline, "array 3 did not finish"
            time.sleep(0.2)
        yield d


def rows(text: str) -> dict[str, str]:
    return {line.split()[0]: line for line in text.splitlines() if re.match(r"\d", line)}


def test_several_jobs_show_what_one_does(daemon: Daemon) -> None:
    alone = rows(ok(daemon, "qstat", "-a", "1.tiny"))["1.tiny"]
    listed = rows(ok(daemon, "qstat", "-a"))
    assert listed["1.tiny"] == alone
    assert alone.split()[5:8] == ["2", "4", "1gb"]  # NDS, TSK, Req'd Memory
    assert listed["2.tiny"].split()[5:8] == ["1", "1", "--"]
    assert rows(ok(daemon, "qstat", "-a", "-w"))["1.tiny"].split()[5:8] == ["2", "4", "1gb"]


def test_host_lines_are_exec_host(daemon: Daemon) -> None:
    full = ok(daemon, "qstat", "-f", "1.tiny")
    exec_host = re.search(r"^    exec_host = (.*)$", full, re.M)
    assert exec_host is not None and exec_host[1] == "node001/0*2+node001/1*2"
    lines = ok(daemon, "qstat", "-n", "1.tiny").splitlines()
    assert lines[-1] == "   node001/0*2+node001/1*2"
    assert rows(ok(daemon, "qstat", "-n", "-1"))["1.tiny"].endswith(" node001/0*2+node001/1*2")


def test_tracejob_exec_vnode_is_qstat_fs(daemon: Daemon) -> None:
    full = ok(daemon, "qstat", "-f", "1.tiny")
    exec_vnode = re.search(r"^    exec_vnode = (.*)$", full, re.M)
    assert exec_vnode is not None
    assert exec_vnode[1] == "(node001:ncpus=2:mem=524288kb)+(node001:ncpus=2:mem=524288kb)"
    trace = ok(daemon, "tracejob", "1")
    assert f"Job Run at request of Scheduler@tiny on exec_vnode {exec_vnode[1]}\n" in trace


def test_a_finished_arrays_subjobs_in_every_view(daemon: Daemon) -> None:
    subjobs = ["3[1].tiny", "3[2].tiny", "3[3].tiny"]
    for argv in (["-x", "-t"], ["-x", "-t", "-n"], ["-x", "-t", "-a"], ["-x", "-t", "-f"]):
        out = ok(daemon, "qstat", *argv)
        shown = re.findall(r"^(?:Job Id: )?(3\[\d\]\.tiny)", out, re.M)
        assert shown == subjobs, argv
    assert list(rows(ok(daemon, "qstat", "-x", "-t", "-J"))) == subjobs
