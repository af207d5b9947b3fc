"""pbsnodes' layouts (``src/cmds/pbsnodes.c``): -a blocks, -l lines, -S and -Sj summaries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .attrs import node_attrs
from .hints import Any
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


_UNITS = {"": 0, "k": 10, "m": 20, "g": 30, "t": 40, "p": 50}


def size_bytes(text: str) -> int:
    """``512mb`` -> bytes (the daemon's sizes: an integer and a unit in b kb ... pb)."""
    digits = text.rstrip("bkmgtpBKMGTP")
    unit = text[len(digits) :].lower().removesuffix("b")
    return int(digits or 0) << _UNITS.get(unit, 0)


def size_text(value: int) -> str:
    """Bytes as pbsnodes shows them: the largest unit that holds them exactly."""
    for unit, shift in (("pb", 50), ("tb", 40), ("gb", 30), ("mb", 20), ("kb", 10)):
        if value and value % (1 << shift) == 0:
            return f"{value >> shift}{unit}"
    return "0kb" if value == 0 else f"{value}b"


def _available(node: Obj) -> Obj:
    return node.get("resources_available") or {"ncpus": "1"}


def _assigned(node: Obj) -> Obj:
    return node.get("resources_assigned") or {"ncpus": "1" if node.get("jobs") else "0"}


def summary_row(node: Obj) -> str:
    name = node["name"]
    avail = _available(node)
    return (
        f"{_cut(name, 15)} {_cut(node['state'], 15)} {'--':<8} {'--':<8} "
        f"{_cut(name, 15)} {'--':<10} {cut(escape(avail.get('mem', '0kb')), 8):>8} "
        f"{avail.get('ncpus', '1'):>7} {'0':>7} {'0':>7} "
        f"{escape(node.get('comment') or '--')}"
    )


def _short_job(job_id: str, server: str) -> str:
    seq, _, srv = job_id.partition(".")
    return seq if srv == server else job_id


def job_summary_row(node: Obj, server: str) -> str:
    jobs = node.get("jobs") or []
    avail, used = _available(node), _assigned(node)
    cpus = int(avail.get("ncpus", 1))
    free = max(0, cpus - int(used.get("ncpus", 0)))
    mem = size_bytes(str(avail.get("mem", "0kb")))
    mem_free = max(0, mem - size_bytes(str(used.get("mem", "0kb"))))
    mem_ft = f"{size_text(mem_free)}/{size_text(mem)}"
    names = escape(",".join(_short_job(j, server) for j in jobs) or "--")
    return (
        f"{_cut(node['name'], 15)} {_cut(node['state'], 15)} {len(jobs):>6} "
        f"{len(jobs):>5} {0:>6} {mem_ft:>12} {f'{free}/{cpus}':>7} {'0/0':>7} {'0/0':>7} "
        f"{names}"
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
