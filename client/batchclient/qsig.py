"""qsig: send a signal to running jobs (POST /jobs/{id}/signal); SIGTERM by default.

The daemon records every signal in the job's history (``tracejob``); SIGKILL and
SIGTERM end the emulated job (exit status 256 + the signal's number); the others
change nothing else. ``suspend`` and ``resume`` are refused: batchd does not
emulate suspended jobs.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .cli import Parser, run
from .jobops import check_ids, for_each_job, job_path

PROG = "qsig"


def build_parser() -> Parser:
    p = Parser(PROG, usage="qsig [-s signal] job_identifier...", description="Signal jobs.")
    p.add_argument("-s", dest="signal", default="SIGTERM", metavar="signal",
                   help="a name (SIGKILL, KILL) or a number; default SIGTERM")  # fmt: skip
    p.add_argument("ids", nargs="+", metavar="job_identifier")
    return p


def _main(argv: list[str]) -> int:
    ns = build_parser().parse_intermixed_args(argv)
    ids = check_ids(ns.ids)
    special = ("suspend", "resume", "admin-suspend", "admin-resume")
    body = {"signal": ns.signal if ns.signal in special else ns.signal.upper()}
    return for_each_job(PROG, ids, lambda client, jid: client.post(job_path(jid, "/signal"), body))


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
