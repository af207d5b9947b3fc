"""``batchd report dynp``: the evaluation of seed 000 (sec. 5) on batchd.

For each ``--trace`` (an SWF file used as is, or ``synthetic-from:PATH``: a job
set generated from the model of the trace PATH, sec. 4) and each shrinking
factor, every configuration is replayed once:

* FCFS, SJF and LJF with conservative backfilling (``fcfs-cons`` ...),
* basic dynP with lower bound 7200 s and upper bound 9000 s (``dynp-basic``),
* self-tuning dynP, simple and advanced decider x quality ARTwW, ART, MS.

Runs go to a pool of spawned worker processes, the longest first. Each summary
is appended to OUT/results.json as soon as it arrives, so ``--resume`` after an
interruption only runs what is missing. OUT/report.md holds Tables 4-6 of the
paper, a table per trace over the shrink factors, Figs. 2-5 and 8 and the run
times; its Discussion section is left for a person to write.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shlex
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from batchd.argtypes import positive_int
from batchd.report import tables
from batchd.report.framework.pool import run_parallel

SYNTHETIC_PREFIX = "synthetic-from:"
DEFAULT_JOBS = 10_000
DEFAULT_OUT = "dynp-study"
RESULTS_FILE = "results.json"
REPORT_FILE = "report.md"
JOBSETS_DIR = "jobsets"
# Batch-partition widths the paper (Table 2) used; SDSC: the cleaned SP2 log's 128
# (the paper's 352 belongs to another log of that machine).
PAPER_WIDTHS = {"CTC": 430, "KTH": 100, "SDSC": 128, "PC2": 96}
BASIC_BOUNDS = (("lower", "7200"), ("upper", "9000"))
DISCUSSION_PLACEHOLDER = "(to be written from the results above)"

Entry = dict[str, Any]


class StudyError(ValueError):
    """Study options that cannot be used (printed as one line by the CLI)."""


# --------------------------------------------------------------------------- configurations


@dataclass(frozen=True)
class Config:
    """One scheduler configuration: a registered policy and its parameters."""

    name: str
    policy: str
    params: tuple[tuple[str, str], ...] = ()
    weight: float = 1.0  # rough relative cost of a replay, to start the longest first

    @property
    def param_dict(self) -> dict[str, str]:
        return dict(self.params)


def _cons(order: str) -> Config:
    return Config(f"{order}-cons", f"{order}-cons")


def _dynp(decider: str, quality: str) -> Config:
    params = (("decider", decider), ("quality", quality))
    return Config(tables.dynp_label(decider, quality), "dynp", params, weight=4.0)


def config_set(which: str) -> list[Config]:
    """``basic``: the three single policies; ``default``: the paper's 10; ``all``: + SLDwW, AWT."""
    basic = [_cons(order) for order in ("fcfs", "sjf", "ljf")]
    if which == "basic":
        return basic
    qualities = tables.PAPER_QUALITIES
    if which == "all":
        qualities = (*qualities, *tables.EXTRA_QUALITIES)
    elif which != "default":
        raise StudyError(f"--configs: expected basic, default or all, got {which!r}")
    dynp_basic = Config(tables.BASIC_DYNP, "dynp-basic", BASIC_BOUNDS, weight=1.5)
    tuned = [_dynp(d, q) for q in qualities for d in tables.DECIDERS]
    return [*basic, dynp_basic, *tuned]


def check_policies(configs: Iterable[Config]) -> None:
    """Build each configuration once here, so a missing policy fails before any work."""
    from batchd.sched.registry import make_policy

    for config in configs:
        try:
            make_policy(config.policy, config.param_dict)
        except ValueError as exc:
            hint = " (or use --configs basic)" if config.policy.startswith("dynp") else ""
            raise StudyError(f"configuration {config.name}: {exc}{hint}") from None


# --------------------------------------------------------------------------- traces


@dataclass(frozen=True)
class TraceSpec:
    """A job set of the study: its name in tables, the file replayed, the machine width."""

    name: str
    source: str
    jobset: str
    nodes: int
    digest: str
    work: float  # rough number of jobs, for ordering runs
    generated: int | None = None  # number of jobs generated (synthetic sets)
    stats: Mapping[str, Any] | None = None  # Table 3 statistics (synthetic sets)


