"""``batchd report primetime``: the prime/non-prime time study of seed 001 on batchd.

Lo and Mache, *Job Scheduling for Prime Time vs. Non-prime Time* (sec. 4-5): the
``primetime`` policy is replayed on a trace for every pair of prime-time limits
(runtime limit in % of the weekday prime slot x jobsize limit in % of the
machine, 10%..100% each), for FCFS and EASY within each class, at one or more
machine sizes (a smaller machine is a heavier load, as in the paper).

Runs go to a pool of spawned worker processes, the longest first. Every result
is written to OUT/results.json as soon as it arrives; a rerun replays only what
is missing there and ``--report-only`` replays nothing. OUT/report.md holds the
paper's figures (response time of small and large jobs, prime and non-prime
utilization, slowdown with and without the two queues), Table 3 (ratios to the
best value of the sweep and percentages at 30-100, 80-100, 100-100) and a check
of each of the paper's rules of thumb against the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from batchd.argtypes import positive_int
from batchd.report import tables
from batchd.report.framework import StudyError
from batchd.report.framework.cli import invoked_command
from batchd.report.framework.markdown import MISSING, fmt_float, fmt_int, markdown_table
from batchd.report.framework.pool import run_parallel
from batchd.report.framework.results import plain_json
from batchd.report.framework.traces import file_digest, trace_base_name

DEFAULT_OUT = "primetime-study"
DEFAULT_LIMITS = tuple(range(10, 101, 10))
DEFAULT_DISCIPLINES = ("fcfs", "easy")
RESULTS_FILE = "results.json"
REPORT_FILE = "report.md"
DISCUSSION_FILE = "discussion.md"  # a person's discussion, included in the report if present
META_FILE = "study.json"  # command, date and wall time of the last invocation that replayed
LIMIT_MIN, LIMIT_MAX = 10, 100
EXTRA_COLUMN = (100, 30)  # the other reading of "one at 30%, the other at 100%"
NEAR_BEST = 1.5  # a ratio to the best value this small counts as "near the best"
MATTERS = 2.0  # limits matter when the single queue is at least this many times the best
DAY = 86400.0

Entry = dict[str, Any]
LimitKey = tuple[int, int]
Grid = dict[LimitKey, Mapping[str, Any]]

__all__ = [
    "Run",
    "StudyError",
    "StudyOptions",
    "TraceSpec",
    "add_arguments",
    "parse_disciplines",
    "parse_limits",
    "parse_nodes",
    "run_study",
]


# --------------------------------------------------------------------------- options


def parse_limits(text: str) -> list[int]:
    """``"10,30,100"`` -> [10, 30, 100]: whole percentages in 10..100, sorted, no duplicates."""
    values: set[int] = set()
    for item in text.split(","):
        item = item.strip().removesuffix("%")
        if not item.isdigit():
            raise StudyError(f"--limits: expected whole percentages like 10,30,100, got {item!r}")
        value = int(item)
        if not LIMIT_MIN <= value <= LIMIT_MAX:
            raise StudyError(
                f"--limits: each limit must be in {LIMIT_MIN}..{LIMIT_MAX} (%), got {value}"
            )
        values.add(value)
    return sorted(values)


def parse_nodes(text: str | None, machine: int | None) -> list[int]:
    """``"128,96,64"`` or ``"100%,75%,50%"`` (of ``machine``) -> node counts, largest first."""
    if text is None:
        if not machine:
            raise StudyError("--nodes: the trace header names no machine size; give --nodes N")
        return [machine]
    values: list[int] = []
    for raw in text.split(","):
        item = raw.strip()
        if item.endswith("%"):
            pct = item[:-1].strip()
            if not pct.replace(".", "", 1).isdigit() or not 0 < float(pct) <= 1000:
                raise StudyError(f"--nodes: expected N or P% items like 128,96 or 100%,50%, "
                                 f"got {item!r}")  # fmt: skip
            if not machine:
                raise StudyError(f"--nodes {item}: the trace header names no machine size; "
                                 "give node counts")  # fmt: skip
            value = max(1, round(machine * float(pct) / 100))
        elif item.isdigit() and int(item) > 0:
            value = int(item)
        else:
            raise StudyError(f"--nodes: expected positive node counts like 128,96,64, got {item!r}")
        if value not in values:
            values.append(value)
    return sorted(values, reverse=True)


def parse_disciplines(text: str) -> list[str]:
    """``"fcfs,easy"`` -> ["fcfs", "easy"]; each must be a discipline ``primetime`` accepts."""
    from batchd.sched.registry import make_policy

    names = list(dict.fromkeys(item.strip() for item in text.split(",")))
    for name in names:
        try:
            make_policy("primetime", {"discipline": name})
        except ValueError:
            raise StudyError(
                f"--disciplines: {name!r} is not a discipline of primetime "
                "(fcfs, easy or a registered policy such as sjf-easy)"
            ) from None
    return names


def discipline_title(name: str) -> str:
    return name.upper() if name in ("fcfs", "easy") else name


# --------------------------------------------------------------------------- traces and runs


@dataclass(frozen=True)
class TraceSpec:
    """A trace of the study: its short name, the file, its digest and header facts."""

    name: str
    path: str
    digest: str
    machine: int | None
    timezone: str | None


def prepare_trace(path_text: str) -> TraceSpec:
    from batchd.workload import read_header

    path = Path(path_text)
    if not path.is_file():
        raise StudyError(f"{path}: no such trace file")
    header = read_header(path)
    zone = header.value("TimeZoneString")
    return TraceSpec(
        name=trace_base_name(path),
        path=str(path),
        digest=file_digest(path),
        machine=header.max_nodes or header.max_procs,
        timezone=zone or None,
    )


@dataclass(frozen=True)
class Run:
    """One replay: a trace at a machine size, a discipline and a pair of prime-time limits."""

    trace: str
    path: str
    digest: str
    first: int | None
    nodes: int
    discipline: str
    runtime: int  # prime-time runtime limit, % of the weekday prime slot
    jobsize: int  # prime-time jobsize limit, % of the machine
    must_fit: bool
    cost: float = 1.0

    @property
    def key(self) -> tuple[Any, ...]:
        return (self.trace, self.digest, self.first, self.nodes, self.discipline,
                self.runtime, self.jobsize, self.must_fit)  # fmt: skip

    @property
    def params(self) -> dict[str, str]:
        return {
            "prime_runtime": f"{self.runtime}%",
            "prime_nodes": f"{self.jobsize}%",
            "discipline": self.discipline,
            "must_fit": "true" if self.must_fit else "false",
        }

    def label(self) -> str:
        return f"{self.trace} {self.nodes} {self.discipline} {self.runtime}/{self.jobsize}"


def entry_key(entry: Mapping[str, Any]) -> tuple[Any, ...]:
    return (entry["trace"], entry["trace_sha256"], entry.get("first"), entry["nodes"],
            entry["discipline"], entry["runtime_limit"], entry["jobsize_limit"],
            bool(entry["must_fit"]))  # fmt: skip


def plan_runs(
    specs: Sequence[TraceSpec],
    nodes: Mapping[str, Sequence[int]],
    disciplines: Sequence[str],
    limits: Sequence[int],
    *,
    first: int | None,
    must_fit: bool,
) -> list[Run]:
    """Every (trace, size, discipline, runtime limit, jobsize limit), the costliest first.

    A run costs more on a smaller machine (longer queues), with FCFS, and with lower
    limits (more jobs held for non-prime time); 100/100 is one plain queue.
    """
    runs = []
    for spec in specs:
        largest = max(nodes[spec.name])
        for n in nodes[spec.name]:
            for d in disciplines:
                for rt in limits:
                    for js in limits:
                        cost = (largest / n) ** 3 * (3.0 if d == "fcfs" else 1.0)
                        cost *= 0.1 if (rt, js) == (100, 100) else 2.0 - min(rt, js) / 100
                        runs.append(Run(spec.name, spec.path, spec.digest, first, n, d, rt, js,
                                        must_fit, cost))  # fmt: skip
    return sorted(runs, key=lambda r: r.cost, reverse=True)


def run_task(run: Run) -> Entry:
    """Replay one run (in a worker process) and return its results entry."""
    from batchd.replay import ReplayOptions, run_replay

    began = time.perf_counter()
    opts = ReplayOptions(
        trace=run.path, policy="primetime", params=run.params, nodes=run.nodes, first=run.first
    )
    result = run_replay(opts)
    summary = json.loads(json.dumps(result.summary, default=plain_json))
    extra = span_metrics(result.jobs, result.policy, run.nodes)
    return {
        "trace": run.trace,
        "nodes": run.nodes,
        "discipline": run.discipline,
        "runtime_limit": run.runtime,
        "jobsize_limit": run.jobsize,
        "must_fit": run.must_fit,
        "first": run.first,
        "params": run.params,
        "summary": summary,
        "extra": extra,
        "trace_file": run.path,
        "trace_sha256": run.digest,
        "seconds": round(time.perf_counter() - began, 3),
    }


def _gate(params: Mapping[str, str], workload: Any, nodes: int) -> Any:
    """A ``primetime`` policy set up like the replay's: the trace's clock and machine."""
    from batchd.replay import trace_clock
    from batchd.sched.registry import make_policy

    gate = make_policy("primetime", dict(params))
    origin, zone = trace_clock(workload)
    gate.localize(origin, zone)
    gate.set_machine(nodes)
    return gate


def span_metrics(jobs: Sequence[Any], gate: Any, nodes: int) -> dict[str, Any]:
    """What the summary's whole-schedule view hides when a queue does not keep up.

    The summary measures from the first submission to the last end. When large jobs
    pile up, the schedule runs on long after the last submission (the drain), with
    prime hours idle. Here: the offered load, the backlog at the last submission, the
    drain, and the prime/non-prime utilization over the submission span only.
    ``gate`` is the replay's ``primetime`` policy (its calendar on the trace's clock).
    """
    from batchd.metrics.primetime import window_utilization, windows_between

    if not jobs:
        return {}
    t0 = min(j.submit for j in jobs)
    t1 = max(j.submit for j in jobs)
    ran = [j for j in jobs if j.start >= 0 and j.end >= j.start]
    last_end = max((j.end for j in ran), default=t1)
    span = max(1, t1 - t0)
    util = window_utilization(ran, nodes, windows_between(gate, t0, t0 + span))
    by_window: dict[str, list[Any]] = {"prime": [], "nonprime": []}
    for job in ran:
        by_window[gate.window(job.submit)[0]].append(job)
    return {
        "submit_span": t1 - t0,
        "load": sum(j.width * j.runtime for j in jobs) / (nodes * span),
        "backlog_at_last_submit": sum(1 for j in jobs if j.start < 0 or j.start > t1),
        "drain": max(0, last_end - t1),
        "utilization_submit_span": util,
        "by_submit_window": {w: _response_stats(js) for w, js in by_window.items()},
    }


def _response_stats(jobs: Sequence[Any]) -> dict[str, float | int]:
    """Jobs, mean response time and mean slowdown (run time at least 1 s) of some jobs."""
    if not jobs:
        return {"jobs": 0, "art": 0.0, "slowdown": 0.0}
    resp = [j.end - j.submit for j in jobs]
    return {
        "jobs": len(jobs),
        "art": sum(resp) / len(jobs),
        "slowdown": sum(r / max(j.end - j.start, 1) for r, j in zip(resp, jobs, strict=True))
        / len(jobs),
    }


# --------------------------------------------------------------------------- results cache


def load_results(path: Path) -> list[Entry]:
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise StudyError(f"{path}: not valid JSON ({exc}); remove it to replay") from None
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise StudyError(f"{path}: expected a list of results; remove it to replay")
    try:
        for entry in data:
            entry_key(entry)
    except KeyError as exc:
        raise StudyError(f"{path}: an entry lacks {exc}; remove the file to replay") from None
    return data


def save_results(path: Path, entries: Iterable[Entry]) -> None:
    """Write atomically (an interrupted study leaves a readable file), one run a line."""
    ordered = sorted(entries, key=lambda e: (e["trace"], -e["nodes"], e["discipline"],
                                             e["runtime_limit"], e["jobsize_limit"],
                                             str(e.get("first")), bool(e["must_fit"])))  # fmt: skip
    tmp = path.with_name(path.name + ".tmp")
    lines = ",\n".join(json.dumps(e, separators=(",", ":")) for e in ordered)
    tmp.write_text(f"[\n{lines}\n]\n" if ordered else "[]\n")  # one run a line
    tmp.replace(path)


# --------------------------------------------------------------------------- the study


@dataclass
class StudyOptions:
    traces: list[str]
    nodes: str | None = None
    limits: list[int] = field(default_factory=lambda: list(DEFAULT_LIMITS))
    disciplines: list[str] = field(default_factory=lambda: list(DEFAULT_DISCIPLINES))
    first: int | None = None
    workers: int | None = None
    out: Path = Path(DEFAULT_OUT)
    report_only: bool = False
    must_fit: bool = True
    command: str = ""


@dataclass
class StudyOutcome:
    report: Path
    results: list[Entry]
    new: int
    reused: int
    failures: list[tuple[Run, str]]
    seconds: float
    figures: list[Path]


def run_study(opts: StudyOptions) -> StudyOutcome:
    began = time.perf_counter()
    specs = [prepare_trace(t) for t in dict.fromkeys(opts.traces)]
    names = [s.name for s in specs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise StudyError(f"--trace: two traces would be named {', '.join(duplicates)}")
    nodes = {s.name: parse_nodes(opts.nodes, s.machine) for s in specs}
    runs = plan_runs(specs, nodes, opts.disciplines, opts.limits, first=opts.first,
                     must_fit=opts.must_fit)  # fmt: skip
    opts.out.mkdir(parents=True, exist_ok=True)
    results_path = opts.out / RESULTS_FILE
    cache = {entry_key(e): e for e in load_results(results_path)}
    todo = [r for r in runs if r.key not in cache]
    if opts.report_only and todo:
        raise StudyError(
            f"--report-only: {results_path} lacks {len(todo)} of the {len(runs)} runs "
            f"(e.g. {todo[0].label()}); run without --report-only"
        )
    failures: list[tuple[Run, str]] = []

    def on_done(run: Run, entry: Entry | None, error: BaseException | None) -> None:
        if entry is None:
            failures.append((run, f"{type(error).__name__}: {error}"))
            return
        cache[run.key] = entry
        save_results(results_path, cache.values())

    workers = opts.workers or os.cpu_count() or 1
    run_parallel(
        todo, run_task, workers, on_done, desc="primetime study", label=lambda r: r.label()
    )
    results = [cache[r.key] for r in runs if r.key in cache]
    new = len(todo) - len(failures)
    meta = study_meta(opts, workers, new, len(runs) - len(todo))
    meta["seconds"] = time.perf_counter() - began
    meta_path = opts.out / META_FILE
    if new:
        meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    else:
        meta["replayed_by"] = _previous_meta(meta_path)
    report, figures = write_report(opts, specs, nodes, results, meta, failures)
    return StudyOutcome(report, results, new, len(runs) - len(todo), failures,
                        meta["seconds"], figures)  # fmt: skip


def _previous_meta(path: Path) -> dict[str, Any] | None:
    """The meta data of the last invocation that replayed something, if recorded."""
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) and "command" in data else None


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
    }


# --------------------------------------------------------------------------- lookups


def grids(results: Iterable[Entry]) -> dict[tuple[str, int, str], Grid]:
    """(trace, nodes, discipline) -> {(runtime limit, jobsize limit): summary}."""
    out: dict[tuple[str, int, str], Grid] = {}
    for e in results:
        key = (e["trace"], e["nodes"], e["discipline"])
        out.setdefault(key, {})[(e["runtime_limit"], e["jobsize_limit"])] = e["summary"]
    return out


def extras(results: Iterable[Entry]) -> dict[tuple[str, int, str], dict[LimitKey, Any]]:
    out: dict[tuple[str, int, str], dict[LimitKey, Any]] = {}
    for e in results:
        key = (e["trace"], e["nodes"], e["discipline"])
        out.setdefault(key, {})[(e["runtime_limit"], e["jobsize_limit"])] = e.get("extra") or {}
    return out


def metric_grid(grid: Grid, cls: str, metric: str) -> dict[LimitKey, float | None]:
    return {k: tables.pt_value(s, cls, metric) for k, s in grid.items()}


def large_share(summary: Mapping[str, Any] | None) -> float | None:
    block = tables.pt_block(summary)
    counts = block.get("jobs") if block else None
    if not counts:
        return None
    total = counts.get("prime", 0) + counts.get("nonprime", 0)
    return counts.get("nonprime", 0) / total if total else None


def _pct(value: float | None, digits: int = 1) -> str:
    return MISSING if value is None else f"{100 * value:.{digits}f} %"


def _x(value: float | None) -> str:
    return MISSING if value is None else f"{value:,.2f}x"


def _hours(seconds: float | None) -> str:
    return MISSING if seconds is None else f"{seconds / 3600:,.1f} h"


def _days(seconds: float | None) -> str:
    return MISSING if seconds is None else f"{seconds / DAY:,.1f} d"


# --------------------------------------------------------------------------- rules of thumb


@dataclass
class Verdict:
    """A rule of thumb checked on one sweep: holds / partly / does not hold, and why."""

    verdict: str
    numbers: str


def _ratio(grid: Grid, key: LimitKey, cls: str, metric: str) -> float | None:
    return tables.pt_ratio(grid, key, cls, metric) if key in grid else None


def _argbest(grid: Grid, cls: str, metric: str) -> LimitKey | None:
    """The limits with the smallest value of a metric (ties: the smaller limits)."""
    values = {k: v for k, v in metric_grid(grid, cls, metric).items() if v is not None}
    return min(values, key=lambda k: (values[k], k)) if values else None


def _lbl(key: LimitKey | None) -> str:
    return MISSING if key is None else tables.limit_label(key)


def rule_prime(grid: Grid) -> Verdict:
    """(1) Best prime service with either cutoff around 30%."""
    best = _argbest(grid, "prime", "art")
    r30 = _ratio(grid, (30, 100), "prime", "art")
    r30b = _ratio(grid, EXTRA_COLUMN, "prime", "art")
    single = _ratio(grid, (100, 100), "prime", "art")
    on30 = [r for k in grid if 30 in k and (r := _ratio(grid, k, "prime", "art")) is not None]
    numbers = (f"best at {_lbl(best)}; 30-100 {_x(r30)}, 100-30 {_x(r30b)}, "
               f"worst with a cutoff at 30 {_x(max(on30, default=None))}, "
               f"100-100 {_x(single)} of the best; {critical_limits(grid)}")  # fmt: skip
    if r30 is None or r30b is None or single is None:
        return Verdict("not tested (limits need 30 and 100)", numbers)
    if single < MATTERS:
        return Verdict(
            "does not apply: the limits hardly matter for small jobs (the paper saw the "
            "same on a lightly loaded machine)",
            numbers,
        )
    if max(r30, r30b) <= NEAR_BEST:
        return Verdict("holds", numbers)
    if min(r30, r30b) <= NEAR_BEST:
        which = "runtime" if r30 <= NEAR_BEST else "jobsize"
        return Verdict(f"partly: only a {which} cutoff of 30% is enough", numbers)
    return Verdict("does not hold", numbers)


def critical_limits(grid: Grid) -> str:
    """Where small jobs' response time first passes twice the best, along each axis."""
    limits = sorted({rt for rt, _ in grid})
    top = max(limits, default=None)

    def first(axis: int) -> str:
        for limit in limits:
            key = (limit, top) if axis == 0 else (top, limit)
            r = _ratio(grid, key, "prime", "art")  # type: ignore[arg-type]
            if r is not None and r > MATTERS:
                return f"{limit}%"
        return "never"

    if top is None:
        return ""
    by_runtime, by_jobsize = first(0), first(1)
    return (f"above {MATTERS:g}x first at runtime limit {by_runtime} (no jobsize limit) and "
            f"at jobsize limit {by_jobsize} (no runtime limit)")  # fmt: skip


