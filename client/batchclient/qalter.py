"""qalter: change a queued or held job (PATCH /jobs/{id} with JobAlter)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import jobattrs
from .cli import Parser, UsageError, run
from .hints import Any
from .jobops import check_ids, for_each_job, job_path
from .resources import ResourceError, Resources, parse_resources

PROG = "qalter"
USAGE = (
    "qalter [-l walltime=...|nodes=N|nodes=MIN-MAX|select=N] [-p PRIO] [-N NAME] [-q QUEUE] "
    "[-W utility=T:V,T:V...] [-W speedup=downey:A:SIGMA|fixed] job_id..."
)


def build_parser() -> Parser:
    p = Parser(PROG, usage=USAGE, description="Change attributes of queued or held jobs.")
    p.add_argument("-l", dest="resources", action="append", metavar="RES[,RES...]")
    p.add_argument("-p", dest="priority", metavar="PRIO")
    p.add_argument("-N", dest="name", metavar="NAME")
    p.add_argument("-q", dest="queue", metavar="QUEUE")
    p.add_argument("-W", dest="attrs", action="append", metavar="utility=...|speedup=...")
    p.add_argument("ids", nargs="+", metavar="job_id")
    return p


def build_alter(ns: argparse.Namespace) -> dict[str, Any]:
    """The JobAlter body: only the attributes given."""
    body: dict[str, Any] = {}
    try:
        res = parse_resources(ns.resources or [])
    except ResourceError as exc:
        raise UsageError(f"-l {exc}") from None
    try:
        if ns.name is not None:
            body["name"] = jobattrs.check_name(ns.name)
        if ns.queue:
            body["queue"] = ns.queue
        if res.walltime is not None:
            body["walltime"] = res.walltime
        if ns.priority is not None:
            body["priority"] = jobattrs.parse_priority(ns.priority)
        if res.nodes is not None or res.wide or res.place is not None:
            _whole_nodes_only(res)
        if res.nodes is not None:
            body["nodes"] = res.nodes
        if res.nodes_max is not None:
            body["nodes_max"] = res.nodes_max
        body.update(jobattrs.parse_w_attrs(ns.attrs or [], allowed=("utility", "speedup")))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not body:
        raise UsageError("nothing to change: give -l, -p, -N, -q, -W utility= or -W speedup=")
    return body


def _whole_nodes_only(res: Resources) -> None:
    """qalter changes a job's width in whole nodes (one CPU each), as ``nodes=N`` or
    ``select=N`` ask; chunks with more resources are for qsub."""
    plain = res.nodes_spec is None or res.nodes_spec.isdigit()
    if res.select is not None:
        plain = all(set(c) <= {"count", "ncpus"} and c.get("ncpus", 1) == 1 for c in res.select)
    if not plain or res.place is not None or res.wide:
        raise ValueError(
            "-l: qalter changes the width as nodes=N, nodes=MIN-MAX or select=N; "
            "to ask for other resources, qdel the job and qsub it again"
        )


def _main(argv: list[str]) -> int:
    ns = build_parser().parse_intermixed_args(argv)
    body = build_alter(ns)
    ids = check_ids(ns.ids)
    return for_each_job(PROG, ids, lambda client, jid: client.patch(job_path(jid), body))


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
