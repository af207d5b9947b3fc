"""squeue: the jobs in the queue, as Slurm's squeue prints them (its default, -l and
--start layouts, -o letters, -O names, --json)."""

from __future__ import annotations

import argparse
import json
import os
import pwd
import sys
from collections.abc import Sequence

from ..hints import Any
from ..transport import Client
from . import hostlist
from .command import SlurmError, SlurmParser, run, say_error
from .ids import JobSelector, parse_ids
from .joblist import Listing, Row, find_jobs, list_jobs, rows
from .squeue_fields import (
    DEFAULT_FORMAT,
    LONG_FORMAT,
    START_FORMAT,
    Field,
    parse_format,
    parse_long_format,
    render,
    start_time,
)
from .squeue_json import document
from .states import ENDED_STATES, parse_states, slurm_state

PROG = "squeue"
DEFAULT_STATES = frozenset({"PENDING", "RUNNING", "SUSPENDED", "COMPLETING"})
# squeue sorts by partition, then state in Slurm's order, then priority (highest first).
_STATE_ORDER = {"PENDING": 0, "RUNNING": 1, "SUSPENDED": 2, "COMPLETING": 3}


def build_parser() -> SlurmParser:
    p = SlurmParser(PROG, usage="squeue [OPTIONS]", help_flags=("--help",))
    add = p.add_argument
    add("-a", "--all", action="store_true", help="accepted: every partition is shown anyway")
    add("-h", "--noheader", action="store_true", help="no header line")
    add("-j", "--jobs", "--job", nargs="?", const="", default=None, metavar="IDS",
        help="only these jobs (12, 12_3, 12_[1-3]); jobs in every state")  # fmt: skip
    add("-l", "--long", action="store_true", help="the long layout")
    add("--me", action="store_true", help="only your own jobs")
    add("-n", "--name", metavar="NAMES", help="only jobs of these names")
    add("-o", "--format", metavar="FORMAT", help="the columns, as %%[.][size]letter")
    add("-O", "--Format", dest="long_format", metavar="FIELDS", help="the columns by name")
    add("-p", "--partition", "--partitions", metavar="PARTITIONS", help="only these")
    add("-r", "--array", action="store_true", help="one line per array task")
    add("--start", action="store_true", help="planned starts of pending jobs")
    add("-t", "--states", "--state", metavar="STATES", help="only these states, or all")
    add("-u", "--user", "--users", metavar="USERS", help="only these users' jobs")
    add("-w", "--nodelist", "--nodes", metavar="HOSTLIST", help="only jobs on these nodes")
    add("--json", action="store_true", help="Slurm's JSON (data_parser v0.0.41)")
    add("ids", nargs="*", help=argparse.SUPPRESS)
    return p


def _formats(ns: Any) -> tuple[list[Field], list[str]]:
    if ns.format is not None and ns.long_format is not None:
        raise SlurmError("-O (--Format) is incompatible with -o (--format)")
    if ns.long and ns.format is not None:
        raise SlurmError(
            "Options -o(--format) and -l(--long) are mutually exclusive. "
            "Please remove one and retry."
        )
    if ns.long_format is not None:
        return parse_long_format(ns.long_format)
    if ns.format is not None:
        return parse_format(ns.format)
    if ns.long:
        return parse_format(LONG_FORMAT)
    if ns.start:
        return parse_format(START_FORMAT)
    if os.environ.get("SQUEUE_FORMAT"):
        return parse_format(os.environ["SQUEUE_FORMAT"])
    if os.environ.get("SQUEUE_FORMAT2"):
        return parse_long_format(os.environ["SQUEUE_FORMAT2"])
    return parse_format(DEFAULT_FORMAT)


def _users(ns: Any) -> list[str] | None:
    """The user names asked for; an unknown one is named and skipped, as Slurm does."""
    if ns.me:
        return [pwd.getpwuid(os.getuid()).pw_name]
    if ns.user is None:
        return None
    names: list[str] = []
    for word in (w for w in ns.user.split(",") if w):
        try:
            names.append(
                pwd.getpwuid(int(word)).pw_name if word.isdigit() else pwd.getpwnam(word).pw_name
            )
        except KeyError:
            say_error(PROG, f"Invalid user: {word}")
    return names


