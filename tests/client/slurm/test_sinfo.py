"""sinfo's lines for tiny partitions and nodes, against Slurm's formats (src/sinfo)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from batchclient.slurm import sinfo
from batchclient.slurm.command import SlurmError

QUEUE = {"name": "workq", "machine": "m", "default": True, "enabled": True, "started": True,
         "max_walltime": 86400}  # fmt: skip
DEBUG = {"name": "debug", "machine": "m", "default": False, "enabled": False, "started": True,
         "max_walltime": 1800}  # fmt: skip


def node(name: str, state: str = "free", jobs: int = 0, used: int = 0) -> dict[str, Any]:
    return {"name": name, "machine": "m", "state": state, "jobs": ["1.s"] * jobs,
            "resources_available": {"ncpus": "4", "mem": "512mb"},
            "resources_assigned": {"ncpus": str(used)}}  # fmt: skip


NODES = [node("n01", "job-exclusive", 1, 1), node("n02", "job-busy", 1, 2), node("n03"),
         node("n04"), node("n05", "offline"), node("n06", "down")]  # fmt: skip


def ns(**kw: Any) -> SimpleNamespace:
    base = dict(partition=None, nodes=None, states=None, node=False, summarize=False)
    return SimpleNamespace(**dict(base, **kw))


def test_default_format_one_line_per_partition_and_state() -> None:
    lines = sinfo.render(sinfo.groups(ns(), [QUEUE, DEBUG], NODES), sinfo.DEFAULT, True)
    assert lines == [
        "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST",
        "workq*       up 1-00:00:00      1  alloc n01",
        "workq*       up 1-00:00:00      1    mix n02",
        "workq*       up 1-00:00:00      2   idle n[03-04]",
        "workq*       up 1-00:00:00      1  drain n05",
        "workq*       up 1-00:00:00      1   down n06",
        "debug      down      30:00      1  alloc n01",
        "debug      down      30:00      1    mix n02",
        "debug      down      30:00      2   idle n[03-04]",
        "debug      down      30:00      1  drain n05",
        "debug      down      30:00      1   down n06",
    ]


def test_summarize_node_oriented_and_counts() -> None:
    lines = sinfo.render(sinfo.groups(ns(summarize=True), [QUEUE], NODES), sinfo.SUMMARIZE, True)
    assert lines == [
        "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T)  NODELIST",
        "workq*       up 1-00:00:00          2/2/2/6  n[01-06]",
    ]
    per_node = sinfo.render(sinfo.groups(ns(node=True, states="idle,down"), [QUEUE], NODES),
                            sinfo.NODE, True)  # fmt: skip
    assert per_node == [
        "NODELIST  NODES PARTITION STATE ",
        "n03           1 workq*    idle  ",
        "n04           1 workq*    idle  ",
        "n06           1 workq*    down  ",
    ]
    cpus = sinfo.render(sinfo.groups(ns(summarize=True), [QUEUE], NODES), "%C %c %m %T", False)
    # exclusive n01 counts whole; n02 2 of 4; n05, n06 other
    assert cpus == ["6/10/8/24 4 512 mixed"]


def test_refusals() -> None:
    with pytest.raises(SlurmError, match="Invalid node format specification: %Q"):
        sinfo.parse_format("%P %Q")
    with pytest.raises(SlurmError, match="Invalid node state specified: sleepy"):
        sinfo.groups(ns(states="sleepy"), [QUEUE], NODES)
