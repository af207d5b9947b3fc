"""pbsnodes against a real daemon: OpenPBS's listings (``src/cmds/pbsnodes.c``: -a
blocks, -l lines, -S and -Sj tables, -F dsv and json) and its marks (-o, -r, -c, -C)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from batchclient import nodes
from daemon_proc import Daemon
from pbs_commands import ok, run

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

USAGE = (
    "usage:\tpbsnodes [-{o|r}][-C comment][-s server] host host ...\n"
    "\tpbsnodes -l [-s server]\n"
    "\tpbsnodes [-s server] -v vnode vnode ...\n"
    "\tpbsnodes -a[v][S[j][L]][-F format][-D delim][-s server]\n"
    "\tpbsnodes -[H][S[j][L]][-F format][-D delim] host host ...\n"
    "\tpbsnodes --version\n\n"
)


@pytest.fixture(scope="module")
def busy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """Job 1 on node001 (two chunks of 2 CPUs and 512mb), nothing else."""
    tmp = tmp_path_factory.mktemp("pbsnodes")
    conf = tmp / "tiny.toml"
    conf.write_text(SITE)
    with Daemon(Path(tmp), "--speed", "1", config=str(conf)) as d:
        ok(d, "qsub", "-l", "select=2:ncpus=2:mem=512mb", stdin="sleep 100\n")
        yield d


def test_all_lists_each_host_in_a_block(busy: Daemon) -> None:
    out = ok(busy, "pbsnodes", "-a")
    assert out.split("\n\n")[0] == "\n".join(
        [
            "node001",
            "     Mom = node001",
            "     ntype = PBS",
            "     state = job-busy",
            "     pcpus = 4",
            "     jobs = 1.tiny/0, 1.tiny/1, 1.tiny/2, 1.tiny/3",
            "     resources_available.host = node001",
            "     resources_available.mem = 8gb",
            "     resources_available.ncpus = 4",
            "     resources_available.vnode = node001",
            "     resources_assigned.mem = 1gb",
            "     resources_assigned.ncpus = 4",
            "     resv_enable = True",
            "     sharing = default_shared",
        ]
    )
    assert out.count("\n\n") == 3 and out.endswith("sharing = default_shared\n\n")
    # Each node is its own vnode: -av, -v and -H show the same blocks.
    assert ok(busy, "pbsnodes", "-av") == out
    assert ok(busy, "qnodes", "-av") == out
    first = out.split("\n\n")[0] + "\n\n"
    assert ok(busy, "pbsnodes", "-v", "node001") == first
    assert ok(busy, "pbsnodes", "-H", "node001", "-s", "elsewhere") == first


def test_summaries(busy: Daemon) -> None:
    assert ok(busy, "pbsnodes", "-aSj").splitlines() == [
        "                                                        mem       ncpus   nmics   ngpus",
        "vnode           state           njobs   run   susp      f/t        f/t     f/t     f/t   jobs",
        "--------------- --------------- ------ ----- ------ ------------ ------- ------- ------- -------",
        "node001         job-busy             1     1      0      7gb/8gb     0/4     0/0     0/0 1",
        "node002         free                 0     0      0      8gb/8gb     4/4     0/0     0/0 --",
        "node003         free                 0     0      0      8gb/8gb     4/4     0/0     0/0 --",
    ]  # fmt: skip
    assert ok(busy, "pbsnodes", "-aS").splitlines()[2:] == [
        "node001         job-busy        --       --       node001         --              8gb"
        "       4       0       0 --",
        "node002         free            --       --       node002         --              8gb"
        "       4       0       0 --",
        "node003         free            --       --       node003         --              8gb"
        "       4       0       0 --",
    ]


def test_json_and_dsv(busy: Daemon) -> None:
    doc = json.loads(ok(busy, "pbsnodes", "-F", "json", "node001"))
    assert doc["pbs_server"] == "tiny" and isinstance(doc["timestamp"], int)
    assert doc["nodes"] == {
        "node001": {
            "Mom": "node001",
            "ntype": "PBS",
            "state": "job-busy",
            "pcpus": 4,
            "jobs": ["1.tiny"],
            "resources_available": {
                "host": "node001",
                "mem": "8gb",
                "ncpus": 4,
                "vnode": "node001",
            },
            "resources_assigned": {"mem": "1gb", "ncpus": 4},
            "resv_enable": "True",
            "sharing": "default_shared",
        }
    }
    assert ok(busy, "pbsnodes", "-F", "dsv", "-D", ";", "node002") == (
        "Name=node002;Mom=node002;ntype=PBS;state=free;pcpus=4;"
        "resources_available.host=node002;resources_available.mem=8gb;"
        "resources_available.ncpus=4;resources_available.vnode=node002;"
        "resources_assigned.mem=0kb;resources_assigned.ncpus=0;resv_enable=True;"
        "sharing=default_shared\n"
    )


def test_summaries_as_dsv_and_json(busy: Daemon) -> None:
    assert ok(busy, "pbsnodes", "-Sj", "-F", "dsv", "node001") == (
        "vnode=node001|state=job-busy|njobs=1|run=1|susp=0|mem(f/t)=7gb/8gb|"
        "ncpus(f/t)=0/4|nmics(f/t)=0/0|ngpus(f/t)=0/0|jobs=1.tiny\n"
    )
    assert ok(busy, "pbsnodes", "-S", "-F", "dsv", "-D", ",", "node002") == (
        "vnode=node002,state=free,OS=--,hardware=--,host=node002,queue=--,mem=8gb,ncpus=4,"
        "nmics=0,ngpus=0,comment=--\n"
    )
    jobs = json.loads(ok(busy, "pbsnodes", "-aSj", "-F", "json"))["nodes"]
    assert jobs["node001"] == {
        "State": "job-busy",
        "Total Jobs": 1,
        "Running Jobs": 1,
        "Suspended Jobs": 0,
        "mem f/t": "7gb/8gb",
        "ncpus f/t": "0/4",
        "nmics f/t": "0/0",
        "ngpus f/t": "0/0",
        "jobs": ["1.tiny"],
    }
    assert jobs["node002"]["jobs"] == []
    table = json.loads(ok(busy, "pbsnodes", "-S", "-F", "json", "node003"))["nodes"]
    assert table == {
        "node003": {
            "State": "free",
            "OS": "--",
            "hardware": "--",
            "host": "node003",
            "queue": "--",
            "Memory": "8gb",
            "ncpus": 4,
            "nmics": 0,
            "ngpus": 0,
            "comment": "--",
        }
    }


def test_marks_and_comments(busy: Daemon) -> None:
    d = busy
    assert ok(d, "pbsnodes", "-o", "-C", "bad fan", "node002", "node003") == ""
    assert ok(d, "pbsnodes", "-l") == (
        "node002              offline bad fan\nnode003              offline bad fan\n"
    )
    assert ok(d, "pbsnodes", "-C", "fan replaced", "node002") == ""
    assert ok(d, "pbsnodes", "-l").splitlines()[0] == "node002              offline fan replaced"
    assert ok(d, "pbsnodes", "-r", "node002") == ""
    assert ok(d, "qnodes", "--down", "node001") == ""  # -r leaves a down node down
    assert ok(d, "pbsnodes", "-r", "node001") == ""
    assert ok(d, "pbsnodes", "-l") == (
        "node001              down \nnode003              offline bad fan\n"
    )
    assert ok(d, "pbsnodes", "-c", "node001", "node003") == ""
    assert ok(d, "pbsnodes", "-l") == ""


def test_a_comment_needs_a_mark_and_errors_name_the_node(busy: Daemon) -> None:
    out = run(busy, "pbsnodes", "-C", "note", "node002", "node009")
    assert (out.returncode, out.stdout) == (1, "")
    assert out.stderr == (
        "Error marking node node002 - batchd keeps a comment only on an offline or down node\n"
        "Error marking node node009 - Unknown node\n"
    )
    listed = run(busy, "pbsnodes", "node009", "node002")
    assert listed.returncode == 1 and listed.stdout.startswith("node002\n")
    assert listed.stderr == "Node: node009,  Error: Unknown node\n"


@pytest.mark.parametrize(
    "argv,first",
    [
        ([], ""),
        (["-o"], ""),  # no node named
        (["-l", "node001"], ""),
        (["-a", "-o", "node001"], ""),
        (["-x"], "pbsnodes: invalid option -- 'x'\n"),
        (["-C"], "pbsnodes: option requires an argument -- 'C'\n"),
        (["-oS", "node001"], ""),
    ],
)
def test_bad_command_lines_print_the_usage(busy: Daemon, argv: list[str], first: str) -> None:
    out = run(busy, "pbsnodes", *argv)
    assert (out.returncode, out.stdout, out.stderr) == (1, "", first + USAGE)


def test_q_keeps_quiet(busy: Daemon) -> None:
    for argv in (["-a", "-o", "-q", "node001"], ["-qC", "note", "node001", "node009"]):
        out = run(busy, "pbsnodes", *argv)
        assert (out.returncode, out.stdout, out.stderr) == (1, "", ""), argv


@pytest.mark.parametrize(
    "total,assigned,column",
    [
        ("8gb", "1gb", "7gb/8gb"),
        ("1877444kb", "0kb", "2gb/2gb"),  # ((v % 1024) + v) >> 10, twice
        ("1536mb", "512mb", "1gb/2gb"),
        ("16gb", "1536mb", "14gb/16gb"),  # assigned rounded up to 2gb
    ],
)
def test_mem_columns_round_as_pbsnodes(total: str, assigned: str, column: str) -> None:
    assert nodes.free_total_mem(total, assigned) == column
    assert nodes.summary_mem(total) == column.partition("/")[2]