def _job_ids(ns: Any) -> list[JobSelector] | None:
    if ns.jobs is None:
        if ns.ids:
            raise SlurmError(f"Unrecognized option: {ns.ids[0]}")
        return None
    text = ns.jobs
    extra = list(ns.ids)
    if not text and extra:  # -j 12: Slurm takes the next word as the list
        text = extra.pop(0)
    if extra:
        raise SlurmError(f"Unrecognized option: {extra[0]}")
    if not text:
        return None  # -j alone: every job
    try:
        return parse_ids(text)
    except ValueError as exc:
        raise SlurmError(str(exc)) from None


def _states(ns: Any, selectors: list[JobSelector] | None) -> frozenset[str] | None:
    """The states to show; None for every state."""
    text = ns.states if ns.states is not None else os.environ.get("SQUEUE_STATES")
    if text is None and ns.start:
        text = "PD"
    if text is None:
        return None if selectors is not None else DEFAULT_STATES
    try:
        return frozenset(parse_states(text))
    except ValueError as exc:
        raise SlurmError(str(exc)) from None


def _select(
    listing: Listing,
    states: frozenset[str] | None,
    users: list[str] | None,
    ns: Any,
) -> list[dict[str, Any]]:
    parts = set(ns.partition.split(",")) if ns.partition else None
    names = {n.lower() for n in ns.name.split(",")} if ns.name else None
    nodes: set[str] | None = None
    if ns.nodelist:
        try:
            nodes = set(hostlist.expand(ns.nodelist))
        except ValueError:
            raise SlurmError(f"'{ns.nodelist}' invalid entry for --nodelist") from None
    out = []
    for job in listing.jobs:
        if states is not None and slurm_state(job) not in states:
            continue
        if users is not None and job.get("owner") not in users:
            continue
        if parts is not None and job.get("queue") not in parts:
            continue
        if names is not None and str(job.get("name", "")).lower() not in names:
            continue
        if nodes is not None and not nodes.intersection(job.get("exec_host") or []):
            continue
        out.append(job)
    return out


def _sort_key(row: Row) -> tuple[Any, ...]:
    job = row.job
    index = job.get("array_index")
    return (
        str(job.get("queue", "")),
        _STATE_ORDER.get(slurm_state(job), 4),
        -int(job.get("priority") or 0),
        int(job["seq"]),
        -1 if index is None else int(index),
    )


def _start_key(row: Row) -> tuple[Any, ...]:
    start = start_time(row.job)
    return (start is None, start or 0, *_sort_key(row))


def _main(argv: list[str]) -> int:
    ns = build_parser().parse_args(argv)
    fields, unknown = _formats(ns)
    for name in unknown:  # Slurm names it and goes on
        say_error(PROG, f"Invalid job format specification: {name}")
    selectors = _job_ids(ns)
    states = _states(ns, selectors)
    users = _users(ns)
    client = Client()
    if selectors is not None:
        listing = find_jobs(client, selectors)
        if not listing.jobs and len(selectors) == 1:
            raise SlurmError("slurm_load_jobs error: Invalid job id specified")
    else:
        wants_ended = states is None or bool(states & ENDED_STATES)
        one_user = users[0] if users is not None and len(users) == 1 else None
        listing = list_jobs(client, history=wants_ended, user=one_user)
    chosen = _select(listing, states, users, ns)
    array_flag = ns.array or bool(os.environ.get("SQUEUE_ARRAY"))
    lines = rows(chosen, one_per_task=array_flag)
    lines.sort(key=_start_key if ns.start else _sort_key)
    if ns.json:
        sys.stdout.write(json.dumps(document(listing, lines), indent=2) + "\n")
        return 0
    out = []
    if not ns.noheader:
        out.append(render(fields, None, listing.now))
    out.extend(render(fields, row, listing.now) for row in lines)
    if out:
        sys.stdout.write("\n".join(out) + "\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
