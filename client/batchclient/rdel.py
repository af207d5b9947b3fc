"""pbs_rdel: delete advance reservations (DELETE /reservations/{id}); the jobs in their
queues end with them (running ones killed, waiting ones deleted)."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

from .cli import EXIT_REFUSED, Parser, UsageError, run, say
from .transport import ApiError, Client, quote

PROG = "pbs_rdel"
RESV_ID = re.compile(r"^R?[0-9]+(?:\.[A-Za-z0-9_.-]+)?$")


def check_resv_ids(ids: Sequence[str]) -> list[str]:
    for rid in ids:
        if not RESV_ID.match(rid):
            raise UsageError(f"illegally formed reservation identifier: {rid}")
    return [rid if rid.startswith("R") else f"R{rid}" for rid in ids]


def build_parser() -> Parser:
    p = Parser(PROG, usage="pbs_rdel reservation_id...", description="Delete reservations.")
    p.add_argument("ids", nargs="+", metavar="reservation_id")
    return p


def _main(argv: list[str]) -> int:
    ids = check_resv_ids(build_parser().parse_args(argv).ids)
    client = Client()
    code = 0
    for rid in ids:
        try:
            client.delete(f"/reservations/{quote(rid)}")
        except ApiError as exc:
            say(PROG, f"Unknown Reservation Id {rid}" if exc.status == 404 else exc.message)
            code = EXIT_REFUSED
    return code


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
