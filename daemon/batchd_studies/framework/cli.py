"""The options every study has, and the command-line echo.

Standard library only: ``batchd replay`` and ``batchd serve`` build the whole
parser, ``report`` included, and must not pay for a study's imports.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from batchd.sweep.cli import add_executor_options, add_shard_options
from batchd.sweep.shard import Shard
from batchd.sweep.spec import ExecutorSpec

RESULTS_NAME = "results.json"  # framework.results.RESULTS_FILE, without importing it
RUNS_NAME = "runs"  # batchd.sweep.store.RUNS_DIR, without importing it


@dataclass(frozen=True)
class Scope:
    """What one invocation replays and writes.

    By default every run without a stored result, then every output. ``report_only``
    and ``collect`` replay nothing and write the outputs from the stored results
    (refusing when a run has none); ``shard`` replays only its share of the runs and
    writes no outputs (an array job: the shards, then ``collect`` once).
    """

    report_only: bool = False
    collect: bool = False
    shard: Shard | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Scope:
        """The scope of the parsed options; a bad ``--shard`` is an error naming it."""
        shard = None if args.shard is None else Shard.parse(args.shard)
        return cls(report_only=args.report_only, collect=args.collect, shard=shard)

    @property
    def replays(self) -> bool:
        return not (self.report_only or self.collect)


def add_trace_option(parser: argparse.ArgumentParser, text: str) -> None:
    parser.add_argument("--trace", action="append", required=True, metavar="T", help=text)


def add_workers_option(parser: argparse.ArgumentParser) -> None:
    """``--workers K`` and ``--dask [ADDRESS]``: the executor options ``batchd sweep`` has."""
    add_executor_options(parser)


def executor_flags(args: argparse.Namespace) -> list[str]:
    """``--workers`` and ``--dask`` as given, for the command-line echo."""
    return ExecutorSpec(workers=args.workers, dask=args.dask).options()


def add_out_option(parser: argparse.ArgumentParser, default: str) -> None:
    parser.add_argument(
        "--out", default=default, metavar="DIR", help=f"output directory (default {default})"
    )


def add_reuse_options(parser: argparse.ArgumentParser) -> None:
    """``--resume`` (what every study does anyway), and one of ``--report-only``,
    ``--shard I/N`` and ``--collect``."""
    parser.add_argument(
        "--resume",
        action="store_true",
        help=f"reuse the runs already in OUT/{RESULTS_NAME} and OUT/{RUNS_NAME} (always done)",
    )
    only = parser.add_mutually_exclusive_group()
    only.add_argument(
        "--report-only",
        action="store_true",
        help=f"replay nothing: write the report from OUT/{RESULTS_NAME} (and OUT/{RUNS_NAME})",
    )
    add_shard_options(only)


def reuse_flags(args: argparse.Namespace) -> list[str]:
    """``--resume``, ``--report-only``, ``--shard`` and ``--collect`` as given, for the
    command-line echo."""
    given = (("--resume", args.resume), ("--report-only", args.report_only))
    flags = [flag for flag, on in given if on]
    if args.shard is not None:
        flags += ["--shard", args.shard]
    return [*flags, "--collect"] if args.collect else flags


def invoked_command() -> str | None:
    """The exact command line when run as the ``batchd`` program, else None."""
    if Path(sys.argv[0]).name != "batchd" or "report" not in sys.argv[1:]:
        return None
    return shlex.join(["batchd", *sys.argv[1:]])
