"""qmove: move queued, held or waiting jobs to another queue (POST /jobs/{id}/move).

The destination is ``queue`` or ``queue@server``; the job must fit the queue's
limits, as at submission; a running job is refused.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .cli import Parser, UsageError, run
from .jobops import check_ids, for_each_job, job_path

PROG = "qmove"


def build_parser() -> Parser:
    p = Parser(PROG, usage="qmove destination job_identifier...", description="Move jobs.")
    p.add_argument("destination", metavar="destination")
    p.add_argument("ids", nargs="+", metavar="job_identifier")
    return p


def parse_destination(text: str) -> str:
    """``queue`` or ``queue@server`` -> the queue."""
    queue, _, _server = text.partition("@")
    if not queue or any(c.isspace() for c in text):
        raise UsageError(f"illegally formed destination: {text}")
    return queue


def _main(argv: list[str]) -> int:
    ns = build_parser().parse_intermixed_args(argv)
    body = {"queue": parse_destination(ns.destination)}
    ids = check_ids(ns.ids)
    return for_each_job(PROG, ids, lambda client, jid: client.post(job_path(jid, "/move"), body))


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
