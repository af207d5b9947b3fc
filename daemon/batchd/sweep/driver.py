"""A sweep from the experiment file to its outputs: plan, skip the stored, run, write.

Runs whose key has a record in OUT/runs are skipped; the others go to the executor,
and each record is stored as it arrives. With ``shard`` this invocation runs only
its share (run ``i`` belongs to shard ``i mod N``) and writes no outputs;
``collect`` runs nothing and writes the outputs from the records the shards left.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from batchd.sweep import SweepError
from batchd.sweep.executor import make_executor
from batchd.sweep.experiment import load_experiment
from batchd.sweep.files import FileRef
from batchd.sweep.output import (
    CSV_FILE,
    PARQUET_FILE,
    SUMMARY_FILE,
    require_parquet,
    summary_lines,
    write_csv,
    write_parquet,
    write_summary,
)
from batchd.sweep.plan import Run, plan_runs
from batchd.sweep.progress import Progress
from batchd.sweep.shard import Shard
from batchd.sweep.spec import ExecutorSpec
from batchd.sweep.store import Record, RunStore
from batchd.sweep.table import results_table
from batchd.sweep.work import run_one


@dataclass
class SweepOptions:
    experiment: Path
    out: Path
    executor: ExecutorSpec = field(default_factory=ExecutorSpec)
    shard: Shard | None = None
    collect: bool = False
    lines: bool = True  # plain progress lines when not on a terminal


@dataclass
class SweepOutcome:
    runs: int
    new: int
    reused: int
    failures: list[tuple[Run, str]]
    missing: int  # runs without a record at the end
    seconds: float
    outputs: list[Path]
    stale: int  # records in OUT/runs of no run of this sweep


def trace_refs(runs: list[Run]) -> list[FileRef]:
    refs = {r.trace_ref.sha256: r.trace_ref for r in runs if r.trace_ref is not None}
    return list(refs.values())


def run_sweep(opts: SweepOptions) -> SweepOutcome:
    began = time.perf_counter()
    table, base = load_experiment(opts.experiment)
    runs = plan_runs(table, base, str(opts.experiment))
    if opts.shard is None:
        require_parquet()
    try:
        opts.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SweepError(f"--out {opts.out}: cannot create it: {exc.strerror or exc}") from None
    store = RunStore(opts.out)
    keys = [run.key() for run in runs]
    stored = store.done(keys)
    mine = [r for r in runs if opts.shard is None or opts.shard.owns(r.index)]
    todo = [r for r in mine if keys[r.index] not in stored]
    if opts.collect and todo:
        raise SweepError(
            f"--collect: {len(todo)} of the {len(runs)} runs have no record in "
            f"{store.folder} (e.g. {todo[0].label()}); run the shards that lack them"
        )
    failures: list[tuple[Run, str]] = []
    progress = Progress(len(todo), "sweep", lines=opts.lines)

    def on_done(run: Run, record: Record | None, error: BaseException | None) -> None:
        if record is None:
            failures.append((run, f"{type(error).__name__}: {error}"))
        else:
            store.put(record)
        progress.step(run.label(), failed=record is None)

    try:
        make_executor(opts.executor).run(todo, run_one, on_done, files=trace_refs(todo))
    finally:
        progress.close()
    outputs: list[Path] = []
    done = store.done(keys)
    if opts.shard is None:
        outputs = write_outputs(opts, runs, [store.get(k) for k in keys if k in done], failures)
    return SweepOutcome(
        runs=len(mine),
        new=len(todo) - len(failures),
        reused=len(mine) - len(todo),
        failures=failures,
        missing=sum(1 for r in mine if keys[r.index] not in done),
        seconds=time.perf_counter() - began,
        outputs=outputs,
        stale=len(store.all_keys() - set(keys)),
    )


def write_outputs(
    opts: SweepOptions, runs: list[Run], records: list[Record], failures: list[tuple[Run, str]]
) -> list[Path]:
    """results.csv, results.parquet and summary.md of the finished runs, in declaration order."""
    table = results_table(records)
    csv_path, parquet_path, summary_path = (
        opts.out / CSV_FILE,
        opts.out / PARQUET_FILE,
        opts.out / SUMMARY_FILE,
    )
    write_csv(csv_path, table)
    write_parquet(parquet_path, table)
    from batchd import __version__

    facts = [
        f"Experiment: `{opts.experiment}`",
        f"Runs: {len(runs)}, with results: {len(records)}, without: {len(runs) - len(records)}",
        f"batchd {__version__}",
    ]
    failed = [f"{run.label()}: {message}" for run, message in failures]
    write_summary(summary_path, summary_lines(table, table.coordinates, facts, failed))
    return [csv_path, parquet_path, summary_path]