def rule_nonprime(grid: Grid) -> Verdict:
    """(2) Best non-prime service with both cutoffs at 40% or more."""
    values = {k: v for k, v in metric_grid(grid, "nonprime", "art").items() if v is not None}
    if not values:
        return Verdict("not tested (no large jobs)", "")
    best = min(values, key=lambda k: (values[k], k))
    high = [v / values[best] for k, v in values.items() if min(k) >= 40]
    low = [v / values[best] for k, v in values.items() if min(k) < 40]
    med_hi = statistics.median(high) if high else None
    med_lo = statistics.median(low) if low else None
    numbers = (f"best at {_lbl(best)} ({_days(values[best])}); median ratio with both >= 40: "
               f"{_x(med_hi)}, with either < 40: {_x(med_lo)}")  # fmt: skip
    if med_hi is None or med_lo is None:
        return Verdict("not tested (limits need values below and above 40)", numbers)
    if min(best) >= 40 and med_hi < med_lo:
        return Verdict("holds", numbers)
    if med_hi < med_lo:
        return Verdict("partly: higher cutoffs help large jobs, the best is elsewhere", numbers)
    return Verdict("does not hold", numbers)


def rule_utilization(grid: Grid) -> Verdict:
    """(3) Maximum utilization and minimum overflow with both cutoffs as large as possible."""
    util = {k: tables.pt_percent(s, "utilization-all") for k, s in grid.items()}
    over = {k: tables.pt_percent(s, "overflow") for k, s in grid.items()}
    util_v = {k: v for k, v in util.items() if v is not None}
    over_v = {k: v for k, v in over.items() if v is not None}
    if (100, 100) not in util_v or not over_v:
        return Verdict("not tested (limits need 100)", "")
    top = max(util_v, key=lambda k: (util_v[k], k))
    numbers = (f"utilization-all highest at {_lbl(top)} ({_pct(util_v[top])}), 100-100 "
               f"{_pct(util_v[(100, 100)])}, 30-100 {_pct(util.get((30, 100)))}; overflow "
               f"{_pct(min(over_v.values()))}..{_pct(max(over_v.values()))}, 100-100 "
               f"{_pct(over_v.get((100, 100)))}")  # fmt: skip
    util_ok = util_v[(100, 100)] >= util_v[top] - 0.005
    over_ok = over_v.get((100, 100), 1.0) <= min(over_v.values()) + 1e-12
    if util_ok and over_ok:
        spread = max(over_v.values()) - min(over_v.values())
        return Verdict("holds" if spread > 0 else "holds (no overflow anywhere)", numbers)
    if util_ok or over_ok:
        return Verdict("partly", numbers)
    return Verdict("does not hold", numbers)


