"""The ``batchd`` command: replay (and the study tools that build on it)."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from batchd.argtypes import (
    CLIError,
    fail,
    int_in,
    node_count,
    positive_int,
    seed,
    shrink,
    speed,
)
from batchd.augment import moldable_command, utility_command

EXIT_USAGE = 2


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
    from batchd.sched.registry import parse_param_args
    from batchd.workload import write_jobs_csv, write_swf

    params = parse_param_args(args.param)
    grid_params: dict[str, str] = {}
    if args.grid_param:  # the grid layer is imported only by a run that needs it
        from batchd.sched.grid.params import parse_grid_param_args

        grid_params = parse_grid_param_args(args.grid_param)
    opts = ReplayOptions(
        trace=args.trace,
        policy=args.policy,
        params=params,
        machine=args.machine,
        nodes=args.nodes,
        shrink=args.shrink,
        perfect_estimates=args.perfect_estimates,
        kill=not args.no_kill,
        first=args.first,
        double=args.double,
        seed=args.seed,
        grid=args.grid,
        grid_params=grid_params,
        records=bool(args.out_swf),  # only an SWF written back reads them
        hosts=bool(args.out_jobs_csv or args.gantt),  # only these read finished jobs' nodes
        fold_hosts=True,  # they read them as runs
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
    from batchd.workload.trace_file import trace_path_problem
    from batchd.workload.trace_model import format_table2

    problem = trace_path_problem(args.trace)
    if problem is not None:
        fail(problem)
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
    an = sub.add_parser(
        "analyze", help="fit a workload model to a trace (Streit's dynP paper, sec. 4)"
    )
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


def cmd_warm(args: argparse.Namespace) -> int:
    from batchd.engine import warm

    unknown = [u for u in args.unit if u not in warm.UNITS]
    if unknown:
        raise CLIError(f"unit: {unknown[0]!r} is not a kernel unit: one of {', '.join(warm.UNITS)}")
    for unit in args.unit or list(warm.UNITS):
        print(f"{unit}: {warm.warm(unit):.2f} s", flush=True)
    return 0


def _warm_command(sub: Any) -> None:
    from batchd.engine.warm import UNITS

    wm = sub.add_parser(
        "warm",
        help="compile the scheduling kernels into numba's cache (NUMBA_CACHE_DIR)",
        description="Compile the scheduling kernels ahead, into numba's cache: the one "
        "NUMBA_CACHE_DIR names, else __pycache__ beside the sources. Prints the seconds "
        "each unit took (compiling, or loading what the cache holds).",
    )
    wm.add_argument(
        "unit", nargs="*", help=f"kernel units to compile: {', '.join(UNITS)} (default: all)"
    )
    wm.set_defaults(func=cmd_warm)


# The studies are a package beside batchd that builds on it: batchd loads their command by
# name, on demand, and never imports them otherwise.
STUDIES_CLI = "batchd_studies.cli"


def _report_command(sub: Any) -> None:
    try:
        studies = importlib.import_module(STUDIES_CLI)
    except ModuleNotFoundError as exc:
        if exc.name not in ("batchd_studies", STUDIES_CLI):
            raise
        _report_unavailable(sub)
        return
    studies.add_report_command(sub)


def _report_unavailable(sub: Any) -> None:
    report = sub.add_parser(
        "report", help="study reports (the batchd_studies package is not installed)"
    )
    report.add_argument("study", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    report.set_defaults(func=cmd_report_unavailable)


def cmd_report_unavailable(args: argparse.Namespace) -> int:
    raise CLIError(
        "report: the studies package batchd_studies is not installed; "
        "install batchd with it (daemon/batchd_studies) to write study reports"
    )


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
    "warm": _warm_command,
    "report": _report_command,
    "sweep": _sweep_command,
    "utility": utility_command,
    "moldable": moldable_command,
}


# The optional packages of each extra (pyproject.toml): `make run` and `pip install .`
# leave them out; a command that needs one says which extra brings it.
EXTRAS = {
    "matplotlib": "report",
    "scipy": "report",
    "dask": "sweep",
    "distributed": "sweep",
    "pyarrow": "sweep",
}


def missing_extra(exc: ModuleNotFoundError) -> str | None:
    """What to install for a package of an extra that is missing, or None."""
    top = (exc.name or "").partition(".")[0]
    extra = EXTRAS.get(top)
    if extra is None:
        return None
    return (
        f"this needs {top}, which is not installed: pip install 'batchd[{extra}]' "
        "(in a checkout, make test installs every extra)"
    )


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
    except ModuleNotFoundError as exc:
        hint = missing_extra(exc)
        if hint is None:
            raise
        print(f"batchd: error: {hint}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
