"""tracejob: a job's history from batchd's state database (GET /jobs/{id}/events).

Printed as OpenPBS's tracejob prints the lines it gathers from the logs
(``src/tools/tracejob.c``): ``Job: ID``, a blank line, then one line per event,
``%-20s %-5c`` (date, log letter: S server, L scheduler, M MoM, A accounting) and
the message, wrapped at the terminal's width with continuation lines indented 26
columns. ``-n DAYS`` looks back that many days of the emulated clock (today
counts as one; default 1), as tracejob reads that many days of log files.
"""

from __future__ import annotations

import datetime as dt
import shutil
import sys
from collections.abc import Sequence

from .cli import EXIT_REFUSED, Parser, UsageError, run, say
from .hints import Any
from .jobops import check_ids, job_path
from .text import escape
from .transport import ApiError, Client

PROG = "tracejob"
INDENT = 26  # 20 for the date, a blank, the letter in 5


def build_parser() -> Parser:
    p = Parser(
        PROG,
        usage="tracejob [-a|s|l|m|v] [-w size] [-p path] [-n days] [-f filter_type] job_identifier...",
        description="Show a job's history.",
    )
    flag = p.add_argument
    flag("-n", dest="days", default="1", metavar="days", help="days to look back (default 1)")
    flag("-w", dest="cols", metavar="size", help="wrap at this many columns (0: never)")
    flag("-a", dest="no_acct", action="store_true", help="leave out accounting lines")
    flag("-s", dest="no_server", action="store_true", help="leave out server lines")
    flag("-l", dest="no_sched", action="store_true", help="leave out scheduler lines")
    flag("-m", dest="no_mom", action="store_true", help="leave out MoM lines")
    for opt in ("-p", "-f", "-c"):  # log paths and filters: batchd has no log files
        flag(opt, dest=f"ignored_{opt[1]}", help="accepted (no effect in batchd)")
    flag("-v", dest="verbose", action="store_true", help="accepted (no effect in batchd)")
    flag("-z", dest="excess", action="store_true", help="accepted (no effect in batchd)")
    flag("ids", nargs="+", metavar="job_identifier")
    return p


def _count(text: str, opt: str, low: int) -> int:
    if not text.isdigit() or int(text) < low:
        raise UsageError(f"{opt} {text}: give a whole number of at least {low}")
    return int(text)


def date(epoch: int) -> str:
    return dt.datetime.fromtimestamp(epoch).strftime("%m/%d/%Y %H:%M:%S")


def since(now: int, days: int) -> int:
    """The first second of the oldest day looked at: local midnight ``days - 1`` days ago."""
    today = dt.datetime.fromtimestamp(now).date()
    first = today - dt.timedelta(days=days - 1)
    return int(dt.datetime.combine(first, dt.time()).timestamp())


def wrap(message: str, cols: int) -> list[str]:
    """tracejob's line_wrap: at a blank before the width, else at the next blank."""
    room = cols - INDENT if cols > INDENT else 0
    if cols == 0 or room == 0 or len(message) <= room:
        return [message]
    parts: list[str] = []
    rest = message
    while len(rest) > room:
        cut = rest.rfind(" ", 0, room + 1)
        if cut <= 0:
            cut = rest.find(" ", room)
            if cut < 0:
                break
        parts.append(rest[:cut])
        rest = rest[cut + 1 :]
    parts.append(rest)
    return [parts[0]] + [" " * INDENT + p for p in parts[1:]]


def render(data: dict[str, Any], days: int, cols: int, skip: str) -> list[str]:
    cutoff = since(int(data["now"]), days)
    events = [e for e in data["events"] if e["time"] >= cutoff and e["source"] not in skip]
    if not events:
        return []
    lines = ["", f"Job: {escape(data['id'])}", ""]
    for e in events:
        text = wrap(escape(e["message"]), cols)
        lines.append(f"{date(e['time']):<20} {e['source']:<5}{text[0]}")
        lines += text[1:]
    return lines


def _main(argv: list[str]) -> int:
    ns = build_parser().parse_intermixed_args(argv)
    days = _count(ns.days, "-n", 1)
    if ns.cols is not None:
        cols = _count(ns.cols, "-w", 0)
    else:
        cols = shutil.get_terminal_size((0, 0)).columns if sys.stdout.isatty() else 0
    skip = "".join(
        c
        for c, off in zip("ASLM", (ns.no_acct, ns.no_server, ns.no_sched, ns.no_mom), strict=True)
        if off
    )
    client = Client()
    code = 0
    for jid in check_ids(ns.ids):
        try:
            data: dict[str, Any] = client.get(job_path(jid, "/events"))
        except ApiError as exc:
            if exc.status != 404:
                say(PROG, exc.message)
                code = EXIT_REFUSED
                continue
            if "." not in jid:  # tracejob names the job with its server, as PBS does
                jid = f"{jid}.{client.get('/server')['name']}"
            data = {"id": jid, "now": 0, "events": []}
        lines = render(data, days, cols, skip)
        if lines:
            sys.stdout.write("\n".join(lines) + "\n")
        else:
            plural = "" if days == 1 else "s"
            sys.stderr.write(
                f"\n{PROG}: Couldn't find Job Id {escape(data['id'])} in logs of past "
                f"{days} day{plural}\n\n"
            )
            code = 1
    return code


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
