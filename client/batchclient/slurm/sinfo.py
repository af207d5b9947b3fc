"""sinfo: partitions (batchd's queues, GET /queues) and the nodes of their machines
(GET /nodes), as Slurm's sinfo prints them (src/sinfo/print.c, opts.c)."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

from ..hints import Any
from ..nodes import size_bytes
from ..text import escape
from ..transport import Client
from . import hostlist, times
from .command import SlurmError, SlurmParser, run

PROG = "sinfo"
DEFAULT = "%9P %.5a %.10l %.6D %.6t %N"
SUMMARIZE = "%9P %.5a %.10l %.16F  %N"
LONG = "%9P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N"
NODE = "%#N %.6D %#P %6t"
NODE_LONG = "%#N %.6D %#P %11T %.4c %.8z %.6m %.8d %.6w %.8f %20E"
HEADERS = {
    "P": "PARTITION", "R": "PARTITION", "a": "AVAIL", "l": "TIMELIMIT", "D": "NODES",
    "t": "STATE", "T": "STATE", "N": "NODELIST", "n": "HOSTNAMES", "c": "CPUS",
    "m": "MEMORY", "C": "CPUS(A/I/O/T)", "F": "NODES(A/I/O/T)", "s": "JOB_SIZE",
    "r": "ROOT", "h": "OVERSUBSCRIBE", "g": "GROUPS", "z": "S:C:T", "d": "TMP_DISK",
    "w": "WEIGHT", "f": "AVAIL_FEATURES", "E": "REASON",
}  # fmt: skip
LONG_STATES = {
    "idle": "idle", "alloc": "allocated", "mix": "mixed", "drain": "drained",
    "drng": "draining", "down": "down", "resv": "reserved",
}  # fmt: skip
_SPEC = re.compile(r"%(\.)?(#|\d+)?([A-Za-z])")


def build_parser() -> SlurmParser:
    p = SlurmParser(
        PROG, description="Show partitions and nodes, as Slurm's sinfo.", conflict_handler="resolve"
    )
    add = p.add_argument
    add("-N", "--Node", dest="node", action="store_true", help="one line per node")
    add("-l", "--long", action="store_true", help="more fields")
    add("-o", "--format", metavar="FORMAT", help="fields as %P %a %l %D %t %T %N %c %m %C %F")
    add("-p", "--partition", metavar="PART[,PART...]", help="only these partitions")
    add("-s", "--summarize", action="store_true", help="one line per partition")
    add("-h", "--noheader", action="store_true", help="no header line")
    add("-n", "--nodes", metavar="NODES", help="only these nodes (a hostlist)")
    add("-t", "--states", metavar="STATE[,STATE...]", help="only nodes in these states")
    return p


def node_state(node: dict[str, Any]) -> str:
    """sinfo's short state of a daemon node view."""
    text = str(node.get("state", ""))
    busy = bool(node.get("jobs"))
    if "down" in text:
        return "down"
    if "offline" in text:
        return "drng" if busy else "drain"
    if "resv" in text or node.get("reservation"):
        return "resv" if not busy else "mix"
    if not busy:
        return "idle"
    total, used = _cpus(node), _used_cpus(node)
    return "mix" if used < total else "alloc"


def _cpus(node: dict[str, Any]) -> int:
    return int((node.get("resources_available") or {}).get("ncpus", 1))


def _used_cpus(node: dict[str, Any]) -> int:
    if "exclusive" in str(node.get("state", "")):
        return _cpus(node)  # a node given whole to its job
    assigned = node.get("resources_assigned") or {}
    return int(assigned.get("ncpus", _cpus(node) if node.get("jobs") else 0))


def _mem_mb(node: dict[str, Any]) -> int:
    return size_bytes(str((node.get("resources_available") or {}).get("mem", "0kb"))) >> 20


class Group:
    """One line: a partition's nodes in one state (or all of them, with -s)."""

    def __init__(self, queue: dict[str, Any], nodes: list[dict[str, Any]]) -> None:
        self.queue = queue
        self.nodes = nodes

    def value(self, letter: str) -> str:
        q, nodes = self.queue, self.nodes
        if letter == "P":
            return str(q["name"]) + ("*" if q.get("default") else "")
        if letter == "R":
            return str(q["name"])
        if letter == "a":
            return "up" if q.get("enabled", True) and q.get("started", True) else "down"
        if letter == "l":
            wall = q.get("max_walltime")
            return "infinite" if wall is None else times.short_clock(int(wall))
        if letter == "D":
            return str(len(nodes))
        if letter in ("t", "T"):
            codes = list(dict.fromkeys(node_state(n) for n in nodes)) or ["n/a"]
            code = codes[0] if len(codes) == 1 else "mix"
            return LONG_STATES.get(code, code) if letter == "T" else code
        if letter in ("N", "n"):
            return hostlist.compress([n["name"] for n in nodes])
        if letter == "c":
            return _range([_cpus(n) for n in nodes])
        if letter == "m":
            return _range([_mem_mb(n) for n in nodes])
        if letter == "C":
            return _aiot([(_used_cpus(n), _cpus(n), node_state(n)) for n in nodes])
        if letter == "F":
            return _aiot([(1 if n.get("jobs") else 0, 1, node_state(n)) for n in nodes])
        fixed = {"s": "1-infinite", "r": "no", "h": "NO", "g": "all", "z": "1:1:1",
                 "d": "0", "w": "1", "f": "(null)"}  # fmt: skip
        if letter == "E":
            return next((str(n["comment"]) for n in nodes if n.get("comment")), "none")
        return fixed[letter]


