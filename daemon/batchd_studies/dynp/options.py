"""The command line of ``batchd report dynp``: cheap to import, the study loads on use."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from batchd.argtypes import MAX_NODES, SHRINK_RANGE, int_in, seed
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

DEFAULT_JOBS = 10_000
DEFAULT_OUT = "dynp-study"
CONFIG_SETS = ("default", "all", "basic", "as-queued")


@dataclass
class StudyOptions:
    traces: list[str]
    shrinks: list[float]
    out: Path
    jobs: int = DEFAULT_JOBS
    seed: int = 0
    workers: int | None = None
    dask: str | None = None  # --dask: local, or a scheduler's address
    nodes_for: dict[str, int] = field(default_factory=dict)
    perfect_estimates: bool = False
    configs: str = "default"
    scope: Scope = field(default_factory=Scope)
    command: str = ""


def parse_shrinks(text: str) -> list[float]:
    """``"1.0,0.9,0.8"`` -> [1.0, 0.9, 0.8] (duplicates dropped, order kept)."""
    values: list[float] = []
    for item in text.split(","):
        try:
            value = float(item)
        except ValueError:
            raise StudyError(f"--shrink: expected numbers like 1.0,0.9, got {item!r}") from None
        lo, hi = SHRINK_RANGE
        if not lo <= value <= hi:
            raise StudyError(f"--shrink: factors must be from {lo:g} to {hi:g}, got {item!r}")
        if value not in values:
            values.append(value)
    return values


def parse_nodes_for(items: Sequence[str]) -> dict[str, int]:
    """``["CTC=430"]`` -> {"CTC": 430} (names case-insensitive, kept upper-case)."""
    out: dict[str, int] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip().isdigit():
            raise StudyError(f"--nodes-for {item!r}: expected NAME=N with N a positive integer")
        if not 1 <= int(value) <= MAX_NODES:
            raise StudyError(f"--nodes-for {item!r}: N must be from 1 to {MAX_NODES:,}")
        out[name.strip().upper()] = int(value)
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``batchd report dynp``."""
    add = parser.add_argument
    add_trace_option(
        parser,
        "SWF file used as is, or synthetic-from:PATH to generate a job set from the "
        "model of the trace PATH (repeatable)",
    )
    add(
        "--shrink",
        default="1.0",
        metavar="F[,F...]",
        help="shrinking factors of the inter-arrival times (default 1.0)",
    )
    add(
        "--nodes-for",
        action="append",
        default=[],
        metavar="NAME=N",
        help="machine width of job set NAME (default: the paper's CTC 430, KTH 100, "
        "SDSC 128, PC2 96, else the trace header)",
    )
    add(
        "--jobs",
        type=int_in(1, 10_000_000),
        default=DEFAULT_JOBS,
        metavar="N",
        help=f"jobs per synthetic set (default {DEFAULT_JOBS})",
    )
    add("--seed", type=seed, default=0, help="seed of the synthetic sets (default 0)")
    add_workers_option(parser)
    add_out_option(parser, DEFAULT_OUT)
    add("--perfect-estimates", action="store_true", help="estimate := actual runtime (Fig. 6)")
    add(
        "--configs",
        choices=CONFIG_SETS,
        default="default",
        help="default: the paper's 10 configurations; all: + dynP quality SLDwW and AWT; "
        "basic: FCFS/SJF/LJF-cons only; as-queued: default + dynP with "
        "fcfs_candidate=as-queued (3 qualities) and as-queued-sjf (ARTwW)",
    )
    add_reuse_options(parser)
    parser.set_defaults(func=cmd_report_dynp)


def command_line(args: argparse.Namespace) -> str:
    """The command line of the parsed options, every option spelled out."""
    parts = ["batchd", "report", "dynp"]
    for trace in args.trace:
        parts += ["--trace", trace]
    parts += ["--shrink", args.shrink]
    for item in args.nodes_for:
        parts += ["--nodes-for", item]
    parts += ["--jobs", str(args.jobs), "--seed", str(args.seed)]
    parts += executor_flags(args)
    parts += ["--out", str(args.out), "--configs", args.configs]
    if args.perfect_estimates:
        parts.append("--perfect-estimates")
    return shlex.join([*parts, *reuse_flags(args)])


def options_from_args(args: argparse.Namespace) -> StudyOptions:
    return StudyOptions(
        traces=list(args.trace),
        shrinks=parse_shrinks(args.shrink),
        out=Path(args.out),
        jobs=args.jobs,
        seed=args.seed,
        workers=args.workers,
        dask=args.dask,
        nodes_for=parse_nodes_for(args.nodes_for),
        perfect_estimates=args.perfect_estimates,
        configs=args.configs,
        scope=Scope.from_args(args),
        command=command_line(args),
    )


def cmd_report_dynp(args: argparse.Namespace) -> int:
    from batchd_studies.dynp.study import DynpStudy
    from batchd_studies.framework.study import run_to_end

    return run_to_end(DynpStudy(options_from_args(args)))
