"""The ``batchd`` command: replay (and the study tools that build on it)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from batchd.argtypes import float_in, int_in, node_count, positive_int, seed, shrink, speed

EXIT_USAGE = 2


class CLIError(Exception):
    """A user error: printed as one line, exit code 2."""


def fail(message: str) -> NoReturn:
    raise CLIError(message)


def progress_bar(total: int, label: str) -> tuple[Callable[[int, int], None] | None, Any]:
    """A tqdm bar on a terminal; nothing in a pipe."""
    if not sys.stderr.isatty():
        return None, None
    from tqdm import tqdm

    bar = tqdm(total=total, desc=label, unit="job", file=sys.stderr, leave=False)

    def update(done: int, all_jobs: int) -> None:
        bar.total = all_jobs
        bar.n = done
        bar.refresh()

    return update, bar


def format_summary(summary: dict[str, Any]) -> str:
    rows: list[tuple[str, str]] = []
    for key, value in summary.items():
        if isinstance(value, dict):
            continue
        if isinstance(value, float):
            text = f"{value:.4f}" if key == "utilization" else f"{value:,.2f}"
        elif isinstance(value, int):
            text = f"{value:,}"
        else:
            text = str(value)
        rows.append((key, text))
    skipped = summary.get("skipped", {})
    rows.insert(1, ("skipped", ", ".join(f"{k}: {v}" for k, v in skipped.items()) or "none"))
    width = max(len(k) for k, _ in rows)
    lines = [f"{k.ljust(width)}  {v}" for k, v in rows]
    for key, value in summary.items():
        if isinstance(value, dict) and key != "skipped":
            lines.append(f"{key}:")
            for sub, val in value.items():
                lines.append(f"  {sub}: {json.dumps(val)}")
    return "\n".join(lines)


def cmd_replay(args: argparse.Namespace) -> int:
    from batchd.replay import ReplayOptions, run_replay
    from batchd.sched.grid.params import parse_grid_param_args
    from batchd.sched.registry import parse_param_args
    from batchd.workload import write_jobs_csv, write_swf

    opts = ReplayOptions(
        trace=args.trace,
        policy=args.policy,
        params=parse_param_args(args.param),
        machine=args.machine,
        nodes=args.nodes,
        shrink=args.shrink,
        perfect_estimates=args.perfect_estimates,
        kill=not args.no_kill,
        first=args.first,
        double=args.double,
        seed=args.seed,
        grid=args.grid,
        grid_params=parse_grid_param_args(args.grid_param),
        records=bool(args.out_swf),  # only an SWF written back reads them
    )
    update, bar = progress_bar(0, f"replay {args.policy or args.machine}")
    try:
        result = run_replay(opts, progress=update)
    finally:
        if bar is not None:
            bar.close()
    summary = result.summary
    is_grid = "grid" in summary
    runs = result.runs if is_grid else result.jobs
    if args.out_swf:
        comments = [
            f"batchd replay: policy {summary['policy']}, {summary['nodes']} nodes, "
            f"shrink {args.shrink}, kill {'no' if args.no_kill else 'yes'}"
        ]
        if "grid" in summary:
            comments.append(
                f"grid {summary['grid']['structure']}: field 16 (partition) is the machine, "
                "1-based: " + ", ".join(m["name"] for m in summary["grid"]["machines"])
            )
        write_swf(args.out_swf, result.workload.header, runs, comments, partition=is_grid)
    if args.out_jobs_csv:
        names = [m.name for m in result.grid.machines] if is_grid else None
        write_jobs_csv(args.out_jobs_csv, runs, names)
    if args.summary_json:
        Path(args.summary_json).write_text(json.dumps(summary, indent=2) + "\n")
    if args.gantt:
        write_replay_gantt(args.gantt, result, runs, args.trace)
    print(format_summary(summary))
    return 0


def write_replay_gantt(path: str, result: Any, runs: list[Any], trace: str) -> None:
    """The replay's Gantt chart as one self-contained page (docs/ui.md)."""
    from batchd.ui.data import zone_name
    from batchd.ui.replay_chart import replay_chart, write_gantt
    from batchd.workload.source import trace_clock

    origin, zone = trace_clock(result.workload)
    data = replay_chart(
        runs,
        [(m.name, m.nodes) for m in result.grid.machines],
        result.summary,
        title=f"replay of {Path(trace).name} · {result.summary['policy']}",
        origin=origin,
        timezone=zone_name(zone),
    )
    try:
        write_gantt(path, data)
    except OSError as exc:
        fail(f"--gantt {path}: cannot write it: {exc.strerror or exc}")


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message} (see {self.prog} --help)", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def cmd_analyze(args: argparse.Namespace) -> int:
    from batchd.workload.model_fit import analyze_trace
    from batchd.workload.trace_model import format_table2

    if not Path(args.trace).is_file():
        fail(f"{args.trace}: no such trace file")
    model = analyze_trace(args.trace, machine_nodes=args.nodes, seed=args.seed)
    model.save(args.output)
    print(format_table2(model.stats))
    print(f"\nmodel written to {args.output}")
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from batchd.workload.generate import (
        format_table3,
        generate_jobs,
        job_set_stats,
        write_generated_swf,
    )
    from batchd.workload.trace_model import TraceModel

    if not Path(args.model).is_file():
        fail(f"{args.model}: no such model file (make one with batchd analyze)")
    model = TraceModel.load(args.model)
    if args.max_width is not None and args.max_width > model.machine_nodes:
        fail(f"--max-width {args.max_width} exceeds the machine width {model.machine_nodes}")
    sizing = {
        "max_width": args.max_width,
        "shrink": args.shrink,
        "scale_to_nodes": args.scale_to_nodes,
        "double": args.double,
    }
    jobs = generate_jobs(model, args.count, seed=args.seed, **sizing)
    write_generated_swf(args.output, jobs, model, args.seed, **sizing)
    nodes = args.scale_to_nodes or model.machine_nodes
    print(format_table3(job_set_stats(jobs, nodes, name=Path(args.output).name)))
    print(f"\n{len(jobs)} jobs written to {args.output}")
    return 0


