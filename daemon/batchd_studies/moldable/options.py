"""The command line of ``batchd report moldable``: cheap to import, the study loads on use."""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from batchd.argtypes import node_count
from batchd_studies.framework import StudyError
from batchd_studies.framework.cli import (
    Scope,
    add_out_option,
    add_reuse_options,
    add_workers_option,
    executor_flags,
    reuse_flags,
)

DEFAULT_OUT = "moldable-study"
DEFAULT_LOADS = (0.5, 0.6, 0.7, 0.8, 0.9)
DEFAULT_OBFS = (1.0, 4.0)  # the seed's sec. 5.2
DEFAULT_EFS = (0.0, 0.5, 1.0)
A_CHOICES = ("system", "random")
OTHER_SCHEDULERS = ("iterative", "greedy", "rigid-easy", "rigid-cons")  # plan.OTHERS
# Submit-time greedy saturates CTC-SP2 from an offered load of about 0.7 on (its jobs
# take wide partitions and the queue grows without end; a replay at 0.9 runs for more
# than ten minutes): it runs only when asked for.
DEFAULT_OTHERS = ("iterative", "rigid-easy", "rigid-cons")
LOAD_RANGE = (0.05, 2.0)
OBF_RANGE = (0.01, 100.0)
EF_RANGE = (0.0, 1.0)


@dataclass
class StudyOptions:
    trace: str
    jobs: tuple[int, int] | None = None  # None: every job of the trace
    nodes: int | None = None  # None: the header's MaxNodes, else MaxProcs
    seed: int = 1
    loads: list[float] = field(default_factory=lambda: list(DEFAULT_LOADS))
    a: list[str] = field(default_factory=lambda: list(A_CHOICES))
    obfs: list[float] = field(default_factory=lambda: list(DEFAULT_OBFS))
    efs: list[float] = field(default_factory=lambda: list(DEFAULT_EFS))
    others: list[str] = field(default_factory=lambda: list(DEFAULT_OTHERS))
    workers: int | None = None
    dask: str | None = None
    out: Path = Path(DEFAULT_OUT)
    scope: Scope = field(default_factory=Scope)
    command: str = ""


def parse_numbers(text: str, option: str, lo: float, hi: float) -> list[float]:
    """``"0.5,0.9"`` -> [0.5, 0.9]: distinct numbers in ``lo..hi``, ascending."""
    values: set[float] = set()
    for item in text.split(","):
        try:
            value = float(item)
        except ValueError:
            raise StudyError(f"{option}: expected numbers like 1,4, got {item.strip()!r}") from None
        if not lo <= value <= hi:
            raise StudyError(f"{option}: each number must be in {lo:g}..{hi:g}, got {item.strip()}")
        values.add(value)
    return sorted(values)


def parse_names(text: str, option: str, known: tuple[str, ...]) -> list[str]:
    names = [item.strip() for item in text.split(",") if item.strip()]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise StudyError(
            f"{option}: {', '.join(unknown) or repr(text)} not one of {', '.join(known)}"
        )
    return [k for k in known if k in names]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``batchd report moldable``."""
    add = parser.add_argument
    add("--trace", required=True, metavar="T", help="SWF trace (CTC-SP2 in the seed)")
    add(
        "--jobs",
        default=None,
        metavar="FIRST-LAST",
        help="replay only these job numbers (SWF field 1; default every job)",
    )
    add(
        "--nodes",
        type=node_count,
        default=None,
        metavar="N",
        help="system size (default: the header's MaxNodes, else MaxProcs)",
    )
    add("--seed", type=int, default=1, metavar="S", help="seed of the speedup draws (1)")
    add(
        "--loads",
        default=",".join(f"{v:g}" for v in DEFAULT_LOADS),
        metavar="L[,L...]",
        help="offered loads: runtimes and estimates scaled to reach each (default "
        "0.5,0.6,0.7,0.8,0.9)",
    )
    add(
        "--a",
        default=",".join(A_CHOICES),
        metavar="system,random",
        help="speedup scenarios: A the system size, A random in 1..2 x the requested width "
        "(default both)",
    )
    add("--obf", default="1,4", metavar="F[,F...]", help="overbooking factors (default 1,4)")
    add("--ef", default="0,0.5,1", metavar="E[,E...]", help="efficiency factors (0,0.5,1)")
    add(
        "--others",
        default=",".join(DEFAULT_OTHERS),
        metavar="S[,S...]",
        help=f"the schedulers beside the fair-share grid, of {','.join(OTHER_SCHEDULERS)} "
        f"(default {','.join(DEFAULT_OTHERS)}: greedy saturates at high loads)",
    )
    add_workers_option(parser)
    add_out_option(parser, DEFAULT_OUT)
    add_reuse_options(parser)
    parser.set_defaults(func=cmd_report_moldable)


def command_line(args: argparse.Namespace) -> str:
    """The command line of the parsed options, every option spelled out."""
    parts = ["batchd", "report", "moldable", "--trace", args.trace]
    if args.jobs is not None:
        parts += ["--jobs", args.jobs]
    if args.nodes is not None:
        parts += ["--nodes", str(args.nodes)]
    parts += ["--seed", str(args.seed), "--loads", args.loads, "--a", args.a]
    parts += ["--obf", args.obf, "--ef", args.ef, "--others", args.others]
    parts += executor_flags(args)
    parts += ["--out", str(args.out)]
    return shlex.join([*parts, *reuse_flags(args)])


def options_from_args(args: argparse.Namespace) -> StudyOptions:
    from batchd.workload.job_range import parse_job_range

    jobs = None
    if args.jobs is not None:
        try:
            jobs = parse_job_range(args.jobs)
        except ValueError as exc:
            raise StudyError(f"--jobs: {exc}") from None
    return StudyOptions(
        trace=args.trace,
        jobs=jobs,
        nodes=args.nodes,
        seed=args.seed,
        loads=parse_numbers(args.loads, "--loads", *LOAD_RANGE),
        a=parse_names(args.a, "--a", A_CHOICES),
        obfs=parse_numbers(args.obf, "--obf", *OBF_RANGE),
        efs=parse_numbers(args.ef, "--ef", *EF_RANGE),
        others=parse_names(args.others, "--others", OTHER_SCHEDULERS),
        workers=args.workers,
        dask=args.dask,
        out=Path(args.out),
        scope=Scope.from_args(args),
        command=command_line(args),
    )


def cmd_report_moldable(args: argparse.Namespace) -> int:
    from batchd_studies.framework.study import run_to_end
    from batchd_studies.moldable.study import MoldableStudy

    return run_to_end(MoldableStudy(options_from_args(args)))