def trace_base_name(path: str | Path) -> str:
    """``CTC-SP2-1996-3.1-cln.swf.gz`` -> ``CTC``: the file name up to the first '-'."""
    name = Path(path).name
    for suffix in (".gz", ".swf"):
        name = name.removesuffix(suffix)
    return name.split("-")[0]


def machine_width(base: str, nodes_for: Mapping[str, int], fallback: int | None) -> int | None:
    """``--nodes-for`` first, then the paper's width for a known name, then ``fallback``."""
    key = base.upper()
    if key in nodes_for:
        return nodes_for[key]
    return PAPER_WIDTHS.get(key, fallback)


def file_digest(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def prepare_trace(
    arg: str, out: Path, *, jobs: int, seed: int, nodes_for: Mapping[str, int]
) -> TraceSpec:
    """Resolve one ``--trace`` argument; a ``synthetic-from:`` set is generated into OUT."""
    if arg.startswith(SYNTHETIC_PREFIX):
        return _synthetic_trace(arg, out, jobs=jobs, seed=seed, nodes_for=nodes_for)
    return _plain_trace(arg, nodes_for)


def _existing(path: Path) -> Path:
    if not path.is_file():
        raise StudyError(f"{path}: no such trace file")
    return path


def _synthetic_trace(
    arg: str, out: Path, *, jobs: int, seed: int, nodes_for: Mapping[str, int]
) -> TraceSpec:
    from batchd.workload.generate import generate_jobs, job_set_stats, write_generated_swf
    from batchd.workload.model_fit import analyze_trace

    path = _existing(Path(arg.removeprefix(SYNTHETIC_PREFIX)))
    base = trace_base_name(path)
    model = analyze_trace(path)
    nodes = machine_width(base, nodes_for, model.machine_nodes) or model.machine_nodes
    if nodes != model.machine_nodes:
        model = replace(model, machine_nodes=nodes)
    generated = generate_jobs(model, jobs, seed=seed)
    jobset = out / JOBSETS_DIR / f"{base}_syn.swf"
    jobset.parent.mkdir(parents=True, exist_ok=True)
    write_generated_swf(jobset, generated, model, seed)
    name = f"{base}_syn"
    return TraceSpec(
        name=name,
        source=arg,
        jobset=str(jobset),
        nodes=nodes,
        digest=file_digest(jobset),
        work=float(jobs),
        generated=jobs,
        stats=job_set_stats(generated, nodes, name=name),
    )


def _plain_trace(arg: str, nodes_for: Mapping[str, int]) -> TraceSpec:
    from batchd.workload import read_header

    path = _existing(Path(arg))
    base = trace_base_name(path)
    header = read_header(path)
    nodes = machine_width(base, nodes_for, header.max_nodes or header.max_procs)
    if not nodes:
        raise StudyError(f"{path}: the header names no machine size; give --nodes-for {base}=N")
    size = path.stat().st_size * (5 if path.name.endswith(".gz") else 1)
    return TraceSpec(base, arg, str(path), nodes, file_digest(path), work=size / 100.0)


def prepare_traces(
    args: Sequence[str], out: Path, *, jobs: int, seed: int, nodes_for: Mapping[str, int]
) -> list[TraceSpec]:
    specs = [prepare_trace(a, out, jobs=jobs, seed=seed, nodes_for=nodes_for) for a in args]
    names = [s.name for s in specs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise StudyError(f"--trace: two job sets would be named {', '.join(duplicates)}")
    return specs


# --------------------------------------------------------------------------- runs


@dataclass(frozen=True)
class Task:
    """One replay: a job set, a shrink factor, a configuration."""

    trace: str
    jobset: str
    digest: str
    nodes: int
    shrink: float
    config: Config
    perfect_estimates: bool
    cost: float

    @property
    def key(self) -> tuple[str, float, str]:
        return (self.trace, round(self.shrink, 6), self.config.name)


def plan_tasks(
    specs: Sequence[TraceSpec],
    shrinks: Sequence[float],
    configs: Sequence[Config],
    *,
    perfect_estimates: bool = False,
) -> list[Task]:
    """Every (trace, shrink, configuration), longest first (dynP at small shrink leads)."""
    tasks = [
        Task(
            trace=spec.name,
            jobset=spec.jobset,
            digest=spec.digest,
            nodes=spec.nodes,
            shrink=shrink,
            config=config,
            perfect_estimates=perfect_estimates,
            cost=spec.work * config.weight / shrink**2,
        )
        for spec in specs
        for shrink in shrinks
        for config in configs
    ]
    return sorted(tasks, key=lambda t: t.cost, reverse=True)


def plain_json(value: Any) -> Any:
    """``json.dumps`` default for replay summaries: numpy scalars, sets and tuples."""
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if isinstance(value, set | tuple):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def run_task(task: Task) -> Entry:
    """Replay one task (in a worker process) and return its results entry."""
    from batchd.replay import ReplayOptions, run_replay

    began = time.perf_counter()
    opts = ReplayOptions(
        trace=task.jobset,
        policy=task.config.policy,
        params=task.config.param_dict,
        nodes=task.nodes,
        shrink=task.shrink,
        perfect_estimates=task.perfect_estimates,
    )
    summary = json.loads(json.dumps(run_replay(opts).summary, default=plain_json))
    return {
        "trace": task.trace,
        "shrink": task.shrink,
        "config": task.config.name,
        "policy": task.config.policy,
        "params": task.config.param_dict,
        "summary": summary,
        "nodes": task.nodes,
        "jobset": task.jobset,
        "jobset_sha256": task.digest,
        "perfect_estimates": task.perfect_estimates,
        "seconds": round(time.perf_counter() - began, 3),
    }


def entry_key(entry: Mapping[str, Any]) -> tuple[str, float, str]:
    return (entry["trace"], round(float(entry["shrink"]), 6), entry["config"])


def reusable(entry: Mapping[str, Any], task: Task) -> bool:
    """An earlier entry answers ``task`` when the job set, machine and options are the same."""
    return (
        entry_key(entry) == task.key
        and entry.get("params") == task.config.param_dict
        and entry.get("policy") == task.config.policy
        and entry.get("nodes") == task.nodes
        and entry.get("jobset_sha256") == task.digest
        and bool(entry.get("perfect_estimates")) == task.perfect_estimates
    )


def load_results(path: Path) -> list[Entry]:
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise StudyError(f"{path}: not valid JSON ({exc}); remove it or drop --resume") from None
    if not isinstance(data, list):
        raise StudyError(f"{path}: expected a list of results")
    return data


def save_results(path: Path, entries: Sequence[Entry]) -> None:
    """Write atomically, so an interrupted study leaves a readable file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(list(entries), indent=1) + "\n")
    tmp.replace(path)


# --------------------------------------------------------------------------- the study


@dataclass
class StudyOptions:
    traces: list[str]
    shrinks: list[float]
    out: Path
    jobs: int = DEFAULT_JOBS
    seed: int = 0
    workers: int | None = None
    nodes_for: dict[str, int] = field(default_factory=dict)
    perfect_estimates: bool = False
    configs: str = "default"
    resume: bool = False
    command: str = ""


@dataclass
class StudyOutcome:
    report: Path
    results: list[Entry]
    new: int
    reused: int
    failures: list[tuple[Task, str]]
    seconds: float
    figures: list[Path]


def _order(entries: Iterable[Entry], traces: Sequence[str], configs: Sequence[str]) -> list[Entry]:
    def rank(e: Entry) -> tuple[int, float, int]:
        t = traces.index(e["trace"]) if e["trace"] in traces else len(traces)
        c = configs.index(e["config"]) if e["config"] in configs else len(configs)
        return (t, -float(e["shrink"]), c)

    return sorted(entries, key=rank)


def run_study(opts: StudyOptions) -> StudyOutcome:
    """Generate the job sets, run (or reuse) every replay, write results.json and report.md."""
    began = time.perf_counter()
    configs = config_set(opts.configs)
    check_policies(configs)
    opts.out.mkdir(parents=True, exist_ok=True)
    specs = prepare_traces(
        opts.traces, opts.out, jobs=opts.jobs, seed=opts.seed, nodes_for=opts.nodes_for
    )
    tasks = plan_tasks(specs, opts.shrinks, configs, perfect_estimates=opts.perfect_estimates)
    results_path = opts.out / RESULTS_FILE
    previous = {entry_key(e): e for e in load_results(results_path)} if opts.resume else {}
    done = {
        t.key: previous[t.key] for t in tasks if t.key in previous and reusable(previous[t.key], t)
    }
    todo = [t for t in tasks if t.key not in done]
    kept = {k: e for k, e in previous.items() if k not in {t.key for t in todo}}
    names = [s.name for s in specs]
    config_names = [c.name for c in configs]
    failures: list[tuple[Task, str]] = []

    def on_done(task: Task, entry: Entry | None, error: BaseException | None) -> None:
        if entry is None:
            failures.append((task, f"{type(error).__name__}: {error}"))
            return
        kept[task.key] = entry
        done[task.key] = entry
        save_results(results_path, _order(kept.values(), names, config_names))

    save_results(results_path, _order(kept.values(), names, config_names))
    workers = opts.workers or os.cpu_count() or 1
    run_parallel(
        todo,
        run_task,
        workers,
        on_done,
        desc="dynp study",
        label=lambda t: f"{t.trace} {t.shrink:.2f} {t.config.name}",
    )
    results = _order(done.values(), names, config_names)
    meta = study_meta(opts, workers, len(todo) - len(failures), len(tasks) - len(todo))
    meta["seconds"] = time.perf_counter() - began
    report, figures = write_report(opts.out, specs, results, meta, failures)
    return StudyOutcome(
        report=report,
        results=results,
        new=len(todo) - len(failures),
        reused=len(tasks) - len(todo),
        failures=failures,
        seconds=meta["seconds"],
        figures=figures,
    )


# --------------------------------------------------------------------------- report


def study_meta(opts: StudyOptions, workers: int, new: int, reused: int) -> dict[str, Any]:
    from batchd import __version__

    return {
        "command": invoked_command() or opts.command,
        "options": opts.command,
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "batchd": __version__,
        "workers": workers,
        "new": new,
        "reused": reused,
        "jobs": opts.jobs,
        "seed": opts.seed,
        "perfect_estimates": opts.perfect_estimates,
        "configs": opts.configs,
    }


def _header(meta: Mapping[str, Any]) -> list[str]:
    estimates = "perfect (estimate = runtime)" if meta["perfect_estimates"] else "the users'"
    lines = [
        "# dynP study: self-tuning dynP vs single policies",
        "",
        "After A. Streit, *A Self-Tuning Job Scheduler Family with Dynamic Policy Switching*, "
        "sec. 5 (Tables 4-6, Figs. 2-5 and 8), replayed with batchd.",
        "",
        f"- Command: `{meta['command']}`",
    ]
    if meta["options"] != meta["command"]:
        lines.append(f"- All options: `{meta['options']}`")
    lines += [
        f"- Date: {meta['date']}",
        f"- Machine: {meta['cpus']} CPUs, Python {meta['python']}, {meta['platform']}, "
        f"batchd {meta['batchd']}",
        f"- Runs: {meta['new'] + meta['reused']} ({meta['new']} run now in {meta['workers']} "
        f"worker processes, {meta['reused']} reused from {RESULTS_FILE}); "
        f"study wall time {meta['seconds']:.1f} s",
        f"- Configurations: `{meta['configs']}`; runtime estimates: {estimates}; "
        f"synthetic sets: {meta['jobs']:,} jobs, seed {meta['seed']}",
        "",
    ]
    return lines


def _jobsets_section(specs: Sequence[TraceSpec], results: Sequence[Entry]) -> list[str]:
    from batchd.workload.generate import format_table3

    replayed = {e["trace"]: e["summary"].get("jobs") for e in results}
    rows = [
        [
            s.name,
            f"`{s.source}`",
            f"`{s.jobset}`",
            f"{s.nodes:,}",
            tables.fmt_int(s.generated) if s.generated is not None else "as is",
            tables.fmt_int(replayed.get(s.name)),
        ]
        for s in specs
    ]
    header = ["job set", "--trace", "replayed file", "nodes", "generated", "jobs replayed"]
    lines = ["## Job sets", "", tables.markdown_table(header, rows, left=3), ""]
    generated = [s for s in specs if s.stats is not None]
    if generated:
        stats = [s.stats for s in generated if s.stats is not None]
        lines += [
            "Properties of the synthetic job sets (paper Table 3 shape):",
            "",
            "```",
            format_table3(stats, [s.name for s in generated]),
            "```",
            "",
        ]
    return lines


def _has_dynp(results: Sequence[Entry], config: str | None = None) -> bool:
    return any(e["policy"] == "dynp" and (config is None or e["config"] == config) for e in results)


def _tables_section(results: Sequence[Entry], traces: Sequence[str]) -> list[str]:
    shrink = tables.reference_shrink(results)
    if shrink is None or not _has_dynp(results):
        return [
            "## Tables 4-6",
            "",
            "_No self-tuning dynP runs in this study (configurations without `dynp`)._",
            "",
        ]
    at = f"shrinking factor {tables.fmt_shrink(shrink)}"
    lines = [
        f"## Table 4: simple vs advanced decider ({at})",
        "",
        "LOC is computed as 1 - UTIL, the paper's identity for a saturated system "
        "(sec. 5.2); it is not the integral loss of capacity of its reference [19].",
        "",
    ]
    for trace in traces:
        lines += [f"### {trace}", "", tables.table4(results, trace, shrink), ""]
    lines += [
        f"## Table 5: self-tuning dynP, advanced decider, quality ARTwW ({at})",
        "",
        "Average actual runtime is ART - AWT (the mean of end - start, killed jobs up to "
        "their kill). Switches are in % of the decider calls; 'same policy' is the share of "
        "calls that kept the policy. The last two rows are batchd's own wall time of one "
        "self-tuning step (the paper quotes 0.05 s for 185 jobs).",
        "",
        tables.table5(results, traces, shrink),
        "",
        f"## Table 6: cases of the advanced decider, quality ARTwW ({at})",
        "",
        "Cases of Table 1, grouped as in the paper. Both derived rows follow their formulas "
        "with case 5 alone; the paper's own numbers add its whole '4b & 5' row to the "
        "'taking the current policy' row.",
        "",
        tables.table6(results, traces, shrink),
        "",
    ]
    return lines


def _series_section(results: Sequence[Entry], traces: Sequence[str]) -> list[str]:
    lines = [
        "## Performance at different workloads",
        "",
        "ARTwW, SLDwW60 and UTIL of the single policies, basic dynP (7200 s / 9000 s) and "
        "self-tuning dynP (advanced decider, quality ARTwW) over the shrinking factors.",
        "",
    ]
    for trace in traces:
        lines += [f"### {trace}", "", tables.shrink_table(results, trace), ""]
    return lines


def _figures_section(figures: Sequence[tuple[Any, Path | None]]) -> list[str]:
    lines = ["## Figures", ""]
    for spec, path in figures:
        if path is None:
            lines += [f"_{spec.caption}: not drawn (no runs of these configurations)._", ""]
        else:
            lines += [f"![{spec.caption}]({path.name})", "", f"*{spec.caption}.*", ""]
    return lines


def _runtimes_section(results: Sequence[Entry], meta: Mapping[str, Any]) -> list[str]:
    busy = sum(float(e.get("seconds") or 0.0) for e in results)
    return [
        "## Run times",
        "",
        "Wall seconds of each replay in its worker process (loading the job set included); "
        f"{busy:,.1f} s in all, {meta['seconds']:,.1f} s of study wall time.",
        "",
        tables.runtime_table(results),
        "",
    ]


def _failures_section(failures: Sequence[tuple[Task, str]]) -> list[str]:
    if not failures:
        return []
    rows = [[t.trace, tables.fmt_shrink(t.shrink), t.config.name, msg] for t, msg in failures]
    return [
        "## Failed runs",
        "",
        tables.markdown_table(["job set", "shrink", "configuration", "error"], rows, left=4),
        "",
    ]


def build_report(
    specs: Sequence[TraceSpec],
    results: Sequence[Entry],
    meta: Mapping[str, Any],
    figures: Sequence[tuple[Any, Path | None]],
    failures: Sequence[tuple[Task, str]] = (),
) -> str:
    traces = [s.name for s in specs]
    lines = [
        *_header(meta),
        *_jobsets_section(specs, results),
        *_tables_section(results, traces),
        *_series_section(results, traces),
        *_figures_section(figures),
        *_runtimes_section(results, meta),
        *_failures_section(failures),
        "## Discussion",
        "",
        DISCUSSION_PLACEHOLDER,
        "",
    ]
    return "\n".join(lines)


def write_report(
    out: Path,
    specs: Sequence[TraceSpec],
    results: Sequence[Entry],
    meta: Mapping[str, Any],
    failures: Sequence[tuple[Task, str]] = (),
) -> tuple[Path, list[Path]]:
    """Draw the figures and write OUT/report.md; returns it and the PNGs written."""
    from batchd.report.plots import write_figures

    figures = write_figures(results, out, [s.name for s in specs])
    path = out / REPORT_FILE
    path.write_text(build_report(specs, results, meta, figures, failures))
    return path, [p for _, p in figures if p is not None]


# --------------------------------------------------------------------------- command line


def parse_shrinks(text: str) -> list[float]:
    """``"1.0,0.9,0.8"`` -> [1.0, 0.9, 0.8] (duplicates dropped, order kept)."""
    values: list[float] = []
    for item in text.split(","):
        try:
            value = float(item)
        except ValueError:
            raise StudyError(f"--shrink: expected numbers like 1.0,0.9, got {item!r}") from None
        if not 0 < value < float("inf"):
            raise StudyError(f"--shrink: factors must be > 0, got {item!r}")
        if value not in values:
            values.append(value)
    return values


def parse_nodes_for(items: Sequence[str]) -> dict[str, int]:
    """``["CTC=430"]`` -> {"CTC": 430} (names case-insensitive, kept upper-case)."""
    out: dict[str, int] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip().isdigit() or int(value) <= 0:
            raise StudyError(f"--nodes-for {item!r}: expected NAME=N with N a positive integer")
        out[name.strip().upper()] = int(value)
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``batchd report dynp``."""
    add = parser.add_argument
    add("--trace", action="append", required=True, metavar="T",
        help="SWF file used as is, or synthetic-from:PATH to generate a job set from the "
             "model of the trace PATH (repeatable)")  # fmt: skip
    add("--shrink", default="1.0", metavar="F[,F...]",
        help="shrinking factors of the inter-arrival times (default 1.0)")  # fmt: skip
    add("--nodes-for", action="append", default=[], metavar="NAME=N",
        help="machine width of job set NAME (default: the paper's CTC 430, KTH 100, "
             "SDSC 128, PC2 96, else the trace header)")  # fmt: skip
    add("--jobs", type=positive_int, default=DEFAULT_JOBS, metavar="N",
        help=f"jobs per synthetic set (default {DEFAULT_JOBS})")  # fmt: skip
    add("--seed", type=int, default=0, help="seed of the synthetic sets (default 0)")
    add("--workers", type=positive_int, default=None, metavar="K",
        help="worker processes (default: the CPU count)")  # fmt: skip
    add("--out", default=DEFAULT_OUT, metavar="DIR",
        help=f"output directory (default {DEFAULT_OUT})")  # fmt: skip
    add("--perfect-estimates", action="store_true", help="estimate := actual runtime (Fig. 6)")
    add("--configs", choices=("default", "all", "basic"), default="default",
        help="default: the paper's 10 configurations; all: + dynP quality SLDwW and AWT; "
             "basic: FCFS/SJF/LJF-cons only")  # fmt: skip
    add("--resume", action="store_true", help=f"reuse the runs already in OUT/{RESULTS_FILE}")
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
    if args.workers is not None:
        parts += ["--workers", str(args.workers)]
    parts += ["--out", str(args.out), "--configs", args.configs]
    parts += [f for f, on in (("--perfect-estimates", args.perfect_estimates),
                              ("--resume", args.resume)) if on]  # fmt: skip
    return shlex.join(parts)


def invoked_command() -> str | None:
    """The exact command line when run as the ``batchd`` program, else None."""
    if Path(sys.argv[0]).name != "batchd" or "report" not in sys.argv[1:]:
        return None
    return shlex.join(["batchd", *sys.argv[1:]])


def options_from_args(args: argparse.Namespace) -> StudyOptions:
    return StudyOptions(
        traces=list(args.trace),
        shrinks=parse_shrinks(args.shrink),
        out=Path(args.out),
        jobs=args.jobs,
        seed=args.seed,
        workers=args.workers,
        nodes_for=parse_nodes_for(args.nodes_for),
        perfect_estimates=args.perfect_estimates,
        configs=args.configs,
        resume=args.resume,
        command=command_line(args),
    )


def cmd_report_dynp(args: argparse.Namespace) -> int:
    outcome = run_study(options_from_args(args))
    for task, message in outcome.failures:
        print(f"batchd: run failed: {task.trace} shrink {task.shrink:.2f} "
              f"{task.config.name}: {message}", file=sys.stderr)  # fmt: skip
    print(
        f"{outcome.report}: {len(outcome.results)} runs ({outcome.new} new, "
        f"{outcome.reused} reused, {len(outcome.failures)} failed), "
        f"{len(outcome.figures)} figures, {outcome.seconds:.1f} s"
    )
    return 1 if outcome.failures else 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m batchd.report.dynp_study report dynp ...`` before the CLI wiring."""
    from batchd.report import add_report_command

    parser = argparse.ArgumentParser(prog="batchd")
    add_report_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except ValueError as exc:
        print(f"batchd: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
