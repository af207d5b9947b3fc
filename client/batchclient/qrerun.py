"""qrerun: put running jobs back in their queue to run again (POST /jobs/{id}/rerun).

A job submitted with ``qsub -r n`` is refused, as PBS refuses it. ``-W force`` is
accepted: the emulated job has no MoM to be unreachable, so it changes nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .cli import Parser, UsageError, run
from .jobops import check_ids, for_each_job, job_path

PROG = "qrerun"


def build_parser() -> Parser:
    p = Parser(PROG, usage="qrerun [-W force] job_identifier...", description="Rerun jobs.")
    p.add_argument("-W", dest="force", metavar="force", help="accepted (no effect in batchd)")
    p.add_argument("ids", nargs="+", metavar="job_identifier")
    return p


def _main(argv: list[str]) -> int:
    ns = build_parser().parse_intermixed_args(argv)
    if ns.force is not None and ns.force != "force":
        raise UsageError(f"-W {ns.force}: qrerun takes only -W force")
    ids = check_ids(ns.ids)
    return for_each_job(PROG, ids, lambda client, jid: client.post(job_path(jid, "/rerun"), {}))


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
