"""pbsnodes' layouts (``src/cmds/pbsnodes.c``): -a blocks, -l lines, -S and -Sj summaries."""

from __future__ import annotations

import re
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


def _cut(value: object, width: int, long: bool) -> str:
    """Escaped ``value`` padded to ``width`` columns, cut to them unless ``long`` (-L)."""
    text = escape(value)
    return pad(text if long else cut(text, width), width)


def _right(value: object, width: int, long: bool) -> str:
    text = escape(value)
    return (text if long else cut(text, width)).rjust(width)


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


# pbsnodes -S reads a size as strtol's number and the letter after it: k m g t are
# powers of 1024, anything else (b, p) bytes; it prints " kmgtp?"[magnitude] + "b".
_MAGNITUDE = {"k": 1, "m": 2, "g": 3, "t": 4}
_SUFFIX = " kmgtp?"


def _magnitude(text: str) -> tuple[int, int]:
    match = re.match(r"\s*([+-]?[0-9]*)(.?)", text)
    assert match is not None  # the pattern matches every string
    digits, letter = match.groups()
    number = int(digits) if digits not in ("", "+", "-") else 0
    return number, _MAGNITUDE.get(letter, 0)


def _shrink(value: int, magnitude: int) -> tuple[int, int]:
    """pbsnodes' rounding to at most three digits: ``((v % 1024) + v) >> 10``."""
    while value > 999:
        value = ((value % 1024) + value) >> 10
        magnitude += 1
    return value, magnitude


def _size(value: int, magnitude: int) -> str:
    return f"{value}{_SUFFIX[min(magnitude, len(_SUFFIX) - 1)]}b"


def summary_mem(total: str) -> str:
    """The mem column of ``pbsnodes -S``: resources_available.mem, three digits at most."""
    return _size(*_shrink(*_magnitude(total)))


def free_total_mem(total: str, assigned: str | None) -> str:
    """The mem f/t column of ``pbsnodes -Sj``: what is not assigned over the total, each in
    pbsnodes' rounding (the free part is 0 when the node shows no assigned mem)."""
    value, mag = _magnitude(total)
    free, free_mag = 0, mag
    if assigned is not None:
        used, used_mag = _magnitude(assigned)
        while used_mag != mag:
            if used_mag < mag:
                used, used_mag = ((used % 1024) + used) >> 10, used_mag + 1
            else:
                used, used_mag = used << 10, used_mag - 1
        free, free_mag = _shrink(value - used, mag)
    return f"{_size(free, free_mag)}/{_size(*_shrink(value, mag))}"


def size_text(value: int) -> str:
    """Bytes as the largest unit that holds them exactly."""
    for unit, shift in (("pb", 50), ("tb", 40), ("gb", 30), ("mb", 20), ("kb", 10)):
        if value and value % (1 << shift) == 0:
            return f"{value >> shift}{unit}"
    return "0kb" if value == 0 else f"{value}b"


def _available(node: Obj) -> Obj:
    return node.get("resources_available") or {"ncpus": "1"}


def _assigned(node: Obj) -> Obj:
    return node.get("resources_assigned") or {"ncpus": "1" if node.get("jobs") else "0"}


def _state(node: Obj, long: bool) -> str:
    """Its first state (pbsnodes -S cuts at the first comma), all of them with -L."""
    state = str(node["state"])
    return state if long else state.split(",")[0]


def summary_fields(node: Obj, long: bool = False) -> dict[str, str]:
    """The values of a node's ``pbsnodes -S`` row, by the names ``-F dsv`` gives them."""
    name = node["name"]
    avail = _available(node)
    return {
        "vnode": name,
        "state": _state(node, long),
        "OS": str(avail.get("OS", "--")),
        "hardware": str(avail.get("hardware", "--")),
        "host": str(avail.get("host", name)),
        "queue": str(node.get("queue") or "--"),
        "mem": summary_mem(str(avail["mem"])) if "mem" in avail else "0kb",
        "ncpus": str(avail.get("ncpus", "0")),
        "nmics": str(avail.get("nmics", "0")),
        "ngpus": str(avail.get("ngpus", "0")),
        "comment": str(node.get("comment") or "--"),
    }


def summary_row(node: Obj, long: bool = False) -> str:
    f = summary_fields(node, long)
    return (
        f"{_cut(f['vnode'], 15, long)} {_cut(f['state'], 15, long)} "
        f"{_cut(f['OS'], 8, long)} {_cut(f['hardware'], 8, long)} "
        f"{_cut(f['host'], 15, long)} {_cut(f['queue'], 10, long)} "
        f"{_right(f['mem'], 8, long)} {_right(f['ncpus'], 7, long)} "
        f"{_right(f['nmics'], 7, long)} {_right(f['ngpus'], 7, long)} {escape(f['comment'])}"
    )


def _short_job(job_id: str, server: str) -> str:
    seq, _, srv = job_id.partition(".")
    return seq if srv == server else job_id


def _free_total(avail: Obj, used: Obj, name: str) -> str:
    if name not in avail:
        return "0/0"
    total = int(avail[name])
    return f"{total - int(used.get(name, 0))}/{total}"


def job_summary_fields(node: Obj, server: str, long: bool = False) -> dict[str, str]:
    """The values of a node's ``pbsnodes -Sj`` row, by their ``-F dsv`` names; job ids of
    ``server`` shortened to their number (pass "" to keep them whole)."""
    jobs = list(dict.fromkeys(node.get("jobs") or []))
    avail, used = _available(node), _assigned(node)
    mem = str(avail["mem"]) if "mem" in avail else None
    return {
        "vnode": node["name"],
        "state": _state(node, long),
        "njobs": str(len(jobs)),
        "run": str(len(jobs)),
        "susp": "0",
        "mem(f/t)": free_total_mem(mem, used.get("mem")) if mem is not None else "0kb/0kb",
        "ncpus(f/t)": _free_total(avail, used, "ncpus"),
        "nmics(f/t)": _free_total(avail, used, "nmics"),
        "ngpus(f/t)": _free_total(avail, used, "ngpus"),
        "jobs": ",".join(_short_job(j, server) for j in jobs) or "--",
    }


def job_summary_row(node: Obj, server: str, long: bool = False) -> str:
    f = job_summary_fields(node, server, long)
    return (
        f"{_cut(f['vnode'], 15, long)} {_cut(f['state'], 15, long)} {f['njobs']:>6} "
        f"{f['run']:>5} {f['susp']:>6} {_right(f['mem(f/t)'], 12, long)} "
        f"{_right(f['ncpus(f/t)'], 7, long)} {_right(f['nmics(f/t)'], 7, long)} "
        f"{_right(f['ngpus(f/t)'], 7, long)} {escape(f['jobs'])}"
    )


def summary(
    nodes: Sequence[Obj], jobs: bool = False, server: str = "", long: bool = False
) -> list[str]:
    """``pbsnodes -S`` (``-Sj``: jobs and free/total); ``long`` (-L): nothing cut."""
    if jobs:
        return JOB_SUMMARY_HEADER + [job_summary_row(n, server, long) for n in nodes]
    return SUMMARY_HEADER + [summary_row(n, long) for n in nodes]


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
