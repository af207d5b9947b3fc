"""pbsnodes: OpenPBS's node command (``src/cmds/pbsnodes.c``): list hosts and vnodes
(GET /nodes), mark them offline or back in service and comment them (PATCH /nodes/{name}).

Its options combine as OpenPBS's getopt loop lets them: one operation (-a, -l, -o, -r,
-c, -C alone, -H, or node names), a bad combination or a missing operand prints
pbsnodes' usage and exits 1. Each batchd node is a host and its one vnode, so -v and
-H list what the hosts do. batchd keeps a node's comment with its offline or down mark.
"""

from __future__ import annotations

import getopt
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from . import nodes as fmt
from .attrs import node_attrs
from .cli import run, say
from .hints import Any
from .pbsjson import VERSION, value_of
from .text import escape, json_safe
from .transport import ApiError, Client, quote

PROG = "pbsnodes"
OPTIONS = "acC:D:F:HjlLoqrs:Sv"
FORMATS = ("default", "dsv", "json")


def usage(prog: str) -> str:
    return (
        f"usage:\t{prog} [-{{o|r}}][-C comment][-s server] host host ...\n"
        f"\t{prog} -l [-s server]\n"
        f"\t{prog} [-s server] -v vnode vnode ...\n"
        f"\t{prog} -a[v][S[j][L]][-F format][-D delim][-s server]\n"
        f"\t{prog} -[H][S[j][L]][-F format][-D delim] host host ...\n"
        f"\t{prog} --version\n"
    )


class BadUsage(Exception):
    """A command line pbsnodes refuses: its usage on stderr (not with -q), exit 1."""

    def __init__(self, message: str = "", quiet: bool = False) -> None:
        super().__init__(message)
        self.quiet = quiet


@dataclass
class Command:
    oper: str = "list"  # all, marked, clear, offline, reset, comment, list, hosts
    comment: str | None = None
    vnodes: bool = False
    summary: bool = False
    jobs: bool = False
    long: bool = False
    quiet: bool = False
    output: str = "default"
    delim: str = "|"
    names: list[str] = field(default_factory=list)


_LISTINGS = ("list", "all", "hosts")


def parse(argv: Sequence[str]) -> Command:
    """OpenPBS's option loop: each option allowed only after those it may follow; a wrong
    one is noted and the loop goes on (a later -q still silences the usage)."""
    if not argv:
        raise BadUsage
    try:
        opts, names = getopt.gnu_getopt(list(argv), OPTIONS)
    except getopt.GetoptError as exc:
        missing = "requires argument" in exc.msg
        what = "option requires an argument" if missing else "invalid option"
        raise BadUsage(f"{what} -- '{exc.opt}'") from None
    c = Command(names=names)
    wrong = False
    for opt, arg in opts:
        letter = opt[1]
        if letter == "a" and c.oper == "list":
            c.oper = "all"
        elif letter in "clor" and (c.oper == "list" or c.vnodes or _after_comment(c, letter)):
            c.oper = {"c": "clear", "l": "marked", "o": "offline", "r": "reset"}[letter]
        elif letter == "C" and c.oper == "list":
            c.oper, c.comment = "comment", arg
        elif letter == "C" and c.oper in ("offline", "reset"):
            c.comment = arg
        elif letter == "D" and c.oper in _LISTINGS:
            c.delim = arg
        elif letter == "F" and arg.lower() in FORMATS:
            c.output = arg.lower()
        elif letter == "H" and c.oper == "list":
            c.oper = "hosts"
        elif letter in "jLS" and c.oper in _LISTINGS:
            c.jobs = c.jobs or letter == "j"
            c.long = c.long or letter == "L"
            c.summary = c.summary or letter == "S"
        elif letter == "q":
            c.quiet = True
        elif letter == "s":
            pass  # batchd has one server: the socket or URL says where
        elif letter == "v" and c.oper in ("list", "all"):
            c.vnodes = True
        else:
            wrong = True
    needs_names = c.oper in ("clear", "offline", "reset", "hosts", "list", "comment")
    wrong = wrong or (c.oper == "marked" and bool(names)) or (needs_names and not names)
    if wrong or (c.summary and c.oper not in _LISTINGS):
        raise BadUsage(quiet=c.quiet)
    return c


def _after_comment(c: Command, letter: str) -> bool:
    """-o and -r may follow -C (the comment goes with the mark)."""
    return letter in "or" and c.oper == "comment"


# -- listings ----------------------------------------------------------------------------


def _write(lines: list[str]) -> None:
    if lines:
        sys.stdout.write("\n".join(lines) + "\n")


def _dsv(node: dict[str, Any], delim: str) -> str:
    fields = [f"Name={escape(node['name'])}"]
    for name, value in node_attrs(node):
        text = value.replace(" ", "") if name == "jobs" else value
        fields.append(f"{name}={escape(text)}")
    return delim.join(fields)


def _json_node(node: dict[str, Any]) -> dict[str, Any]:
    """A node as pbsnodes -F json writes it: resources as objects (assigned ones only
    when not zero), jobs as the list of job ids."""
    out: dict[str, Any] = {}
    for name, value in node_attrs(node):
        attr, _, resource = name.partition(".")
        if attr == "resources_assigned" and (value_of(value) == 0 or value.startswith("0")):
            out.setdefault(attr, {})
        elif resource:
            out.setdefault(attr, {})[resource] = value_of(value)
        elif name == "jobs":
            out[name] = list(dict.fromkeys(j.partition("/")[0] for j in value.split(", ")))
        else:
            out[name] = value_of(value)
    return out


