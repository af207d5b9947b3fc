"""qnodes (pbsnodes): list nodes (GET /nodes), mark them offline, online or down
(PATCH /nodes/{name} with NodeChange)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import nodes as fmt
from .cli import EXIT_REFUSED, Parser, UsageError, add_json_flag, print_json, run, say, wants_json
from .hints import Any
from .transport import ApiError, Client, quote

PROG = "qnodes"
USAGE = """
  qnodes [-a[v]] [-S [-j]] [-F json] [-s server] [node...]
  qnodes -l [-F json]
  qnodes {-o|-r|--down} [-C comment] node..."""


def build_parser() -> Parser:
    p = Parser(PROG, usage=USAGE, description="Show and mark batchd nodes (like pbsnodes).")
    flag = p.add_argument
    flag("-a", dest="all", action="store_true", help="list all nodes (the default)")
    flag("-v", dest="vnodes", action="store_true", help="with vnodes (each node is its own)")
    flag("-s", dest="server", metavar="SERVER", help="accepted: batchd has one server")
    flag("-l", dest="marked", action="store_true", help="list nodes that are offline or down")
    flag("-o", dest="offline", action="store_true", help="mark the nodes offline")
    flag("-r", dest="online", action="store_true", help="clear offline: mark the nodes online")
    flag("--down", dest="down", action="store_true", help="mark the nodes down (a failure)")
    flag("-C", dest="comment", metavar="COMMENT", help="comment to set with -o, -r or --down")
    flag("-S", dest="summary", action="store_true", help="one line per node")
    flag("-j", dest="jobs", action="store_true", help="with -S: the job summary")
    add_json_flag(p)
    p.add_argument("names", nargs="*", metavar="node")
    return p


def _change(client: Client, ns: argparse.Namespace, state: str) -> int:
    if not ns.names:
        raise UsageError(f"mark nodes {state}: name at least one node")
    body: dict[str, Any] = {"state": state}
    if ns.comment is not None:
        body["comment"] = ns.comment
    code = 0
    for name in ns.names:
        try:
            client.patch(f"/nodes/{quote(name)}", body)
        except ApiError as exc:
            reason = "Unknown node" if exc.status == 404 else exc.message
            say(PROG, f"Error marking node {name} - {reason}")
            code = EXIT_REFUSED
    return code


def _main(argv: list[str]) -> int:
    ns = build_parser().parse_intermixed_args(argv)
    changes = [
        s for s, on in (("offline", ns.offline), ("online", ns.online), ("down", ns.down)) if on
    ]
    if len(changes) + ns.marked + ns.all > 1:
        raise UsageError("conflicting options: use one of -a, -l, -o, -r, --down")
    if ns.comment is not None and not changes:
        raise UsageError("-C goes with -o, -r or --down")
    if ns.jobs and not ns.summary:
        raise UsageError("-j goes with -S")
    if changes and (ns.summary or ns.format):
        raise UsageError("-S and -F go with listings, not with -o, -r or --down")
    if ns.marked and ns.names:
        raise UsageError("-l lists all marked nodes; it takes no node names")
    as_json = wants_json(ns.format)
    client = Client()
    if changes:
        return _change(client, ns, changes[0])

    data = client.get("/nodes")
    nodes = data["nodes"]
    code = 0
    if ns.names:
        by_name = {n["name"]: n for n in nodes}
        picked = []
        for name in ns.names:
            if name in by_name:
                picked.append(by_name[name])
            else:
                say(PROG, f"Unknown node {name}")
                code = EXIT_REFUSED
        nodes = picked
    if ns.marked:
        nodes = [n for n in nodes if fmt.is_marked(n)]
    if as_json:
        print_json(dict(data, nodes=nodes))
        return code
    if ns.marked:
        lines = [fmt.marked_line(n) for n in nodes]
    elif data.get("grid"):
        lines = fmt.by_machine(
            nodes, data["grid"], table=ns.summary, jobs=ns.jobs, server=data.get("server", "")
        )
    elif ns.summary:
        lines = fmt.summary(nodes, jobs=ns.jobs, server=data.get("server", ""))
    else:
        lines = [line for n in nodes for line in fmt.node_block(n)]
    if lines:
        sys.stdout.write("\n".join(lines) + "\n")
    return code


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