def rule_thumb(grid: Grid) -> Verdict:
    """The Prime Time Rule of Thumb: runtime 30%, jobsize 100%."""
    keys = ((30, 100), (80, 100), (100, 100))
    if any(k not in grid for k in (keys[0], keys[2])):
        return Verdict("not tested (limits need 30 and 100)", "")
    art = [_ratio(grid, k, "all", "art") for k in keys]
    sld = [_ratio(grid, k, "all", "slowdown") for k in keys]
    prime = _ratio(grid, keys[0], "prime", "art")
    numbers = (f"resptime-all ratio 30-100 {_x(art[0])}, 80-100 {_x(art[1])}, 100-100 "
               f"{_x(art[2])} (paper 1.81, 5.17, 6.37); slowdown-all {_x(sld[0])}, {_x(sld[1])}, "
               f"{_x(sld[2])} (paper 1.24, 12.80, 16.09); resptime-prime at 30-100 "
               f"{_x(prime)} (paper 1.73)")  # fmt: skip
    if None in (art[0], art[2], sld[0], sld[2], prime):
        return Verdict("not tested", numbers)
    better = [art[0] < art[2], sld[0] < sld[2]]  # type: ignore[operator]
    if all(better) and prime <= MATTERS:  # type: ignore[operator]
        return Verdict("holds", numbers)
    if any(better):
        return Verdict("partly", numbers)
    return Verdict("does not hold: the single queue is better for all jobs", numbers)


