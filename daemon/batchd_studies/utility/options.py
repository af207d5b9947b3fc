"""The command line of ``batchd report utility``: cheap to import, the study loads on use."""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from batchd.argtypes import int_in, node_count
from batchd_studies.framework import StudyError
from batchd_studies.framework.cli import (
    Scope,
    add_out_option,
    add_reuse_options,
    add_workers_option,
    executor_flags,
    reuse_flags,
)

DEFAULT_OUT = "utility-study"
DEFAULT_JOBS = "5000-10000"
DEFAULT_SEEDS = (1, 2)
DEFAULT_FACTORS = (1.0, 0.9, 0.8, 0.7)
DEFAULT_DEADLINES = (1.0, 2.0, 3.0)
DEFAULT_HEAVY = 0.7
BASE_FACTOR = 1.0  # the trace's own arrivals: Tables 1 and 2, Figs. 5, 8 and 9
BASE_DEADLINE = 2.0  # the seed's deadline factor but in Fig. 8
# Table order: the seed's four, then batchd's cheap utility-aware baseline.
SCHEDULERS = ("fcfs-cons", "fcfs-easy", "prio-fifo", "utility-easy", "ga")
GA = "ga"
VALUE_ORDERS = ("formula", "priority")  # batchd.workload.utility_gen.VALUE_ORDERS
DEADLINE_FROM = ("submit", "start")  # batchd.workload.utility_gen.DEADLINE_FROM
FACTOR_RANGE = (0.05, 10.0)
DEADLINE_RANGE = (0.01, 1000.0)


@dataclass
class StudyOptions:
    trace: str
    jobs: tuple[int, int] = (5000, 10000)
    nodes: int | None = None  # None: the header's MaxProcs, else MaxNodes
    queue_map: str | None = None  # None: the built-in map the header names
    seeds: list[int] = field(default_factory=lambda: list(DEFAULT_SEEDS))
    ga_seeds: list[int] = field(default_factory=lambda: list(DEFAULT_SEEDS))
    factors: list[float] = field(default_factory=lambda: list(DEFAULT_FACTORS))
    heavy: float = DEFAULT_HEAVY
    deadlines: list[float] = field(default_factory=lambda: list(DEFAULT_DEADLINES))
    schedulers: list[str] = field(default_factory=lambda: list(SCHEDULERS))
    value_orders: list[str] = field(default_factory=lambda: list(VALUE_ORDERS))
    deadline_froms: list[str] = field(default_factory=lambda: list(DEADLINE_FROM))
    generations: int = 100
    population: int = 20
    workers: int | None = None
    dask: str | None = None  # --dask: local, or a scheduler's address
    out: Path = Path(DEFAULT_OUT)
    scope: Scope = field(default_factory=Scope)
    command: str = ""


def parse_seeds(text: str, option: str) -> list[int]:
    """``"1,2"`` -> [1, 2]: distinct whole numbers >= 0, in the order given."""
    values: list[int] = []
    for item in text.split(","):
        item = item.strip()
        if not item.isdigit():
            raise StudyError(
                f"{option}: expected seeds like 1,2 (whole numbers >= 0), got {item!r}"
            )
        if int(item) not in values:
            values.append(int(item))
    return values


def parse_numbers(text: str, option: str, lo: float, hi: float) -> list[float]:
    """``"1.0,0.9"`` -> [1.0, 0.9]: distinct numbers in ``lo..hi``, in the order given."""
    values: list[float] = []
    for item in text.split(","):
        try:
            value = float(item)
        except ValueError:
            raise StudyError(
                f"{option}: expected numbers like 1.0,0.7, got {item.strip()!r}"
            ) from None
        if not lo <= value <= hi:
            raise StudyError(f"{option}: each number must be in {lo:g}..{hi:g}, got {item.strip()}")
        if value not in values:
            values.append(value)
    return values


def parse_schedulers(text: str) -> list[str]:
    names = list(dict.fromkeys(item.strip() for item in text.split(",")))
    unknown = [n for n in names if n not in SCHEDULERS]
    if unknown or not names:
        raise StudyError(
            f"--schedulers: {', '.join(unknown) or text!r} not in the study's schedulers "
            f"({', '.join(SCHEDULERS)})"
        )
    return [s for s in SCHEDULERS if s in names]


def parse_value_orders(text: str) -> list[str]:
    names = list(dict.fromkeys(item.strip() for item in text.split(",")))
    unknown = [n for n in names if n not in VALUE_ORDERS]
    if unknown or not names:
        raise StudyError(
            f"--value-orders: {', '.join(unknown)!r} is not a value order "
            f"({', '.join(VALUE_ORDERS)})"
        )
    return names


