"""``batchd utility`` and ``batchd moldable``: commands that give a trace's jobs what
the traces do not carry (utility functions, Lee's utility paper; width ranges and speedups,
Sabin et al.'s moldable paper) and write the trace again."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from batchd.argtypes import fail, float_in, int_in, seed


def cmd_utility(args: argparse.Namespace) -> int:
    from batchd.workload.swf import read_header
    from batchd.workload.trace_file import trace_path_problem
    from batchd.workload.utility_gen import (
        UtilityParams,
        augment_trace,
        format_stats,
        load_queue_map,
        queue_map_for,
    )

    problem = trace_path_problem(args.trace)
    if problem is not None:
        fail(problem)
    if args.map is not None:
        qmap = load_queue_map(args.map)
        map_note = f"queue map {Path(args.map).name}"
    else:
        found = queue_map_for(read_header(args.trace))
        if found is None:
            fail(
                f"{args.trace}: no built-in queue-to-priority map for this trace (there is "
                "one for SDSC Blue Horizon); give --map FILE (lines QUEUE PRIORITY, 0 highest)"
            )
        qmap = found
        map_note = "the built-in SDSC Blue Horizon queue map"
    params = UtilityParams(
        globmax=args.globmax,
        sigma=args.sigma,
        deadline_factor=args.deadline_factor,
        weights=args.weights,
        points=args.points,
        seed=args.seed,
        value_order=args.value_order,
        deadline_from=args.deadline_from,
    )
    pairs = ", ".join(f"{q}->{p}" for q, p in sorted(qmap.items()))
    comments = [
        "Utility functions: batchd utility (Lee's utility paper, sec. 4), token utility=T:V,... "
        "(seconds since submit: value) and utility_decay=TYPE after the 18 fields",
        f"  seed {params.seed}, globmax {params.globmax:g} per processor-minute, sigma "
        + ("half a priority bin" if params.sigma is None else f"{params.sigma:g}")
        + f", deadline factor {params.deadline_factor:g}, weights linear/exponential/"
        f"step {'/'.join(f'{w:g}' for w in params.weights)}, {params.points} "
        "intermediate points"
        + ("" if params.value_order == "formula" else ", highest values to the highest priority")
        + ("" if params.deadline_from == "submit" else ", decay and deadline from the job's start"),
        f"  {map_note} (queue->priority, 0 highest): {pairs}; other queues lowest",
    ]
    stats = augment_trace(args.trace, args.output, params, qmap, comments)
    print(format_stats(stats, qmap, params))
    print(f"written to {args.output}")
    return 0


def _weights(text: str) -> tuple[float, float, float]:
    parts = text.split(",")
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        values = ()
    if len(values) != 3 or any(not (v >= 0 and v < float("inf")) for v in values):
        raise argparse.ArgumentTypeError(
            f"{text!r}: three weights L,E,S (expected-linear, expected-exponential, step), "
            "each a number >= 0"
        )
    if sum(values) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: at least one weight must be > 0")
    return (values[0], values[1], values[2])


def utility_command(sub: Any) -> None:
    ut = sub.add_parser(
        "utility", help="add synthetic utility functions to a trace (Lee's utility paper, sec. 4)"
    )
    ut.add_argument("trace", help="SWF trace (plain or gzip)")
    ut.add_argument("-o", "--output", required=True, metavar="OUT.swf", help="SWF output")
    ut.add_argument("--seed", type=seed, default=0, help="random seed")
    ut.add_argument(
        "--map",
        metavar="FILE",
        help="queue-to-priority map: lines QUEUE PRIORITY, 0 the highest (default: the "
        "built-in map when the trace is SDSC Blue Horizon's)",
    )
    ut.add_argument(
        "--globmax",
        type=float_in(1e-9, 1e12),
        default=10.0,
        help="the top of the start values per processor-minute (default 10)",
    )
    ut.add_argument(
        "--sigma",
        type=float_in(0, 1e12),
        default=None,
        help="standard deviation of the start value per processor-minute (default: half a "
        "priority bin, globmax / N / 2)",
    )
    ut.add_argument(
        "--deadline-factor",
        type=float_in(1e-9, 1e6),
        default=2.0,
        metavar="F",
        help="deadline = max(F x the job's wait in the log, 10 s) (default 2)",
    )
    ut.add_argument(
        "--weights",
        type=_weights,
        default=(1.0, 1.0, 1.0),
        metavar="L,E,S",
        help="weights of the decay types expected-linear, expected-exponential, step "
        "(default 1,1,1: a third each)",
    )
    ut.add_argument(
        "--points",
        type=int_in(0, 1000),
        default=4,
        metavar="K",
        help="intermediate points of the linear and exponential decays (default 4)",
    )
    ut.add_argument(
        "--value-order",
        choices=("formula", "priority"),
        default="formula",
        help="formula (default): the seed's mean (p + 0.5) / N x globmax, which gives the "
        "highest priority (0) the lowest bin; priority: priority p on bin N - 1 - p, the "
        "highest values to the highest priority, as the seed's text intends",
    )
    ut.add_argument(
        "--deadline-from",
        choices=("submit", "start"),
        default="submit",
        help="submit (default): the decay and the deadline count from the submission, so a "
        "job that runs past its deadline earns nothing; start: from the job's start (each "
        "function moved later by the job's runtime, field 4), so the wait decides",
    )
    ut.set_defaults(func=cmd_utility)


def cmd_moldable(args: argparse.Namespace) -> int:
    from batchd.model.moldable import MoldError, parse_range
    from batchd.workload.moldable_gen import MoldParams, augment_moldable, format_mold_stats
    from batchd.workload.swf import read_header
    from batchd.workload.trace_file import trace_path_problem

    problem = trace_path_problem(args.trace)
    if problem is not None:
        fail(problem)
    nodes = args.nodes
    if nodes is None:
        header = read_header(args.trace)
        nodes = header.max_nodes or header.max_procs
        if not nodes or nodes <= 0:
            fail(f"{args.trace}: the header names no MaxNodes or MaxProcs; give --nodes N")
    low, high = 1, nodes
    if args.range is not None:
        try:
            low, high = parse_range(args.range)
        except MoldError as exc:
            fail(f"--range: {exc}")
        if high > nodes:
            fail(f"--range {args.range}: the maximum is wider than the system ({nodes} nodes)")
    params = MoldParams(nodes=nodes, a=args.a, low=low, high=high, load=args.load, seed=args.seed)
    comments = [
        "Moldable jobs: batchd moldable (Sabin et al.'s moldable paper, sec. 3.1 and 5.2), tokens "
        "nodes=MIN-MAX and speedup=downey:A:SIGMA after the 18 fields",
        f"  seed {params.seed}, system {nodes} nodes, A "
        + ("= the system size" if params.a == "system" else "uniform in 1..2 x requested")
        + f", sigma uniform in 0..2, range {low}-{high}"
        + ("" if params.load is None else f", offered load {params.load:g}"),
    ]
    try:
        stats = augment_moldable(args.trace, args.output, params, comments)
    except ValueError as exc:
        fail(str(exc))
    print(format_mold_stats(stats, params))
    print(f"written to {args.output}")
    return 0


def moldable_command(sub: Any) -> None:
    mo = sub.add_parser(
        "moldable",
        help="give a trace's jobs width ranges and Downey speedups (Sabin et al.'s moldable paper)",
    )
    mo.add_argument("trace", help="SWF trace (plain or gzip)")
    mo.add_argument("-o", "--output", required=True, metavar="OUT.swf", help="SWF output")
    mo.add_argument(
        "--a",
        choices=("system", "random"),
        default="system",
        help="Downey's A: the system size, or uniform in 1..2 x the requested width "
        "(default system)",
    )
    mo.add_argument("--seed", type=seed, default=0, help="random seed")
    mo.add_argument(
        "--nodes",
        type=int_in(1, 10_000_000),
        default=None,
        help="the system size (default: the header's MaxNodes, else MaxProcs)",
    )
    mo.add_argument(
        "--range",
        metavar="MIN-MAX",
        default=None,
        help="every job's width range (default 1 to the system size; widened to hold "
        "the requested width)",
    )
    mo.add_argument(
        "--load",
        type=float_in(1e-6, 1e3),
        default=None,
        metavar="F",
        help="scale runtimes and estimates to this offered load (inter-arrival times kept)",
    )
    mo.set_defaults(func=cmd_moldable)