def rule_gap(fcfs: Grid | None, easy: Grid | None) -> Verdict:
    """FCFS vs EASY: EASY ~10x better without queues; two queues help FCFS (~100x) more."""
    if not fcfs or not easy or (100, 100) not in fcfs or (100, 100) not in easy:
        return Verdict("not tested (needs fcfs and easy with limits 100)", "")
    f1 = tables.pt_value(fcfs[(100, 100)], "all", "slowdown")
    e1 = tables.pt_value(easy[(100, 100)], "all", "slowdown")
    bf = _ratio(fcfs, (100, 100), "all", "slowdown")
    be = _ratio(easy, (100, 100), "all", "slowdown")
    if None in (f1, e1, bf, be):
        return Verdict("not tested", "")
    gap = f1 / e1 if e1 else float("inf")  # type: ignore[operator]
    numbers = (f"slowdown-all with one queue: FCFS {f1:,.1f}, EASY {e1:,.1f} (EASY {gap:,.1f}x "
               f"better; paper ~10x); one queue vs the best two-queue limits: FCFS {_x(bf)}, "
               f"EASY {_x(be)} (paper ~100x and ~10x)")  # fmt: skip
    easy_wins = gap >= 3
    fcfs_gains_more = bf > be and bf >= MATTERS  # type: ignore[operator]
    if easy_wins and fcfs_gains_more:
        return Verdict("holds", numbers)
    if easy_wins or fcfs_gains_more:
        return Verdict("partly", numbers)
    return Verdict("does not hold", numbers)


def rule_util_range(grid: Grid) -> Verdict:
    """Prime-time utilization is far more sensitive (15-80%) than non-prime (72-91%)."""
    prime = [
        v for s in grid.values() if (v := tables.pt_percent(s, "utilization-prime")) is not None
    ]
    non = [v for k, s in grid.items() if k != (100, 100)
           and (v := tables.pt_percent(s, "utilization-non")) is not None]  # fmt: skip
    if not prime or not non:
        return Verdict("not tested", "")
    numbers = (f"prime {_pct(min(prime))}..{_pct(max(prime))} (paper 15..80 %), non-prime "
               f"{_pct(min(non))}..{_pct(max(non))} (paper 72..91 %)")  # fmt: skip
    if max(prime) - min(prime) > max(non) - min(non):
        return Verdict("holds (prime is the sensitive one)", numbers)
    return Verdict("does not hold", numbers)


def rule_success(grid: Grid) -> Verdict:
    """Success in prime time: 30/30 far above the single queue (FCFS 80-90 vs 3, EASY 98 vs 69)."""
    a = tables.pt_percent(grid.get((30, 30)), "success-prime") if (30, 30) in grid else None
    b = tables.pt_percent(grid.get((100, 100)), "success-prime") if (100, 100) in grid else None
    best = max((v for s in grid.values() if (v := tables.pt_percent(s, "success-prime"))
                is not None), default=None)  # fmt: skip
    numbers = f"30-30 {_pct(a)}, 100-100 {_pct(b)}, best {_pct(best)}"
    if a is None or b is None:
        return Verdict("not tested (limits need 30 and 100)", numbers)
    return Verdict("holds" if a > b + 0.05 else "does not hold", numbers)


RULES: tuple[tuple[str, str, Callable[[Grid], Verdict]], ...] = (
    ("(1) prime service", "Best prime-time service (response time of small jobs) with a cutoff "
     "around 30% for either runtime or jobsize.", rule_prime),
    ("(2) non-prime service", "Best non-prime service (response time of large jobs) with both "
     "cutoffs at 40% or more.", rule_nonprime),
    ("(3) utilization and overflow", "Maximum utilization and minimum overflow with both cutoffs "
     "as large as possible.", rule_utilization),
    ("Prime Time Rule of Thumb", "Runtime 30% and jobsize 100% is the best compromise: better "
     "than one queue (100-100) for all jobs, near the best for small jobs.", rule_thumb),
    ("utilization ranges", "Prime-time utilization depends much more on the limits than "
     "non-prime utilization.", rule_util_range),
    ("success rate", "Two queues raise the prime-time success rate far above one queue's.",
     rule_success),
)  # fmt: skip