def parse_deadline_froms(text: str) -> list[str]:
    names = list(dict.fromkeys(item.strip() for item in text.split(",")))
    unknown = [n for n in names if n not in DEADLINE_FROM]
    if unknown or not names or "" in names:
        raise StudyError(
            f"--deadline-from: {', '.join(unknown) or repr(text)} is not where a deadline counts "
            f"from ({', '.join(DEADLINE_FROM)})"
        )
    return names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``batchd report utility``."""
    add = parser.add_argument
    add("--trace", required=True, metavar="T", help="SWF trace (SDSC-BLUE in the seed)")
    add(
        "--jobs",
        default=DEFAULT_JOBS,
        metavar="FIRST-LAST",
        help=f"the job numbers (SWF field 1) replayed (default {DEFAULT_JOBS}, as the seed)",
    )
    add(
        "--nodes",
        type=node_count,
        default=None,
        metavar="N",
        help="machine size in processors (default: the header's MaxProcs, else MaxNodes)",
    )
    add(
        "--map",
        default=None,
        metavar="FILE",
        help="queue-to-priority map, lines QUEUE PRIORITY (default: the built-in map for "
        "SDSC Blue Horizon)",
    )
    add("--seeds", default="1,2", metavar="S[,S...]", help="utility augmentations (default 1,2)")
    add("--ga-seeds", default="1,2", metavar="S[,S...]", help="GA runs per augmentation (1,2)")
    add(
        "--factors",
        default=",".join(f"{f:g}" for f in DEFAULT_FACTORS),
        metavar="F[,F...]",
        help="inter-arrival time factors of Fig. 7 (default 1,0.9,0.8,0.7; 1 always runs)",
    )
    add(
        "--heavy",
        default=f"{DEFAULT_HEAVY:g}",
        metavar="F",
        help="the heavy load of Fig. 10, an inter-arrival factor (default 0.7)",
    )
    add(
        "--deadline-factors",
        default=",".join(f"{d:g}" for d in DEFAULT_DEADLINES),
        metavar="D[,D...]",
        help="deadline factors of Fig. 8 (default 1,2,3; 2 always runs)",
    )
    add(
        "--schedulers",
        default=",".join(SCHEDULERS),
        metavar="P[,P...]",
        help=f"schedulers compared (default {','.join(SCHEDULERS)})",
    )
    add(
        "--value-orders",
        default=",".join(VALUE_ORDERS),
        metavar="O[,O...]",
        help="value orders of the utility functions (batchd utility --value-order): formula "
        "runs every scenario; priority (the highest values to the highest priority) runs "
        "Table 1's scenario again (default formula,priority)",
    )
    add(
        "--deadline-from",
        default=",".join(DEADLINE_FROM),
        metavar="W[,W...]",
        help="where the utility functions' decay and deadline count from (batchd utility "
        "--deadline-from): submit runs every scenario; start (each function moved later by "
        "the job's runtime) runs Table 1's scenario again (default submit,start)",
    )
    add("--generations", type=int_in(0, 100_000), default=100, help="GA generations (100)")
    add("--population", type=int_in(4, 10_000), default=20, help="GA population (20)")
    add_workers_option(parser)
    add_out_option(parser, DEFAULT_OUT)
    add_reuse_options(parser)
    parser.set_defaults(func=cmd_report_utility)


def command_line(args: argparse.Namespace) -> str:
    """The command line of the parsed options, every option spelled out."""
    parts = ["batchd", "report", "utility", "--trace", args.trace, "--jobs", args.jobs]
    if args.nodes is not None:
        parts += ["--nodes", str(args.nodes)]
    if args.map is not None:
        parts += ["--map", args.map]
    parts += ["--seeds", args.seeds, "--ga-seeds", args.ga_seeds, "--factors", args.factors]
    parts += ["--heavy", args.heavy, "--deadline-factors", args.deadline_factors]
    parts += ["--schedulers", args.schedulers, "--value-orders", args.value_orders]
    parts += ["--deadline-from", args.deadline_from]
    parts += ["--generations", str(args.generations), "--population", str(args.population)]
    parts += executor_flags(args)
    parts += ["--out", str(args.out)]
    return shlex.join([*parts, *reuse_flags(args)])


def options_from_args(args: argparse.Namespace) -> StudyOptions:
    from batchd.workload.job_range import parse_job_range

    try:
        jobs = parse_job_range(args.jobs)
    except ValueError as exc:
        raise StudyError(f"--jobs: {exc}") from None
    heavy = parse_numbers(args.heavy, "--heavy", *FACTOR_RANGE)
    if len(heavy) != 1:
        raise StudyError(f"--heavy: one inter-arrival factor, got {args.heavy!r}")
    return StudyOptions(
        trace=args.trace,
        jobs=jobs,
        nodes=args.nodes,
        queue_map=args.map,
        seeds=parse_seeds(args.seeds, "--seeds"),
        ga_seeds=parse_seeds(args.ga_seeds, "--ga-seeds"),
        factors=parse_numbers(args.factors, "--factors", *FACTOR_RANGE),
        heavy=heavy[0],
        deadlines=parse_numbers(args.deadline_factors, "--deadline-factors", *DEADLINE_RANGE),
        schedulers=parse_schedulers(args.schedulers),
        value_orders=parse_value_orders(args.value_orders),
        deadline_froms=parse_deadline_froms(args.deadline_from),
        generations=args.generations,
        population=args.population,
        workers=args.workers,
        dask=args.dask,
        out=Path(args.out),
        scope=Scope.from_args(args),
        command=command_line(args),
    )


def cmd_report_utility(args: argparse.Namespace) -> int:
    from batchd_studies.framework.study import run_to_end
    from batchd_studies.utility.study import UtilityStudy

    return run_to_end(UtilityStudy(options_from_args(args)))