def cmd_utility(args: argparse.Namespace) -> int:
    from batchd.workload.swf import read_header
    from batchd.workload.utility_gen import (
        UtilityParams,
        augment_trace,
        format_stats,
        load_queue_map,
        queue_map_for,
    )

    if not Path(args.trace).is_file():
        fail(f"{args.trace}: no such trace")
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
    )
    pairs = ", ".join(f"{q}->{p}" for q, p in sorted(qmap.items()))
    comments = [
        "Utility functions: batchd utility (seed 003, sec. 4), token utility=T:V,... "
        "(seconds since submit: value) and utility_decay=TYPE after the 18 fields",
        f"  seed {params.seed}, globmax {params.globmax:g} per processor-minute, sigma "
        + ("half a priority bin" if params.sigma is None else f"{params.sigma:g}")
        + f", deadline factor {params.deadline_factor:g}, weights linear/exponential/"
        f"step {'/'.join(f'{w:g}' for w in params.weights)}, {params.points} "
        "intermediate points"
        + ("" if params.value_order == "formula" else ", highest values to the highest priority"),
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


def _utility_command(sub: Any) -> None:
    ut = sub.add_parser(
        "utility", help="add synthetic utility functions to a trace (seed 003, sec. 4)"
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
    ut.set_defaults(func=cmd_utility)


def cmd_moldable(args: argparse.Namespace) -> int:
    from batchd.model.moldable import MoldError, parse_range
    from batchd.workload.moldable_gen import MoldParams, augment_moldable, format_mold_stats
    from batchd.workload.swf import read_header

    if not Path(args.trace).is_file():
        fail(f"{args.trace}: no such trace")
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
        "Moldable jobs: batchd moldable (seed 004, sec. 3.1 and 5.2), tokens "
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


def _moldable_command(sub: Any) -> None:
    mo = sub.add_parser(
        "moldable", help="give a trace's jobs width ranges and Downey speedups (seed 004)"
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


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or with ``command`` of that one only: ``main`` parses
    ``batchd replay ...`` without building the other commands' arguments (the studies'
    options are most of them)."""
    parser = Parser(prog="batchd", description="An emulated cluster batch system.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, add_command in _COMMANDS.items():
        if command is None or name == command:
            add_command(sub)
    return parser


def _replay_command(sub: Any) -> None:
    rp = sub.add_parser("replay", help="replay a workload trace through a policy")
    rp.add_argument("trace", help="SWF file (plain or .gz), or synthetic[:N] for the built-in one")
    rp.add_argument(
        "--policy",
        help="policy name, e.g. fcfs-easy, sjf-cons, dynp (default: the --machine "
        "site file's [server] policy)",
    )
    rp.add_argument(
        "--param", action="append", default=[], metavar="KEY=VALUE", help="policy parameter"
    )
    where = rp.add_mutually_exclusive_group()
    where.add_argument(
        "--machine",
        metavar="CONF",
        help="site file (machines, queues, policy), e.g. conf/hpcline96.toml",
    )
    rp.add_argument("--nodes", type=node_count, help="machine size (overrides the config)")
    rp.add_argument(
        "--shrink",
        type=shrink,
        default=1.0,
        metavar="F",
        help="multiply inter-arrival times by F",
    )
    rp.add_argument("--perfect-estimates", action="store_true", help="estimate := runtime")
    rp.add_argument("--no-kill", action="store_true", help="let jobs run past their estimate")
    rp.add_argument("--first", type=positive_int, metavar="N", help="only the first N jobs")
    rp.add_argument(
        "--double",
        action="store_true",
        help="every job twice, the copy at the same second, ids renumbered in submit order",
    )
    rp.add_argument(
        "--grid",
        metavar="STRUCTURE",
        help="grid structure over the --machine site file's machines: central, multisite, "
        "hierarchical, decentral, pool (docs/grid.md; default: the site file's [grid])",
    )
    rp.add_argument(
        "--grid-param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="grid structure parameter, e.g. scheduler=easy, select=bestfit-free",
    )
    rp.add_argument("--out-swf", metavar="FILE", help="write the schedule as SWF")
    rp.add_argument("--out-jobs-csv", metavar="FILE", help="write Batsim/evalys jobs.csv")
    rp.add_argument("--summary-json", metavar="FILE", help="write the summary as JSON")
    rp.add_argument(
        "--gantt",
        metavar="FILE.html",
        help="write the schedule as a Gantt chart: one self-contained web page (docs/ui.md)",
    )
    rp.add_argument("--seed", type=seed, default=0, help="seed of the synthetic workload")
    rp.set_defaults(func=cmd_replay)


def _analyze_command(sub: Any) -> None:
    an = sub.add_parser("analyze", help="fit a workload model to a trace (seed 000, sec. 4)")
    an.add_argument("trace", help="SWF file (plain or .gz)")
    an.add_argument("-o", "--output", required=True, metavar="MODEL.json", help="model file")
    an.add_argument("--nodes", type=node_count, help="machine width (default: trace header)")
    an.add_argument("--seed", type=seed, default=0, help="seed of the per-cell sampling")
    an.set_defaults(func=cmd_analyze)


def _generate_command(sub: Any) -> None:
    gen = sub.add_parser("generate", help="draw a synthetic job set from a workload model")
    gen.add_argument("model", help="MODEL.json written by batchd analyze")
    gen.add_argument(
        "-n", "--count", type=int_in(1, 10_000_000), default=10_000, help="number of jobs"
    )
    gen.add_argument("--seed", type=seed, default=0, help="random seed")
    gen.add_argument("-o", "--output", required=True, metavar="OUT.swf", help="SWF output")
    gen.add_argument(
        "--max-width",
        type=node_count,
        metavar="W",
        help="split wider jobs to width W, keeping each job's area",
    )
    gen.add_argument(
        "--shrink",
        type=shrink,
        default=1.0,
        metavar="F",
        help="multiply inter-arrival times by F",
    )
    gen.add_argument(
        "--scale-to-nodes",
        type=node_count,
        metavar="N",
        help="size the set for N nodes (e.g. a grid's total): inter-arrival times times "
        "model nodes / N, job shapes kept, so the load per node stays the trace's",
    )
    gen.add_argument(
        "--double",
        action="store_true",
        help="every job twice, the copy at the same second, ids renumbered (2 x -n jobs)",
    )
    gen.set_defaults(func=cmd_generate)


def cmd_serve(args: argparse.Namespace) -> int:
    import asyncio

    from batchd.server.daemon import ServeOptions, serve
    from batchd.server.logs import setup_logging

    setup_logging(args.log_level)
    opts = ServeOptions(
        config=args.config,
        speed=args.speed,
        realtime=args.realtime,
        socket=args.socket,
        listen=args.listen,
        token_file=args.token_file,
        state=args.state,
        replay=args.replay,
        shrink=args.shrink,
        seed=args.seed,
        sync=args.sync,
        start=args.start,
    )
    return asyncio.run(serve(opts))


def _serve_command(sub: Any) -> None:
    sv = sub.add_parser("serve", help="run the live daemon (qsub/qstat talk to it)")
    sv.add_argument("--config", default="conf/hpcline96.toml", help="site config (TOML)")
    clock = sv.add_mutually_exclusive_group()
    clock.add_argument(
        "--speed",
        type=speed,
        metavar="F",
        help="accelerated clock: one wall second is F emulated seconds",
    )
    clock.add_argument("--realtime", action="store_true", help="real-time clock (the default)")
    sv.add_argument("--socket", metavar="PATH", help="Unix socket to listen on")
    sv.add_argument(
        "--listen",
        metavar="[HOST:]PORT",
        help="also listen on TCP (loopback unless HOST is given); needs --token-file",
    )
    sv.add_argument("--token-file", metavar="FILE", help="USER:TOKEN lines for TCP callers")
    sv.add_argument("--state", metavar="FILE.db", help="SQLite state file")
    sv.add_argument(
        "--replay",
        metavar="TRACE",
        help="inject a trace's jobs at their submit times (SWF or synthetic[:N])",
    )
    sv.add_argument(
        "--shrink",
        type=shrink,
        default=1.0,
        metavar="F",
        help="multiply the trace's inter-arrival times by F",
    )
    sv.add_argument("--seed", type=seed, default=0, help="seed of the synthetic workload")
    sv.add_argument(
        "--start",
        metavar="WHEN",
        help="emulated start of an accelerated clock: epoch seconds, an ISO date "
        "and time, or 'trace' (when the --replay trace's first job arrived)",
    )
    sv.add_argument(
        "--sync",
        choices=["full", "normal"],
        default="full",
        help="SQLite synchronous mode: full survives power loss, normal a crash",
    )
    sv.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    sv.set_defaults(func=cmd_serve)


def cmd_demo(args: argparse.Namespace) -> int:
    from batchd.demo import run_demo

    return run_demo(args.config, args.speed, args.jobs)


def _demo_command(sub: Any) -> None:
    dm = sub.add_parser("demo", help="start the daemon, use it as a user would, stop it")
    dm.add_argument("--config", default="conf/hpcline96.toml", help="site config (TOML)")
    dm.add_argument(
        "--speed",
        type=speed,
        default=600.0,
        metavar="F",
        help="emulated seconds per wall second",
    )
    dm.add_argument(
        "--jobs", type=int_in(1, 1_000_000), default=2000, help="synthetic jobs to inject"
    )
    dm.set_defaults(func=cmd_demo)


def _report_command(sub: Any) -> None:
    from batchd.report import add_report_command

    add_report_command(sub)


def _sweep_command(sub: Any) -> None:
    from batchd.sweep.cli import add_sweep_command

    add_sweep_command(sub)


# Each adds one command to the subparsers, in the order ``batchd --help`` lists them.
_COMMANDS: dict[str, Callable[[Any], None]] = {
    "replay": _replay_command,
    "analyze": _analyze_command,
    "generate": _generate_command,
    "serve": _serve_command,
    "demo": _demo_command,
    "report": _report_command,
    "sweep": _sweep_command,
    "utility": _utility_command,
    "moldable": _moldable_command,
}


def main(argv: Sequence[str] | None = None) -> int:
    args_given = sys.argv[1:] if argv is None else list(argv)
    command = args_given[0] if args_given and args_given[0] in _COMMANDS else None
    parser = build_parser(command)
    try:
        args = parser.parse_args(argv)
        return int(args.func(args))
    except CLIError as exc:
        print(f"batchd: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (ValueError, OSError) as exc:
        # Bad input (policy, config, trace, numbers): one line, never a traceback.
        print(f"batchd: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