def _count(verdicts: Sequence[Verdict]) -> str:
    tested = [v for v in verdicts if not v.verdict.startswith("not tested")]
    held = sum(v.verdict.startswith("holds") for v in tested)
    part = sum(v.verdict.startswith("partly") for v in tested)
    if not tested:
        return "not tested"
    return f"holds in {held} of {len(tested)} sweeps, partly in {part}"


def rules_section(
    traces: Sequence[str], nodes: Mapping[str, Sequence[int]], disciplines: Sequence[str],
    gridmap: Mapping[tuple[str, int, str], Grid],
) -> list[str]:  # fmt: skip
    lines = [
        "## The paper's rules of thumb on these traces",
        "",
        "Checked on every sweep (trace x machine size x discipline) by the criteria given "
        f'under each rule; "near the best" means within {NEAR_BEST:g}x of the best value '
        f'of the sweep, "the limits matter" means one queue is at least {MATTERS:g}x worse '
        "than the best. Response times of large jobs include the drain after the last "
        "submission (see the context tables).",
        "",
    ]
    for title, claim, check in RULES:
        rows, verdicts = [], []
        for t in traces:
            for n in nodes[t]:
                for d in disciplines:
                    grid = gridmap.get((t, n, d))
                    if not grid:
                        continue
                    v = check(grid)
                    verdicts.append(v)
                    rows.append([t, str(n), discipline_title(d), v.verdict, v.numbers])
        lines += [f"### {title}: {_count(verdicts)}", "", claim, ""]
        lines += [markdown_table(["trace", "nodes", "discipline", "verdict", "numbers"],
                                        rows, left=5), ""]  # fmt: skip
    rows, verdicts = [], []
    for t in traces:
        for n in nodes[t]:
            v = rule_gap(gridmap.get((t, n, "fcfs")), gridmap.get((t, n, "easy")))
            verdicts.append(v)
            rows.append([t, str(n), v.verdict, v.numbers])
    lines += [
        f"### FCFS vs EASY: {_count(verdicts)}",
        "",
        "Without the two queues EASY's slowdown is about 10x better than FCFS's, and the two "
        "queues help FCFS (about 100x) more than EASY (about 10x). Criteria: EASY at least 3x "
        "better with one queue; one queue is worse than the best limits by more for FCFS than "
        f"for EASY, and by at least {MATTERS:g}x.",
        "",
        markdown_table(["trace", "nodes", "verdict", "numbers"], rows, left=4),
        "",
    ]
    return lines


# --------------------------------------------------------------------------- workload facts


def workload_facts(spec: TraceSpec, first: int | None, nodes: int) -> dict[str, Any]:
    """How the trace's requests sit against the calendar's windows (read once, no replay)."""
    from batchd.workload.loader import load_swf

    workload = load_swf(spec.path, nodes=nodes, first=first)
    jobs = workload.jobs
    gate = _gate({}, workload, nodes)
    slot = gate.calendar.prime_slot_seconds()
    weekday_non = 86400 - slot
    longest = gate.longest("nonprime", 0)
    demand = sum(j.width * j.estimate for j in jobs) or 1
    used = sum(j.width * min(j.runtime, j.estimate) for j in jobs) or 1

    def share(limit: float) -> tuple[float, float]:
        big = [j for j in jobs if j.estimate > limit]
        return (len(big) / max(1, len(jobs)),
                sum(j.width * min(j.runtime, j.estimate) for j in big) / used)  # fmt: skip

    span = max(j.submit for j in jobs) - min(j.submit for j in jobs) if jobs else 0
    weekend = longest / (7 * DAY)  # the share of the week the longest window takes
    weekend_only = share(weekday_non)[1] * used
    return {
        "jobs": len(jobs),
        "span_days": span / DAY,
        # node-time of requests longer than a weekday night over the weekend capacity
        "weekend_need": weekend_only / (nodes * max(1, span) * weekend) if weekend else None,
        "weekend_share": weekend,
        "slot": slot,
        "weekday_nonprime": weekday_non,
        "longest_nonprime": longest,
        "max_estimate": max((j.estimate for j in jobs), default=0),
        "over_30pct": share(0.3 * slot),
        "over_weekday": share(weekday_non),
        "over_longest": share(longest),
        "requested_node_seconds": demand,
        "timezone": spec.timezone or "UTC (the header names none)",
    }


# --------------------------------------------------------------------------- report


def _header(meta: Mapping[str, Any], opts: StudyOptions) -> list[str]:
    """Title and provenance: the command that made the replays, and who wrote the report."""
    made = meta.get("replayed_by") or meta
    lines = [
        "# Prime time vs non-prime time: the limits study",
        "",
        "After V. Lo and J. Mache, *Job Scheduling for Prime Time vs. Non-prime Time* "
        "(seed 001, sec. 4-5, Figs. 1-6, Table 3), replayed with batchd's `primetime` policy.",
        "",
        f"- Command: `{made['command']}`",
    ]
    if made["options"] != made["command"]:
        lines.append(f"- All options: `{made['options']}`")
    lines += [
        f"- Date: {made['date']}",
        f"- Machine: {made['cpus']} CPUs, Python {made['python']}, {made['platform']}, "
        f"batchd {made['batchd']}",
        f"- Runs: {meta['new'] + meta['reused']}; {made['new']} replayed in {made['workers']} "
        f"worker processes in {made['seconds']:.1f} s of wall time",
    ]
    if made is not meta:
        lines.append(
            f"- Report written again from {RESULTS_FILE} (no replays) by `{meta['command']}` "
            f"on {meta['date']}"
        )
    elif meta["reused"]:
        lines.append(f"- {meta['reused']} of the runs were reused from {RESULTS_FILE}")
    lines += [
        f"- Limits: {', '.join(f'{x}%' for x in opts.limits)} for both the runtime and the "
        f"jobsize limit; disciplines: {', '.join(discipline_title(d) for d in opts.disciplines)}; "
        f"jobs: {'all' if opts.first is None else f'the first {opts.first:,} lines'} of the trace",
        "",
    ]
    return lines


def _setup_section(
    opts: StudyOptions, facts: Mapping[str, Mapping[int, Mapping[str, Any]]]
) -> list[str]:
    any_facts = next((f for by_size in facts.values() for f in by_size.values()), None)
    slot = any_facts["slot"] if any_facts else 13 * 3600
    fit = (
        "**must_fit = true** (batchd's default): a large job starts only if its estimate ends "
        "before non-prime time does, so a large job overflows only if no non-prime window "
        "can hold it (longer than the weekend)"
        if opts.must_fit
        else "**must_fit = false** (the paper's setting): a large job may start at any moment "
        "of non-prime time and is killed when prime time begins"
    )
    return [
        "## Setup",
        "",
        "- Calendar: the NAS SP/2 slots of the paper (Table 1): weekdays prime 06:00-19:00 "
        f"({slot / 3600:g} h), weekday nights and weekends non-prime, no holidays; local time "
        "from the trace header (UnixStartTime, TimeZoneString).",
        "- Small jobs (the prime queue) are within both limits, or ask for at most 15 minutes, "
        "or for at most 3% of the nodes; they run at any time. Large jobs run in non-prime "
        "time only. A runtime limit of R% is R% of the weekday prime slot "
        f"({slot / 3600 / 10:g} h per 10%); 100% means no runtime limit, so 100-100 is one "
        "queue. A jobsize limit of J% is J% of the machine's nodes.",
        "- Column names like `30-100` are **runtime limit - jobsize limit**: `30-100` is a "
        "runtime limit of 30% with no jobsize limit. The paper's rule says \"fix one of them "
        'at around 30% and set the other at 100%"; `100-30` (jobsize 30%, no runtime limit) '
        "is the other reading and is shown as an extra column.",
        f"- Overflow: {fit}; overflow jobs are killed and not rerun (`overflow=kill`).",
        "- Estimates are the users' requested times from the trace (SWF field 9); jobs "
        "running past them are killed at the request, as batchd does by default. Classes and "
        "the must-fit rule use the request.",
        "- Response time, wait and slowdown (response / run time, plain as in the paper) are "
        "per class: prime = small jobs, non = large jobs, all = every job. Utilization is "
        "node-time used during prime hours, during non-prime hours and overall, from the "
        "first submission to the last end. Success-prime: share of the small jobs submitted "
        "in prime time that end before that prime slot does. Overflow: overflow jobs in % "
        "of all jobs.",
        "",
    ]


