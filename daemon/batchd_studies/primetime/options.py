"""The command line of ``batchd report primetime``: cheap to import, the study loads on use."""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from batchd.argtypes import MAX_NODES, positive_int
from batchd_studies.framework import StudyError
from batchd_studies.framework.cli import (
    Scope,
    add_out_option,
    add_reuse_options,
    add_trace_option,
    add_workers_option,
    executor_flags,
    reuse_flags,
)

DEFAULT_OUT = "primetime-study"
DEFAULT_LIMITS = tuple(range(10, 101, 10))
DEFAULT_DISCIPLINES = ("fcfs", "easy")
LIMIT_MIN, LIMIT_MAX = 10, 100


@dataclass
class StudyOptions:
    traces: list[str]
    nodes: str | None = None
    limits: list[int] = field(default_factory=lambda: list(DEFAULT_LIMITS))
    disciplines: list[str] = field(default_factory=lambda: list(DEFAULT_DISCIPLINES))
    first: int | None = None
    workers: int | None = None
    dask: str | None = None  # --dask: local, or a scheduler's address
    out: Path = Path(DEFAULT_OUT)
    scope: Scope = field(default_factory=Scope)
    must_fit: bool = True
    command: str = ""


def parse_limits(text: str) -> list[int]:
    """``"10,30,100"`` -> [10, 30, 100]: whole percentages in 10..100, sorted, no duplicates."""
    values: set[int] = set()
    for item in text.split(","):
        item = item.strip().removesuffix("%")
        if not item.isdigit():
            raise StudyError(f"--limits: expected whole percentages like 10,30,100, got {item!r}")
        value = int(item)
        if not LIMIT_MIN <= value <= LIMIT_MAX:
            raise StudyError(
                f"--limits: each limit must be in {LIMIT_MIN}..{LIMIT_MAX} (%), got {value}"
            )
        values.add(value)
    return sorted(values)


def _node_count(item: str, machine: int | None) -> int:
    """One item of ``--nodes``: a node count, or a percentage of ``machine``."""
    if item.endswith("%"):
        pct = item[:-1].strip()
        if not pct.replace(".", "", 1).isdigit() or not 0 < float(pct) <= 1000:
            raise StudyError(
                f"--nodes: expected N or P% items like 128,96 or 100%,50%, got {item!r}"
            )
        if not machine:
            raise StudyError(
                f"--nodes {item}: the trace header names no machine size; give node counts"
            )
        return max(1, round(machine * float(pct) / 100))
    if item.isdigit() and 0 < int(item) <= MAX_NODES:
        return int(item)
    raise StudyError(
        f"--nodes: expected positive node counts up to {MAX_NODES:,} like 128,96,64, got {item!r}"
    )


def parse_nodes(text: str | None, machine: int | None) -> list[int]:
    """``"128,96,64"`` or ``"100%,75%,50%"`` (of ``machine``) -> node counts, largest first."""
    if text is None:
        if not machine:
            raise StudyError("--nodes: the trace header names no machine size; give --nodes N")
        return [machine]
    values: list[int] = []
    for raw in text.split(","):
        value = _node_count(raw.strip(), machine)
        if value not in values:
            values.append(value)
    return sorted(values, reverse=True)


def parse_disciplines(text: str) -> list[str]:
    """``"fcfs,easy"`` -> ["fcfs", "easy"]; each must be a discipline ``primetime`` accepts."""
    from batchd_studies.primetime.replays import is_discipline

    names = list(dict.fromkeys(item.strip() for item in text.split(",")))
    for name in names:
        if not is_discipline(name):
            raise StudyError(
                f"--disciplines: {name!r} is not a discipline of primetime "
                "(fcfs, easy or a registered policy such as sjf-easy)"
            )
    return names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``batchd report primetime``."""
    add = parser.add_argument
    add_trace_option(parser, "SWF trace to replay (repeatable)")
    add(
        "--nodes",
        default=None,
        metavar="N[,N...]",
        help="machine sizes, node counts or percentages of the trace's machine "
        "(e.g. 128,96,64 or 100%%,50%%; default: the header's size)",
    )
    add(
        "--limits",
        default=",".join(map(str, DEFAULT_LIMITS)),
        metavar="P[,P...]",
        help="prime-time limits in %% (10..100), used for both the runtime and the jobsize "
        "limit (default 10,20,...,100)",
    )
    add(
        "--disciplines",
        default=",".join(DEFAULT_DISCIPLINES),
        metavar="D[,D...]",
        help="short-term disciplines within each class (default fcfs,easy)",
    )
    add(
        "--first",
        type=positive_int,
        default=None,
        metavar="N",
        help="replay only the first N job lines of each trace (quick runs)",
    )
    add(
        "--must-fit",
        choices=("true", "false"),
        default="true",
        help="true (default): a large job starts only if its estimate ends before non-prime "
        "time; false: as in the paper, it starts any time and is killed at its end",
    )
    add_workers_option(parser)
    add_out_option(parser, DEFAULT_OUT)
    add_reuse_options(parser)
    parser.set_defaults(func=cmd_report_primetime)


def command_line(args: argparse.Namespace) -> str:
    """The command line of the parsed options, every option spelled out."""
    parts = ["batchd", "report", "primetime"]
    for trace in args.trace:
        parts += ["--trace", trace]
    if args.nodes is not None:
        parts += ["--nodes", args.nodes]
    parts += ["--limits", args.limits, "--disciplines", args.disciplines]
    if args.first is not None:
        parts += ["--first", str(args.first)]
    parts += ["--must-fit", args.must_fit]
    parts += executor_flags(args)
    parts += ["--out", str(args.out)]
    return shlex.join([*parts, *reuse_flags(args)])


def options_from_args(args: argparse.Namespace) -> StudyOptions:
    return StudyOptions(
        traces=list(args.trace),
        nodes=args.nodes,
        limits=parse_limits(args.limits),
        disciplines=parse_disciplines(args.disciplines),
        first=args.first,
        workers=args.workers,
        dask=args.dask,
        out=Path(args.out),
        scope=Scope.from_args(args),
        must_fit=args.must_fit == "true",
        command=command_line(args),
    )


def cmd_report_primetime(args: argparse.Namespace) -> int:
    from batchd_studies.framework.study import run_to_end
    from batchd_studies.primetime.study import PrimetimeStudy

    return run_to_end(PrimetimeStudy(options_from_args(args)))
