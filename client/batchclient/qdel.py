"""qdel: delete jobs (DELETE /jobs/{id}); queued jobs are removed, running ones killed."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .cli import Parser, run
from .jobops import check_ids, for_each_job, job_path

PROG = "qdel"


def build_parser() -> Parser:
    p = Parser(PROG, usage="qdel job_id...", description="Delete batchd jobs.")
    p.add_argument("ids", nargs="+", metavar="job_id")
    return p


def _main(argv: list[str]) -> int:
    ids = check_ids(build_parser().parse_intermixed_args(argv).ids)
    return for_each_job(PROG, ids, lambda client, jid: client.delete(job_path(jid)))


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