def _json_summary(node: dict[str, Any], jobs: bool, long: bool) -> dict[str, Any]:
    """A node of ``pbsnodes -S -F json`` (``-Sj``: the job counts and free/total)."""
    if jobs:
        f = fmt.job_summary_fields(node, "", long)
        return {
            "State": f["state"],
            "Total Jobs": int(f["njobs"]),
            "Running Jobs": int(f["run"]),
            "Suspended Jobs": int(f["susp"]),
            **{
                f"{k[:-5]} f/t": f[k]
                for k in ("mem(f/t)", "ncpus(f/t)", "nmics(f/t)", "ngpus(f/t)")
            },
            "jobs": f["jobs"].split(",") if f["jobs"] != "--" else [],
        }
    f = fmt.summary_fields(node, long)
    return {
        "State": f["state"],
        **{k: f[k] for k in ("OS", "hardware", "host", "queue")},
        "Memory": f["mem"],
        **{k: int(f[k]) for k in ("ncpus", "nmics", "ngpus")},
        "comment": f["comment"],
    }


def _json(c: Command, nodes: list[dict[str, Any]], server: str, now: int) -> str:
    if c.summary:
        by_name = {n["name"]: _json_summary(n, c.jobs, c.long) for n in nodes}
    else:
        by_name = {n["name"]: _json_node(n) for n in nodes}
    doc = {"timestamp": now, "pbs_version": VERSION, "pbs_server": server, "nodes": by_name}
    return json_safe(json.dumps(doc, indent=4, ensure_ascii=False))


def _dsv_summary(node: dict[str, Any], c: Command) -> str:
    """A ``pbsnodes -S -F dsv`` line: the row's values by name (job ids whole)."""
    f = fmt.job_summary_fields(node, "", c.long) if c.jobs else fmt.summary_fields(node, c.long)
    return c.delim.join(f"{k}={escape(v)}" for k, v in f.items())


def _show(c: Command, nodes: list[dict[str, Any]], server: str, now: int) -> None:
    if c.output == "json":
        sys.stdout.write(_json(c, nodes, server, now) + "\n")
    elif c.summary and c.output == "dsv":
        _write([_dsv_summary(n, c) for n in nodes])
    elif c.summary:
        _write(fmt.summary(nodes, jobs=c.jobs, server=server, long=c.long))
    elif c.output == "dsv":
        _write([_dsv(n, c.delim) for n in nodes])
    else:
        _write([line for n in nodes for line in fmt.node_block(n)])


def _listing(client: Client, c: Command) -> int:
    data = client.get("/nodes")
    nodes: list[dict[str, Any]] = data["nodes"]
    server, now = str(data.get("server", "")), int(data.get("now", 0))
    if c.oper == "marked":
        _write([fmt.marked_line(n) for n in nodes if fmt.is_marked(n)])
        return 0
    if c.oper == "all":
        if not nodes and not c.quiet:
            say(PROG, "No nodes found")
        _show(c, nodes, server, now)
        return 0
    by_name = {n["name"]: n for n in nodes}
    code = 0
    picked: list[dict[str, Any]] = []
    if c.oper == "hosts":
        wanted = set(c.names)
        picked = [n for n in nodes if (n.get("resources_available") or {}).get("host") in wanted]
    for name in c.names:
        if name not in by_name:
            sys.stderr.write(f"Node: {escape(name)},  Error: Unknown node\n")
            code = 1
        elif c.oper == "list":
            picked.append(by_name[name])
    _show(c, picked, server, now)
    return code


# -- marks and comments ------------------------------------------------------------------


def _change(client: Client, name: str, c: Command) -> dict[str, Any] | None:
    """The PATCH body for one node, or None when it is already as asked."""
    if c.oper == "offline":
        return {"state": "offline"}
    if c.oper == "clear":
        return {"state": "online"}
    state = str(client.get(f"/nodes/{quote(name)}")["state"])
    marks = [s for s in state.split(",") if s in ("offline", "down")]
    if c.oper == "reset":  # clears offline; a down node stays down (with the comment)
        if marks == ["offline"]:
            return {"state": "online"}
        return {"state": "down"} if "down" in marks and c.comment is not None else None
    if not marks:
        raise ApiError(409, "conflict", "batchd keeps a comment only on an offline or down node")
    return {"state": marks[0]}


def _mark(client: Client, c: Command) -> int:
    code = 0
    for name in c.names:
        try:
            body = _change(client, name, c)
            if body is not None and c.comment is not None and body["state"] != "online":
                body["comment"] = c.comment[:79]  # pbsnodes sends at most 79 characters
            if body is not None:
                client.patch(f"/nodes/{quote(name)}", body)
        except ApiError as exc:
            if not c.quiet:
                reason = "Unknown node" if exc.status == 404 else exc.message
                sys.stderr.write(f"Error marking node {escape(name)} - {escape(reason)}\n")
            code = 1
    return code


def _main(argv: list[str]) -> int:
    if argv == ["--version"]:
        sys.stdout.write(f"pbs_version = {VERSION}\n")
        return 0
    try:
        c = parse(argv)
    except BadUsage as exc:
        if not exc.quiet:
            if str(exc):
                say(PROG, str(exc))
            sys.stderr.write(usage(PROG) + "\n")
        return 1
    client = Client()
    if c.oper in ("offline", "reset", "clear", "comment"):
        return _mark(client, c)
    return _listing(client, c)


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv, usage=1, refused=1)


if __name__ == "__main__":
    sys.exit(main())