def _workload_section(
    spec: TraceSpec, by_size: Mapping[int, Mapping[str, Any]], sizes: Sequence[int],
    extra: Mapping[tuple[str, int, str], Mapping[LimitKey, Any]],
) -> list[str]:  # fmt: skip
    rows = []
    for n in sizes:
        found = next((e for (t, m, _), g in extra.items() if t == spec.name and m == n
                      for e in g.values() if e), None)  # fmt: skip
        load = found.get("load") if found else None
        rows.append([f"{n:,}", f"{by_size[n]['jobs']:,}", fmt_float(load),
                     fmt_float(by_size[n]["weekend_need"]),
                     _days(found.get("submit_span") if found else None)])  # fmt: skip
    facts = by_size[max(sizes)]
    j30, w30 = facts["over_30pct"]
    jw, ww = facts["over_weekday"]
    jl, wl = facts["over_longest"]
    return [
        f"### Workload: {spec.name} (`{spec.path}`)",
        "",
        f"{facts['jobs']:,} jobs at the largest size over {facts['span_days']:,.0f} days, time "
        f"zone {facts['timezone']}. Requests against the calendar (share of jobs / of the "
        "node-time they use):",
        "",
        f"- estimate above 30% of the prime slot ({_hours(0.3 * facts['slot'])}): "
        f"{_pct(j30)} of the jobs, {_pct(w30)} of the node-time;",
        f"- estimate above a weekday night ({_hours(facts['weekday_nonprime'])}), so such a "
        f"large job can only start on a weekend: {_pct(jw)} of the jobs, {_pct(ww)} of the "
        "node-time;",
        f"- estimate above the longest non-prime window ({_hours(facts['longest_nonprime'])}): "
        f"{_pct(jl)} of the jobs (the longest request is {_hours(facts['max_estimate'])}).",
        "",
        "Offered load, the paper's static demand: node-seconds of run time / (machine size x "
        "submission span). Weekend demand: the node-time of the jobs asking for more than a "
        "weekday night over the capacity of the weekend windows "
        f"({_pct(facts['weekend_share'])} of the week) in the same span; above 1, with "
        "must_fit, those jobs alone need more than every weekend, whatever the limits, as "
        "soon as the limits make them large:",
        "",
        markdown_table(["nodes", "jobs", "offered load", "weekend demand",
                               "submission span"], rows),
        "",
    ]  # fmt: skip


def _context_table(grid: Grid, extra: Mapping[LimitKey, Any], columns: Sequence[LimitKey]) -> str:
    def span_util(key: LimitKey, win: str) -> str:
        e = extra.get(key) or {}
        return _pct((e.get("utilization_submit_span") or {}).get(win))

    rows = [
        ["large jobs (% of jobs)", *(_pct(large_share(grid.get(c))) for c in columns)],
        ["overflow (% of large jobs)",
         *(_pct(tables.pt_block(grid.get(c)).get("overflow_rate")) for c in columns)],
        ["utilization-all, submission span", *(span_util(c, "all") for c in columns)],
        ["utilization-prime, submission span", *(span_util(c, "prime") for c in columns)],
        ["utilization-non, submission span", *(span_util(c, "nonprime") for c in columns)],
        ["jobs waiting at the last submission",
         *(fmt_int((extra.get(c) or {}).get("backlog_at_last_submit")) for c in columns)],
        ["drain after the last submission",
         *(_days((extra.get(c) or {}).get("drain")) for c in columns)],
        ["avg resptime-prime", *(_hours(tables.pt_value(grid.get(c), "prime", "art"))
                                 for c in columns)],
        ["avg resptime-non", *(_days(tables.pt_value(grid.get(c), "nonprime", "art"))
                               for c in columns)],
    ]  # fmt: skip
    return markdown_table(["context", *(tables.limit_label(c) for c in columns)], rows)


def _table3_section(
    trace: str, sizes: Sequence[int], disciplines: Sequence[str],
    gridmap: Mapping[tuple[str, int, str], Grid],
    extra: Mapping[tuple[str, int, str], Mapping[LimitKey, Any]],
) -> list[str]:  # fmt: skip
    columns = (*tables.TABLE3_COLUMNS, EXTRA_COLUMN)
    smallest = min(sizes)
    order = sorted(disciplines, key=lambda d: (d != "easy", d))
    lines = [
        f"### Table 3: {trace} at {smallest} nodes (the smallest size, the heaviest load)",
        "",
        "Ratios are the value divided by the best (smallest) value of the whole sweep for "
        "that discipline; percentages as they are. In brackets: the paper's Table 3 (EASY, "
        "NAS SP/2 at 80 nodes). `n/a`: no large jobs at that setting.",
        "",
    ]
    for d in order:
        grid = gridmap.get((trace, smallest, d), {})
        lines += [f"**{discipline_title(d)}**", "", tables.pt_table3(grid, columns), "",
                  "Context:", "", _context_table(grid, extra.get((trace, smallest, d), {}),
                                                 columns), ""]  # fmt: skip
    others = [n for n in sizes if n != smallest]
    if others:
        lines += [f"#### {trace}: Table 3 at the other sizes", ""]
        for n in others:
            for d in order:
                grid = gridmap.get((trace, n, d), {})
                lines += [f"**{discipline_title(d)}, {n} nodes**", "",
                          tables.pt_table3(grid, columns, paper=False), ""]  # fmt: skip
    return lines


def _grid_section(
    trace: str, n: int, disciplines: Sequence[str], gridmap: Mapping[tuple[str, int, str], Grid]
) -> list[str]:
    lines = [
        f"### {trace} at {n} nodes over all limits",
        "",
        "Rows: runtime limit, columns: jobsize limit. Exact values of every run are in "
        f"{RESULTS_FILE}.",
        "",
    ]
    for d in sorted(disciplines, key=lambda x: (x != "easy", x)):
        grid = gridmap.get((trace, n, d), {})
        title = discipline_title(d)
        lines += [
            f"{title}: average response time of small jobs (prime), hours",
            "",
            tables.pt_grid_table(metric_grid(grid, "prime", "art"), lambda v: f"{v / 3600:.2f}"),
            "",
            f"{title}: average response time of large jobs (non-prime), days",
            "",
            tables.pt_grid_table(metric_grid(grid, "nonprime", "art"), lambda v: f"{v / DAY:.1f}"),
            "",
            f"{title}: success-prime, %",
            "",
            tables.pt_grid_table({k: tables.pt_percent(s, "success-prime")
                                  for k, s in grid.items()}, lambda v: f"{100 * v:.0f}"),
            "",
        ]  # fmt: skip
    return lines


