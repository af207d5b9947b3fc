"""The command line of ``batchd report grid``: cheap to import, the study loads on use."""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from batchd.argtypes import int_in, seed
from batchd_studies.framework import StudyError
from batchd_studies.framework.cli import (
    Scope,
    add_out_option,
    add_reuse_options,
    add_workers_option,
    executor_flags,
    reuse_flags,
)

DEFAULT_OUT = "grid-study"
DEFAULT_CONFIGS = (
    "conf/grid-nrw.toml",
    "conf/grid-equal.toml",
    "conf/grid-4small-4big.toml",
    "conf/grid-2pown.toml",
)
DEFAULT_JOBS_PER_NODE = 8


@dataclass
class StudyOptions:
    traces: list[tuple[str, str]]  # (name, path)
    configs: list[str] = field(default_factory=lambda: list(DEFAULT_CONFIGS))
    jobs_per_node: int = DEFAULT_JOBS_PER_NODE
    seed: int = 1
    workers: int | None = None
    dask: str | None = None  # --dask: local, or a scheduler's address
    out: Path = Path(DEFAULT_OUT)
    scope: Scope = field(default_factory=Scope)
    command: str = ""


def parse_trace(text: str) -> tuple[str, str]:
    """``NAME=PATH`` or ``PATH`` (named after the file up to its first '-', plus -prob)."""
    from batchd_studies.framework.traces import trace_base_name

    name, sep, path = text.partition("=")
    if not sep:
        return f"{trace_base_name(text)}-prob", text
    if not name.strip() or not path.strip():
        raise StudyError(f"--trace {text!r}: expected PATH or NAME=PATH")
    return name.strip(), path.strip()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``batchd report grid``."""
    add = parser.add_argument
    add(
        "--trace",
        action="append",
        required=True,
        metavar="[NAME=]T",
        help="SWF trace whose model the job sets are drawn from (repeatable); NAME names the "
        "sets in tables (default: the file name up to its first '-', then -prob)",
    )
    add(
        "--config",
        action="append",
        default=None,
        metavar="CONF",
        help="grid site file (repeatable; default the four of Table 1: "
        + ", ".join(DEFAULT_CONFIGS)
        + ")",
    )
    add(
        "--jobs-per-node",
        type=int_in(1, 1000),
        default=DEFAULT_JOBS_PER_NODE,
        metavar="K",
        help=f"jobs per node of the grid in each job set (default {DEFAULT_JOBS_PER_NODE})",
    )
    add("--seed", type=seed, default=1, help="seed of the job sets and of every replay")
    add_workers_option(parser)
    add_out_option(parser, DEFAULT_OUT)
    add_reuse_options(parser)
    parser.set_defaults(func=cmd_report_grid)


def command_line(args: argparse.Namespace) -> str:
    """The command line of the parsed options, every option spelled out."""
    parts = ["batchd", "report", "grid"]
    for trace in args.trace:
        parts += ["--trace", trace]
    for config in args.config or DEFAULT_CONFIGS:
        parts += ["--config", config]
    parts += ["--jobs-per-node", str(args.jobs_per_node), "--seed", str(args.seed)]
    parts += executor_flags(args)
    parts += ["--out", str(args.out)]
    return shlex.join([*parts, *reuse_flags(args)])


def options_from_args(args: argparse.Namespace) -> StudyOptions:
    traces = [parse_trace(t) for t in args.trace]
    names = [n for n, _ in traces]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise StudyError(f"--trace: two job sets would be named {', '.join(duplicates)}")
    return StudyOptions(
        traces=traces,
        configs=list(dict.fromkeys(args.config or DEFAULT_CONFIGS)),
        jobs_per_node=args.jobs_per_node,
        seed=args.seed,
        workers=args.workers,
        dask=args.dask,
        out=Path(args.out),
        scope=Scope.from_args(args),
        command=command_line(args),
    )


def cmd_report_grid(args: argparse.Namespace) -> int:
    from batchd_studies.framework.study import run_to_end
    from batchd_studies.grid.study import GridStudy

    return run_to_end(GridStudy(options_from_args(args)))
