"""qselect: the ids of the jobs that match, one per line (GET /jobs, filtered here).

Options as OpenPBS's qselect(1B): ``-u user[,user...]``, ``-s states`` (any of
``EFHMQRSTWXB``; batchd's jobs are in Q H W R E F, arrays also in B, subjobs in X),
``-J`` job arrays only, ``-T`` jobs and subjobs (not arrays), ``-q queue`` or
``queue@server`` (``@server``: every queue), ``-N name``, ``-l`` comparisons
``resource.op.value[,...]`` with op one of eq ne lt le gt ge, on ``walltime`` and
on the width (``nodect``, ``ncpus``, ``nodes`` or ``select``: batchd's jobs have
one CPU per node), ``-x`` with finished jobs, ``-H`` finished jobs only. The
daemon filters by user, queue and state; the rest is compared on the brief
listing, read 5,000 jobs at a time.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable, Sequence

from .cli import Parser, UsageError, run
from .hints import Any
from .jobattrs import is_array_id
from .qstat import pages
from .text import escape
from .timefmt import parse_duration
from .transport import Client

PROG = "qselect"
USAGE = (
    "qselect [-u user_list] [-s states] [-q destination] [-N name] "
    "[-l resource.op.value[,...]] [-J | -T] [-x | -H]"
)
PBS_STATES = set("EFHMQRSTWXB")
OPS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt,
    "le": operator.le, "gt": operator.gt, "ge": operator.ge,
}  # fmt: skip
WIDTH = ("nodect", "ncpus", "nodes", "select")
Test = Callable[[dict[str, Any]], bool]


def build_parser() -> Parser:
    p = Parser(PROG, usage=USAGE, description="Select jobs and print their ids.")
    flag = p.add_argument
    flag("-u", dest="users", metavar="user_list", help="owners, comma-separated (user@host too)")
    flag("-s", dest="states", metavar="states", help="job states, e.g. QR")
    flag("-q", dest="destination", metavar="destination", help="queue or queue@server")
    flag("-N", dest="name", metavar="name", help="the job name")
    flag("-l", dest="resources", action="append", metavar="resource.op.value[,...]",
         help="e.g. walltime.gt.01:00:00,nodect.ge.4")  # fmt: skip
    flag("-J", dest="arrays", action="store_true", help="job arrays only")
    flag("-T", dest="subjobs", action="store_true", help="jobs and subjobs (not arrays)")
    flag("-x", dest="history", action="store_true", help="finished jobs too")
    flag("-H", dest="finished", action="store_true", help="finished jobs only")
    return p


def _compare(field: str, compare: Callable[[Any, Any], bool], value: object) -> Test:
    def test(job: dict[str, Any]) -> bool:
        return bool(compare(job[field], value))

    return test


def parse_comparisons(values: Sequence[str]) -> list[Test]:
    """``walltime.gt.01:00:00,nodect.ge.4`` -> tests on a brief job."""
    tests: list[Test] = []
    for value in values:
        for item in value.split(","):
            parts = item.strip().split(".", 2)
            if len(parts) != 3 or parts[1] not in OPS or not parts[2]:
                raise UsageError(
                    f"illegal -l value: {item!r}: give resource.op.value with op one of "
                    "eq, ne, lt, le, gt, ge"
                )
            name, op, text = parts
            compare = OPS[op]
            if name == "walltime":
                try:
                    limit = parse_duration(text)
                except ValueError as exc:
                    raise UsageError(f"illegal -l value: {item!r}: {exc}") from None
                tests.append(_compare("walltime", compare, limit))
            elif name in WIDTH:
                if not text.isdigit():
                    raise UsageError(f"illegal -l value: {item!r}: {name} is a whole number")
                tests.append(_compare("nodes", compare, int(text)))
            else:
                raise UsageError(
                    f"illegal -l value: {item!r}: batchd compares walltime and {', '.join(WIDTH)}"
                )
    return tests


def query(ns: Any) -> tuple[dict[str, str], list[Test]]:
    """What the daemon filters (``GET /jobs`` parameters) and what is tested here."""
    q: dict[str, str] = {"brief": "true"}
    tests: list[Test] = []
    if ns.users:
        users = [u.partition("@")[0] for u in ns.users.split(",") if u.strip()]
        if not users:
            raise UsageError(f"illegal -u value: {ns.users}")
        q["user"] = ",".join(users)
    if ns.destination is not None:
        queue = ns.destination.partition("@")[0]
        if queue:
            q["queue"] = queue
    if ns.finished:
        q["history"] = "true"
        q["state"] = "F"
    elif ns.history:
        q["history"] = "true"
    if ns.states is not None:
        bad = set(ns.states) - PBS_STATES
        if not ns.states or bad:
            raise UsageError(f"illegal -s value: {ns.states} (job states: EFHMQRSTWXB)")
        wanted = set(ns.states) & set("QHWREFBX")
        if "F" in wanted and not ns.finished:
            q["history"] = "true"
        if ns.finished:
            wanted &= {"F"}
        q["state"] = "".join(sorted(wanted))
        if not wanted:
            q["state"] = "-"  # states batchd's jobs are never in: nothing matches
    if ns.subjobs:
        q["subjobs"] = "true"
        tests.append(lambda job: not is_array_id(job["id"]))
    if ns.arrays:
        tests.append(lambda job: is_array_id(job["id"]))
    if ns.name is not None:
        tests.append(_compare("name", operator.eq, ns.name))
    tests += parse_comparisons(ns.resources or [])
    return q, tests


def _main(argv: list[str]) -> int:
    ns = build_parser().parse_intermixed_args(argv)
    if ns.history and ns.finished:
        raise UsageError("conflicting options: -x and -H")
    if ns.arrays and ns.subjobs:
        raise UsageError("conflicting options: -J and -T")
    q, tests = query(ns)
    if q.get("state") == "-":
        return 0
    out = sys.stdout
    for page in pages(Client(), q):
        ids = [j["id"] for j in page["jobs"] if all(t(j) for t in tests)]
        if ids:
            out.write("".join(f"{escape(i)}\n" for i in ids))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