@dataclass(frozen=True)
class FigureOut:
    caption: str
    path: Path | None


def span_utilization(extra: Mapping[LimitKey, Any], window: str) -> dict[LimitKey, float | None]:
    """Utilization of a window over the submission span only, from the entries' extras."""
    return {k: (e or {}).get("utilization_submit_span", {}).get(window) for k, e in extra.items()}


def write_figures(
    out: Path, trace: str, sizes: Sequence[int], disciplines: Sequence[str],
    gridmap: Mapping[tuple[str, int, str], Grid],
    extra: Mapping[tuple[str, int, str], Mapping[LimitKey, Any]],
) -> list[FigureOut]:  # fmt: skip
    from batchd.report.plots import plot_limit_heatmaps, plot_limit_lines

    n = min(sizes)
    order = sorted(disciplines, key=lambda d: (d != "easy", d))

    def panels(cls: str, metric: str, ds: Sequence[str] = order) -> list[tuple[str, Any]]:
        return [(f"{discipline_title(d)}, {n} nodes", metric_grid(gridmap.get((trace, n, d), {}),
                                                                   cls, metric)) for d in ds]  # fmt: skip

    def span_panels(window: str) -> list[tuple[str, Any]]:
        return [(f"{discipline_title(d)}, {n} nodes",
                 span_utilization(extra.get((trace, n, d), {}), window)) for d in order]  # fmt: skip

    def name(stem: str) -> Path:
        return out / f"{trace}_{stem}.png"

    figs = [
        FigureOut(f"{trace}, Fig. 1: average response time of small jobs (prime queue) over "
                  "the runtime limit, one line per jobsize limit (log scale)",
                  plot_limit_lines(panels("prime", "art"), name("fig1_resptime_prime"),
                                   "average response time [s]", log=True)),
        FigureOut(f"{trace}, Fig. 2: average response time of large jobs (non-prime queue)",
                  plot_limit_lines(panels("nonprime", "art"), name("fig2_resptime_nonprime"),
                                   "average response time [s]", log=True)),
        FigureOut(f"{trace}, Fig. 3: utilization during prime hours (whole schedule, first "
                  "submission to last end)",
                  plot_limit_lines(panels("prime", "utilization"), name("fig3_util_prime"),
                                   "utilization [%]", percent=True)),
        FigureOut(f"{trace}, Fig. 4: utilization during non-prime hours (whole schedule)",
                  plot_limit_lines(panels("nonprime", "utilization"), name("fig4_util_nonprime"),
                                   "utilization [%]", percent=True)),
        FigureOut(f"{trace}, Fig. 3 over the submission span only (no drain): utilization "
                  "during prime hours",
                  plot_limit_lines(span_panels("prime"), name("fig3b_util_prime_submit_span"),
                                   "utilization [%]", percent=True)),
        FigureOut(f"{trace}, Fig. 4 over the submission span only (no drain): utilization "
                  "during non-prime hours",
                  plot_limit_lines(span_panels("nonprime"),
                                   name("fig4b_util_nonprime_submit_span"), "utilization [%]",
                                   percent=True)),
        FigureOut(f"{trace}, Figs. 5 and 6: average slowdown of all jobs, FCFS and EASY; the "
                  "star and the dashed line are one queue (100/100)",
                  plot_limit_lines(panels("all", "slowdown", sorted(order)),
                                   name("fig5_slowdown_all"), "average slowdown", log=True,
                                   mark_single=True)),
    ]  # fmt: skip
    if len(sizes) > 1:
        rows = []
        for m in sizes:
            cells = []
            for d in order:
                grid = gridmap.get((trace, m, d), {})
                cells += [
                    (f"{discipline_title(d)} small", metric_grid(grid, "prime", "art")),
                    (f"{discipline_title(d)} large", metric_grid(grid, "nonprime", "art")),
                ]
            rows.append((f"{m} nodes", cells))  # fmt: skip
        figs.append(FigureOut(
            f"{trace}: average response time [s] of small and large jobs at every machine size "
            "(x: runtime limit, y: jobsize limit, log colour scale)",
            plot_limit_heatmaps(rows, name("fig_overview_resptime"),
                                "average response time [s]")))  # fmt: skip
    return figs


def _figures_section(figures: Sequence[FigureOut]) -> list[str]:
    lines = ["### Figures", ""]
    for fig in figures:
        if fig.path is None:
            lines += [f"_{fig.caption}: not drawn (no data)._", ""]
        else:
            lines += [f"![{fig.caption}]({fig.path.name})", "", f"*{fig.caption}.*", ""]
    return lines


def _discussion_section(out: Path) -> list[str]:
    """OUT/discussion.md, written by a person from the numbers, kept across reruns."""
    path = out / DISCUSSION_FILE
    if not path.is_file():
        return [
            "## Discussion",
            "",
            f"_(Write {DISCUSSION_FILE} in the output directory and rerun with --report-only "
            "to put a discussion here.)_",
            "",
        ]
    text = path.read_text().strip()
    return [
        "## Discussion",
        "",
        f"_Written by hand from the numbers above ({DISCUSSION_FILE}, kept when the report is "
        "made again)._",
        "",
        text,
        "",
    ]


def _differences_section(opts: StudyOptions) -> list[str]:
    fit = (
        "- **must_fit.** Here a large job starts only if its estimate ends before non-prime "
        "time does. The paper's large jobs started at any time of non-prime time and were "
        "killed (or checkpointed) at its end, which is its overflow (10-18% for most limits). "
        "With must_fit the only overflow is a job that no non-prime window can hold, so the "
        "overflow rows are near zero and the price is paid as waiting instead: a large job "
        "waits for a window long enough for its request. Rerun with `--must-fit false` for "
        "the paper's behaviour."
        if opts.must_fit
        else "- **must_fit = false** as in the paper: large jobs start at any time of "
        "non-prime time and are killed when it ends (overflow)."
    )
    return [
        "## Differences from the paper's setup",
        "",
        "- **Workload.** No NAS SP/2 trace is public; these are other machines' logs, whose "
        "users were not working under prime-time limits. Their requests are up to 18 h or "
        "more, while the NAS non-prime queue allowed 10 h (Table 1), so many large jobs fit "
        "only in the weekend window and the non-prime queue can fall behind.",
        fit,
        "- **Overflow jobs.** Killed jobs are not rerun (`overflow=kill`); they count in the "
        "response times with their end at the kill.",
        "- **Estimates.** Classes and the fit rule use the users' requested times; the paper "
        "does not say whether it used requests or actual run times.",
        "- **Time.** The calendar is applied in the trace's own time zone from its header; "
        "no holidays.",
        "- **Measuring window.** Metrics cover the whole schedule, from the first submission to "
        "the last end, including the drain of a backlog after the last submission; the "
        "context tables give utilization over the submission span only, the backlog and the "
        "drain.",
        "- **Machine sizes.** The paper varied 80..160 nodes for a 144-node machine; here the "
        "sizes are those of `--nodes` for the trace's own machine.",
        "",
    ]


