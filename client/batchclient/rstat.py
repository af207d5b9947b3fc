"""pbs_rstat: advance reservations (GET /reservations), in OpenPBS's formats
(``src/cmds/pbs_rstat.c``): ``-B`` names only, ``-S`` (the default) one line each,
``-f``/``-F`` every attribute. Finished reservations are not listed, as PBS has
deleted them by then; one named by its id is shown.

Short times are as ``convert_time`` gives them against the daemon's clock: ``Today
HH:MM``, ``Day HH:MM`` within this week, ``Day Mon DD HH:MM`` within this year, else
``Day Mon DD YYYY HH:MM``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence

from .cli import EXIT_REFUSED, Parser, print_json, run, say
from .hints import Any
from .rdel import check_resv_ids
from .text import escape
from .timefmt import hms
from .transport import ApiError, Client, quote

PROG = "pbs_rstat"
Obj = Mapping[str, Any]
STATES = {"CO": ("RESV_CONFIRMED", 2), "RN": ("RESV_RUNNING", 5), "FN": ("RESV_FINISHED", 6)}
HEADER = [
    f"{'Resv ID':<10} {'Queue':<8} {'User':<8} {'State':<5} {'Start':>17} / Duration / {'End':<17}",
    "---------------------------------------------------------------------",
]


def build_parser() -> Parser:
    p = Parser(PROG, usage="pbs_rstat [-B] [-f | -F] [-S] [--json] [reservation_id...]",
               description="Show advance reservations.")  # fmt: skip
    p.add_argument("-B", dest="brief", action="store_true", help="reservation ids only")
    p.add_argument("-f", "-F", dest="full", action="store_true", help="every attribute")
    p.add_argument("-S", dest="short", action="store_true", help="one line each (default)")
    # -F is PBS's full format here, so JSON is --json only.
    p.add_argument("--json", dest="as_json", action="store_true", help="the API's JSON")
    p.add_argument("ids", nargs="*", metavar="reservation_id")
    return p


def short_time(epoch: int, now: int) -> str:
    then, cur = time.localtime(epoch), time.localtime(now)
    if then.tm_year != cur.tm_year:
        return time.strftime("%a %b %d %Y %H:%M", then)
    if then.tm_yday == cur.tm_yday:
        return time.strftime("Today %H:%M", then)
    wday = (cur.tm_wday + 1) % 7  # C's tm_wday: Sunday is 0
    if cur.tm_yday - wday <= then.tm_yday <= cur.tm_yday + 6 - wday:
        return time.strftime("%a %H:%M", then)
    return time.strftime("%a %b %d %H:%M", then)


def short_row(r: Obj, now: int) -> str:
    """``%-10.10s %-8.8s %-8.8s %-5.5s %17.17s / %ld / %-17.17s``."""
    name, queue, user = escape(r["id"]), escape(r.get("queue") or ""), escape(r["owner"])
    start, end = short_time(r["start"], now), short_time(r["end"], now)
    return (
        f"{name:<10.10} {queue:<8.8} {user:<8.8} {r['state']:<5.5} "
        f"{start:>17.17} / {r['duration']} / {end:<17.17}"
    )


def long_time(epoch: int) -> str:
    return time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(epoch))


def node_ncpus(select: str) -> list[int]:
    """The ncpus of each node a select holds, in order: ``2:ncpus=4+1`` -> [4, 4, 1]."""
    out: list[int] = []
    for part in select.split("+"):
        words = part.split(":")
        count = int(words[0]) if words[0].isdigit() else 1
        ncpus = next((int(w[6:]) for w in words if w.startswith("ncpus=") and w[6:].isdigit()), 1)
        out += [ncpus] * count
    return out


def full_block(r: Obj, server: str) -> list[str]:
    state, sub = STATES.get(r["state"], (r["state"], 0))
    nodes = r["nodes"]
    select = r.get("select") or f"{nodes}:ncpus=1"
    per_node = node_ncpus(select)
    lines = [
        f"Resv ID: {r['id']}",
        f"Reserve_Name = {r['name']}",
        f"Reserve_Owner = {r['owner']}@{server}",
        f"reserve_state = {state}",
        f"reserve_substate = {sub}",
        f"reserve_start = {long_time(r['start'])}",
        f"reserve_end = {long_time(r['end'])}",
        f"reserve_duration = {r['duration']}",
        f"queue = {r.get('queue') or ''}",
        f"Resource_List.ncpus = {sum(per_node)}",
        f"Resource_List.nodect = {nodes}",
        f"Resource_List.select = {select}",
        "Resource_List.place = free",
        f"Resource_List.walltime = {hms(r['duration'])}",
    ]
    if r.get("node_list"):
        held = zip(r["node_list"], per_node + [1] * len(r["node_list"]), strict=False)
        lines.append("resv_nodes = " + "+".join(f"({n}:ncpus={c})" for n, c in held))
    lines += [f"Authorized_Users = {r['owner']}@{server}", f"server = {server}"]
    lines.append(f"machine = {r['machine']}")
    return [escape(line) for line in lines] + [""]


def render(resvs: Sequence[Obj], server: str, now: int, brief: bool, full: bool) -> list[str]:
    if not resvs:
        return []
    if brief:
        return [f"Resv ID: {escape(r['id'])}" for r in resvs]
    if full:
        return [line for r in resvs for line in full_block(r, server)]
    return HEADER + [short_row(r, now) for r in resvs]


def _main(argv: list[str]) -> int:
    ns = build_parser().parse_args(argv)
    as_json = ns.as_json
    client = Client()
    data: dict[str, Any] = client.get("/reservations")
    code = 0
    if ns.ids:
        picked = []
        for rid in check_resv_ids(ns.ids):
            try:
                picked.append(client.get(f"/reservations/{quote(rid)}"))
            except ApiError as exc:
                say(PROG, f"Unknown Reservation Id {rid}" if exc.status == 404 else exc.message)
                code = EXIT_REFUSED
        resvs = picked
    else:
        resvs = [r for r in data["reservations"] if r["state"] != "FN"]
    if as_json:
        print_json(dict(data, reservations=resvs))
        return code
    lines = render(resvs, data["server"], int(data["now"]), ns.brief, ns.full)
    if lines:
        sys.stdout.write("\n".join(lines) + "\n")
    return code


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
