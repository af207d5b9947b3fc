"""The options every study has, and the command-line echo.

Standard library only: ``batchd replay`` and ``batchd serve`` build the whole
parser, ``report`` included, and must not pay for a study's imports.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from batchd.sweep.cli import add_executor_options
from batchd.sweep.spec import ExecutorSpec

RESULTS_NAME = "results.json"  # framework.results.RESULTS_FILE, without importing it


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


def add_reuse_options(parser: argparse.ArgumentParser, *, resume_default: bool) -> None:
    """``--resume`` (reuse the runs already in the results file) and ``--report-only``.

    With ``resume_default`` the study always reuses them and ``--resume`` only
    says so.
    """
    default = " (always done by this study)" if resume_default else ""
    parser.add_argument(
        "--resume",
        action="store_true",
        help=f"reuse the runs already in OUT/{RESULTS_NAME}{default}",
    )
    parser.add_argument(
        "--report-only",
        action="store_true",
        help=f"replay nothing: write the report from OUT/{RESULTS_NAME}",
    )


def reuse_flags(args: argparse.Namespace) -> list[str]:
    """``--resume`` and ``--report-only`` as given, for the command-line echo."""
    given = (("--resume", args.resume), ("--report-only", args.report_only))
    return [flag for flag, on in given if on]


def invoked_command() -> str | None:
    """The exact command line when run as the ``batchd`` program, else None."""
    if Path(sys.argv[0]).name != "batchd" or "report" not in sys.argv[1:]:
        return None
    return shlex.join(["batchd", *sys.argv[1:]])