def _runtimes_section(results: Sequence[Entry], meta: Mapping[str, Any]) -> list[str]:
    busy: dict[tuple[str, int, str], list[float]] = {}
    for e in results:
        busy.setdefault((e["trace"], e["nodes"], e["discipline"]), []).append(
            float(e.get("seconds") or 0.0)
        )
    rows = [[t, f"{n:,}", discipline_title(d), str(len(s)), f"{sum(s):,.1f}",
             f"{statistics.mean(s):,.2f}", f"{max(s):,.2f}"]
            for (t, n, d), s in busy.items()]  # fmt: skip
    total = sum(sum(s) for s in busy.values())
    return [
        "## Run times",
        "",
        f"Wall seconds of the replays in their worker processes: {total:,.1f} s in all, "
        f"{meta['seconds']:,.1f} s of study wall time.",
        "",
        markdown_table(
            ["trace", "nodes", "discipline", "runs", "total [s]", "mean [s]", "max [s]"],
            rows,
            left=3,
        ),  # fmt: skip
        "",
    ]


def build_report(
    opts: StudyOptions,
    specs: Sequence[TraceSpec],
    nodes: Mapping[str, Sequence[int]],
    results: Sequence[Entry],
    meta: Mapping[str, Any],
    figures: Mapping[str, Sequence[FigureOut]],
    facts: Mapping[str, Mapping[int, Mapping[str, Any]]],
    failures: Sequence[tuple[Run, str]] = (),
) -> str:
    gridmap = grids(results)
    extra = extras(results)
    traces = [s.name for s in specs]
    lines = [*_header(meta, opts), *_setup_section(opts, facts)]
    for spec in specs:
        sizes = nodes[spec.name]
        lines += [f"## {spec.name}", ""]
        lines += _workload_section(spec, facts[spec.name], sizes, extra)
        lines += _table3_section(spec.name, sizes, opts.disciplines, gridmap, extra)
        lines += _figures_section(figures[spec.name])
        lines += _grid_section(spec.name, min(sizes), opts.disciplines, gridmap)
    lines += rules_section(traces, nodes, opts.disciplines, gridmap)
    lines += _discussion_section(opts.out)
    lines += _differences_section(opts)
    lines += _runtimes_section(results, meta)
    if failures:
        rows = [[r.trace, str(r.nodes), r.discipline, f"{r.runtime}-{r.jobsize}", msg]
                for r, msg in failures]  # fmt: skip
        lines += ["## Failed runs", "", markdown_table(
            ["trace", "nodes", "discipline", "limits", "error"], rows, left=5), ""]  # fmt: skip
    return "\n".join(lines)


def write_report(
    opts: StudyOptions,
    specs: Sequence[TraceSpec],
    nodes: Mapping[str, Sequence[int]],
    results: Sequence[Entry],
    meta: Mapping[str, Any],
    failures: Sequence[tuple[Run, str]] = (),
) -> tuple[Path, list[Path]]:
    """Draw the figures and write OUT/report.md; returns it and the PNGs written."""
    gridmap = grids(results)
    extra = extras(results)
    figures = {
        s.name: write_figures(opts.out, s.name, nodes[s.name], opts.disciplines, gridmap, extra)
        for s in specs
    }
    facts = {s.name: {n: workload_facts(s, opts.first, n) for n in nodes[s.name]} for s in specs}
    path = opts.out / REPORT_FILE
    path.write_text(build_report(opts, specs, nodes, results, meta, figures, facts, failures))
    written = [f.path for figs in figures.values() for f in figs if f.path is not None]
    return path, written


# --------------------------------------------------------------------------- command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``batchd report primetime``."""
    add = parser.add_argument
    add("--trace", action="append", required=True, metavar="T",
        help="SWF trace to replay (repeatable)")  # fmt: skip
    add("--nodes", default=None, metavar="N[,N...]",
        help="machine sizes, node counts or percentages of the trace's machine "
             "(e.g. 128,96,64 or 100%%,50%%; default: the header's size)")  # fmt: skip
    add("--limits", default=",".join(map(str, DEFAULT_LIMITS)), metavar="P[,P...]",
        help="prime-time limits in %% (10..100), used for both the runtime and the jobsize "
             "limit (default 10,20,...,100)")  # fmt: skip
    add("--disciplines", default=",".join(DEFAULT_DISCIPLINES), metavar="D[,D...]",
        help="short-term disciplines within each class (default fcfs,easy)")  # fmt: skip
    add("--first", type=positive_int, default=None, metavar="N",
        help="replay only the first N job lines of each trace (quick runs)")  # fmt: skip
    add("--must-fit", choices=("true", "false"), default="true",
        help="true (default): a large job starts only if its estimate ends before non-prime "
             "time; false: as in the paper, it starts any time and is killed at its end")  # fmt: skip
    add("--workers", type=positive_int, default=None, metavar="K",
        help="worker processes (default: the CPU count)")  # fmt: skip
    add("--out", default=DEFAULT_OUT, metavar="DIR",
        help=f"output directory (default {DEFAULT_OUT})")  # fmt: skip
    add("--report-only", action="store_true",
        help=f"replay nothing: write the report from OUT/{RESULTS_FILE}")  # fmt: skip
    parser.set_defaults(func=cmd_report_primetime)


def command_line(args: argparse.Namespace) -> str:
    """The command line of the parsed options, every option spelled out."""
    parts = ["batchd", "report", "primetime"]
    for trace in args.trace:
        parts += ["--trace", trace]
    if args.nodes is not None:
        parts += ["--nodes", args.nodes]
    parts += ["--limits", args.limits, "--disciplines", args.disciplines]
    if args.first is not None:
        parts += ["--first", str(args.first)]
    parts += ["--must-fit", args.must_fit]
    if args.workers is not None:
        parts += ["--workers", str(args.workers)]
    parts += ["--out", str(args.out)]
    if args.report_only:
        parts.append("--report-only")
    return shlex.join(parts)


def options_from_args(args: argparse.Namespace) -> StudyOptions:
    return StudyOptions(
        traces=list(args.trace),
        nodes=args.nodes,
        limits=parse_limits(args.limits),
        disciplines=parse_disciplines(args.disciplines),
        first=args.first,
        workers=args.workers,
        out=Path(args.out),
        report_only=args.report_only,
        must_fit=args.must_fit == "true",
        command=command_line(args),
    )


def cmd_report_primetime(args: argparse.Namespace) -> int:
    outcome = run_study(options_from_args(args))
    for run, message in outcome.failures:
        print(f"batchd: run failed: {run.label()}: {message}", file=sys.stderr)
    print(
        f"{outcome.report}: {len(outcome.results)} runs ({outcome.new} new, "
        f"{outcome.reused} reused, {len(outcome.failures)} failed), "
        f"{len(outcome.figures)} figures, {outcome.seconds:.1f} s"
    )
    return 1 if outcome.failures else 0