def _range(values: list[int]) -> str:
    if not values:
        return "0"
    lo, hi = min(values), max(values)
    return str(lo) if lo == hi else f"{lo}+"


def _aiot(items: list[tuple[int, int, str]]) -> str:
    """Allocated/idle/other/total: other is what down or drained nodes hold."""
    alloc = idle = other = total = 0
    for used, size, state in items:
        total += size
        if state in ("down", "drain", "drng"):
            other += size
        else:
            alloc += used
            idle += size - used
    return f"{alloc}/{idle}/{other}/{total}"


def parse_format(text: str) -> list[tuple[str, bool, int | None, str]]:
    """(text before, right-justified, width or None (#: the widest value), letter)
    for each field; SlurmError naming an unknown one."""
    out: list[tuple[str, bool, int | None, str]] = []
    pos = 0
    for m in _SPEC.finditer(text):
        if m.group(3) not in HEADERS:
            raise SlurmError(f"Invalid node format specification: {m.group(0)}")
        width = m.group(2)
        out.append((text[pos : m.start()], bool(m.group(1)),
                    -1 if width == "#" else int(width) if width else None, m.group(3)))  # fmt: skip
        pos = m.end()
    if "%" in text[pos:]:
        raise SlurmError(f"Invalid node format specification: {text[pos:]}")
    out.append((text[pos:], False, None, ""))
    return out


def render(groups: list[Group], fmt: str, header: bool) -> list[str]:
    specs = parse_format(fmt)
    rows = [[g.value(letter) if letter else "" for *_, letter in specs] for g in groups]
    widths: list[int | None] = []
    for i, (_, _, width, letter) in enumerate(specs):
        if width == -1:
            width = max([len(HEADERS[letter])] + [len(r[i]) for r in rows])
        widths.append(width)
    table = [[HEADERS.get(s[3], "") for s in specs]] if header else []
    lines = []
    for cells in table + rows:
        parts = []
        for (before, right, _, letter), width, cell in zip(specs, widths, cells, strict=True):
            text = escape(cell)
            if width is not None and letter:
                text = text[:width]
                text = text.rjust(width) if right else text.ljust(width)
            parts.append(before + text)
        lines.append("".join(parts))
    return lines


def groups(ns: Any, queues: list[dict[str, Any]], nodes: list[dict[str, Any]]) -> list[Group]:
    wanted = None if ns.partition is None else {p for p in ns.partition.split(",") if p}
    names = None if ns.nodes is None else set(_expand(ns.nodes))
    states = None if ns.states is None else {_state_word(s) for s in ns.states.split(",")}
    out: list[Group] = []
    for q in queues:
        if wanted is not None and q["name"] not in wanted:
            continue
        mine = [n for n in nodes if n.get("machine", q.get("machine")) == q.get("machine")]
        mine = [n for n in mine if names is None or n["name"] in names]
        mine = [n for n in mine if states is None or node_state(n) in states]
        if ns.node:
            out.extend(Group(q, [n]) for n in mine)
        elif ns.summarize:
            out.append(Group(q, mine))
        else:
            by_state: dict[str, list[dict[str, Any]]] = {}
            for n in mine:
                by_state.setdefault(node_state(n), []).append(n)
            out.extend(Group(q, members) for members in by_state.values())
            if not mine:
                out.append(Group(q, []))
    return out


def _expand(text: str) -> list[str]:
    try:
        return hostlist.expand(text)
    except ValueError as exc:
        raise SlurmError(str(exc)) from None


def _state_word(text: str) -> str:
    word = text.strip().lower()
    by_long = {v: k for k, v in LONG_STATES.items()}
    if word in LONG_STATES:
        return word
    if word in by_long:
        return by_long[word]
    raise SlurmError(f"Invalid node state specified: {text.strip()}")


def _main(argv: list[str]) -> int:
    ns = build_parser().parse_intermixed_args(argv)
    if ns.format is not None:
        fmt = ns.format
    elif ns.node:
        fmt = NODE_LONG if ns.long else NODE
    elif ns.summarize:
        fmt = SUMMARIZE
    else:
        fmt = LONG if ns.long else DEFAULT
    parse_format(fmt)  # refuse a bad format before asking the daemon
    client = Client()
    queues = client.get("/queues")["queues"]
    nodes = client.get("/nodes")["nodes"]
    lines = render(groups(ns, queues, nodes), fmt, header=not ns.noheader)
    if lines:
        sys.stdout.write("\n".join(lines) + "\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
