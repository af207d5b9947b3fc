"""pbs_rsub: create an advance reservation (POST /reservations).

``-R start`` and ``-E end`` take qsub ``-a``'s ``[[[[CC]YY]MM]DD]hhmm[.SS]`` on the
daemon's clock; ``-D`` (or ``-l walltime=``) the duration; ``-l select=...`` (each
chunk on a node of its own, kept as given) or ``nodes=N`` the nodes (default 1).
Without ``-R`` it starts now. Any user may reserve, as in PBS.
batchd decides at once: it prints ``R<seq>.<server> CONFIRMED`` as PBS does once
the scheduler confirmed it, or refuses it (the nodes are not free then). Jobs go
to the reservation's queue ``R<seq>`` (``qsub -q R<seq>``). Options PBS takes for
mail, users, groups and hosts are accepted and have no effect; standing (``-r``)
and maintenance (``--hosts``) reservations are refused.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .cli import Parser, UsageError, run
from .hints import Any
from .resources import ResourceError, parse_resources
from .text import escape
from .timefmt import parse_duration, parse_exec_time
from .transport import Client

PROG = "pbs_rsub"
USAGE = (
    "pbs_rsub [-R start_time] [-E end_time] [-D duration] [-N name] [-I seconds] "
    "[--machine NAME] -l select=N|nodes=N[,walltime=...]"
)
IGNORED = ("-m", "-M", "-u", "-g", "-U", "-G", "-H", "-W", "-q")


def build_parser() -> Parser:
    p = Parser(PROG, usage=USAGE, description="Reserve nodes for a window of time.")
    add = p.add_argument
    add("-R", dest="start", metavar="start_time", help="[[[[CC]YY]MM]DD]hhmm[.SS]; default now")
    add("-E", dest="end", metavar="end_time", help="[[[[CC]YY]MM]DD]hhmm[.SS]")
    add("-D", dest="duration", metavar="duration", help="[[HH:]MM:]SS")
    add("-N", dest="name", metavar="name", help="the reservation's name")
    add("-l", dest="resources", action="append", metavar="select=N|nodes=N|walltime=...")
    add("-I", dest="block", metavar="seconds", help="accepted: batchd confirms at once")
    add("-r", dest="rrule", metavar="rrule", help=argparse.SUPPRESS)
    add("--hosts", dest="hosts", nargs="+", help=argparse.SUPPRESS)
    add("--machine", dest="machine", metavar="NAME", help="the machine (default: the first)")
    for opt in IGNORED:
        add(opt, dest=f"ignored_{opt[1]}", help=argparse.SUPPRESS)
    return p


def build_request(ns: argparse.Namespace, now: int) -> dict[str, Any]:
    if ns.rrule is not None:
        raise UsageError("-r: batchd has no standing reservations (give -R and -E or -D)")
    if ns.hosts is not None:
        raise UsageError("--hosts: batchd has no maintenance reservations")
    try:
        res = parse_resources(ns.resources or [])
    except ResourceError as exc:
        raise UsageError(f"illegal -l value: {exc}") from None
    if res.nodes_max is not None:
        raise UsageError("illegal -l value: a reservation holds a fixed number of nodes")
    start = _when(ns.start, "-R", now) if ns.start is not None else now
    duration = None
    if ns.duration is not None:
        try:
            duration = parse_duration(ns.duration)
        except ValueError as exc:
            raise UsageError(f"illegal -D value: {ns.duration}: {exc}") from None
    elif res.walltime is not None:
        duration = res.walltime
    if ns.end is not None:
        end = _when(ns.end, "-E", now)
        if duration is not None and ns.start is not None and end != start + duration:
            raise UsageError("-R, -E and -D disagree: give two of them")
        if ns.start is None and duration is not None:
            start = end - duration
        duration = end - start
    if duration is None:
        raise UsageError("give the end (-E) or the duration (-D or -l walltime=...)")
    if duration <= 0:
        raise UsageError("the reservation must end after it starts")
    body: dict[str, Any] = {
        "start": "now" if ns.start is None and ns.end is None else start,
        "duration": duration,
        "nodes": res.nodes or 1,
    }
    if res.select is not None:
        body["select"] = res.select  # kept as given: pbs_rstat shows it
    if ns.name is not None:
        body["name"] = ns.name
    if ns.machine is not None:
        body["machine"] = ns.machine
    return body


def _when(text: str, opt: str, now: int) -> int:
    try:
        return parse_exec_time(text, now)
    except ValueError as exc:
        raise UsageError(f"illegal {opt} time value: {text}: {exc}") from None


def _main(argv: list[str]) -> int:
    ns = build_parser().parse_args(argv)
    client = Client()
    now = int(client.get("/server")["now"])
    resv = client.post("/reservations", build_request(ns, now))
    sys.stdout.write(f"{escape(resv['id'])} CONFIRMED\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
