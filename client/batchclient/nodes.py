"""pbsnodes' layouts (``src/cmds/pbsnodes.c``): -a blocks, -l lines, -S and -Sj summaries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .attrs import node_attrs
from .text import cut, escape, pad

Obj = Mapping[str, Any]


def node_block(node: Obj) -> list[str]:
    """The node name, its attributes indented five spaces, a blank line."""
    lines = [f"     {escape(k)} = {escape(v)}" for k, v in node_attrs(node)]
    return [escape(node["name"]), *lines, ""]


def is_marked(node: Obj) -> bool:
    """Offline or down: what ``pbsnodes -l`` lists."""
    state = str(node.get("state", ""))
    return "offline" in state or "down" in state


def marked_line(node: Obj) -> str:
    return f"{pad(escape(node['name']), 20)} {escape(node['state'])} {escape(node.get('comment') or '')}"


def _cut(value: object, width: int) -> str:
    """Escaped ``value`` cut to ``width`` columns and padded to them (pbsnodes -S cuts)."""
    return pad(cut(escape(value), width), width)


SUMMARY_HEADER = [
    "vnode           state           OS       hardware host            queue        mem     "
    "ncpus   nmics   ngpus  comment",
    "--------------- --------------- -------- -------- --------------- ---------- -------- "
    "------- ------- ------- ---------",
]
JOB_SUMMARY_HEADER = [
    "                                                        mem       ncpus   nmics   ngpus",
    "vnode           state           njobs   run   susp      f/t        f/t     f/t     f/t   jobs",
    "--------------- --------------- ------ ----- ------ ------------ ------- ------- ------- -------",
]


def summary_row(node: Obj) -> str:
    name = node["name"]
    return (
        f"{_cut(name, 15)} {_cut(node['state'], 15)} {'--':<8} {'--':<8} "
        f"{_cut(name, 15)} {'--':<10} {'0kb':>8} {'1':>7} {'0':>7} {'0':>7} "
        f"{escape(node.get('comment') or '--')}"
    )


def _short_job(job_id: str, server: str) -> str:
    seq, _, srv = job_id.partition(".")
    return seq if srv == server else job_id


def job_summary_row(node: Obj, server: str) -> str:
    jobs = node.get("jobs") or []
    free = max(0, 1 - len(jobs))
    names = escape(",".join(_short_job(j, server) for j in jobs) or "--")
    return (
        f"{_cut(node['name'], 15)} {_cut(node['state'], 15)} {len(jobs):>6} "
        f"{len(jobs):>5} {0:>6} {'0kb/0kb':>12} {f'{free}/1':>7} {'0/0':>7} {'0/0':>7} {names}"
    )


def summary(nodes: Sequence[Obj], jobs: bool = False, server: str = "") -> list[str]:
    if jobs:
        return JOB_SUMMARY_HEADER + [job_summary_row(n, server) for n in nodes]
    return SUMMARY_HEADER + [summary_row(n) for n in nodes]


def by_machine(
    nodes: Sequence[Obj], structure: str, *, table: bool, jobs: bool, server: str
) -> list[str]:
    """A grid site's nodes grouped by machine, each group under a line naming the machine,
    its nodes and how many are free; ``table``: the -S (-j) table for each group."""
    groups: dict[str, list[Obj]] = {}
    for n in nodes:
        groups.setdefault(str(n.get("machine", "")), []).append(n)
    lines: list[str] = []
    for machine, members in groups.items():
        free = sum(1 for n in members if n.get("state") == "free")
        lines.append(
            f"# machine {escape(machine)} (grid {escape(structure)}): {len(members)} nodes, "
            f"{free} free"
        )
        if table:
            lines += [*summary(members, jobs=jobs, server=server), ""]
        else:
            lines += [line for n in members for line in node_block(n)]
    return lines
