"""The utility study from options to report: workloads, runs (new or reused), report."""

from __future__ import annotations

from pathlib import Path

from batchd_studies.framework.meta import (
    elapsed,
    record_invocation,
    started,
    study_meta,
)
from batchd_studies.framework.runs import StudyOutcome, run_missing
from batchd_studies.framework.traces import existing
from batchd_studies.utility.options import StudyOptions
from batchd_studies.utility.plan import Run, plan_runs, scenarios
from batchd_studies.utility.report import write_report
from batchd_studies.utility.runs import order_entries, results_file, run_task
from batchd_studies.utility.workloads import augment, make_slice, queue_map


def run_study(opts: StudyOptions) -> StudyOutcome[Run]:
    """Slice and augment the trace, replay what OUT/results.json lacks, write the report.

    OUT/study.json keeps who replayed last; a pass that replays nothing names that
    invocation in the report's header and itself as the one that wrote the report.
    """
    began = started()
    qmap = queue_map(existing(Path(opts.trace)), opts.queue_map)  # before OUT is made
    piece = make_slice(opts.trace, opts.jobs, opts.nodes, opts.out)
    wanted = scenarios(opts.factors, opts.deadlines, opts.heavy, opts.value_orders)
    kinds = sorted({(s.deadline, s.values) for s in wanted})
    workloads, augmentations = augment(piece, opts.seeds, kinds, qmap)
    runs = plan_runs(
        piece.trace,
        opts.jobs,
        piece.nodes,
        wanted,
        workloads,
        opts.schedulers,
        opts.ga_seeds,
        generations=opts.generations,
        population=opts.population,
    )
    done = run_missing(
        runs,
        run_task,
        results_file(opts.out),
        scope=opts.scope,
        workers=opts.workers,
        dask=opts.dask,
        desc="utility study",
    )
    if opts.scope.shard is not None:
        return StudyOutcome(done, elapsed(began))
    results = order_entries(done.results)
    meta = study_meta(opts.command, done)
    meta["seconds"] = elapsed(began)
    record_invocation(meta, opts.out, bool(done.new or done.collected))
    report, figures = write_report(opts, piece, augmentations, results, meta, done.failures)
    return StudyOutcome(done, meta["seconds"], report, figures)
