"""qhold and qrls: set or release holds (POST /jobs/{id}/hold, /jobs/{id}/release)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .cli import Parser, UsageError, run
from .jobattrs import parse_hold_types
from .jobops import check_ids, for_each_job, job_path


def build_parser(prog: str) -> Parser:
    verb = "Hold" if prog == "qhold" else "Release holds on"
    p = Parser(prog, usage=f"{prog} [-h u|o|s|uos...] job_id...", description=f"{verb} jobs.")
    p.add_argument("-h", dest="types", default="u", metavar="TYPES", help="u, o and/or s")
    p.add_argument("ids", nargs="+", metavar="job_id")
    return p


def hold_main(prog: str, action: str, argv: list[str]) -> int:
    ns = build_parser(prog).parse_intermixed_args(argv)
    try:
        types = parse_hold_types(ns.types)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    ids = check_ids(ns.ids)
    body = {"types": types}
    return for_each_job(prog, ids, lambda client, jid: client.post(job_path(jid, action), body))


def main(argv: Sequence[str] | None = None) -> int:
    return run("qhold", lambda args: hold_main("qhold", "/hold", args), argv)


if __name__ == "__main__":
    sys.exit(main())
