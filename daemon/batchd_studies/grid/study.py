"""The grid study from options to report: job sets, runs (new or reused), report."""

from __future__ import annotations

from batchd_studies.framework.meta import (
    elapsed,
    record_invocation,
    started,
    study_meta,
)
from batchd_studies.framework.runs import StudyOutcome, run_missing
from batchd_studies.grid.jobsets import make_jobsets, read_config
from batchd_studies.grid.options import StudyOptions
from batchd_studies.grid.report import write_report
from batchd_studies.grid.runs import Run, order_entries, plan_runs, results_file, run_task
from batchd_studies.grid.variants import all_variants


def run_study(opts: StudyOptions) -> StudyOutcome[Run]:
    """Draw the job sets, run (or reuse) every replay, write results.json and report.md.

    OUT/study.json keeps who replayed last; a pass that replays nothing names that
    invocation in the report's header and itself as the one that wrote the report.
    """
    began = started()
    configs = [read_config(c) for c in opts.configs]
    opts.out.mkdir(parents=True, exist_ok=True)
    sets, models = make_jobsets(
        opts.traces, configs, opts.out, jobs_per_node=opts.jobs_per_node, seed=opts.seed
    )
    variants = all_variants()
    order = [v.key for v in variants]
    runs = plan_runs(sets, configs, variants, opts.seed)
    done = run_missing(
        runs,
        run_task,
        results_file(opts.out, order),
        scope=opts.scope,
        workers=opts.workers,
        dask=opts.dask,
        desc="grid study",
    )
    if opts.scope.shard is not None:
        return StudyOutcome(done, elapsed(began))
    results = order_entries(done.results, order)
    meta = study_meta(opts.command, done)
    meta.update(jobs_per_node=opts.jobs_per_node, seed=opts.seed, seconds=elapsed(began))
    record_invocation(meta, opts.out, bool(done.new or done.collected))
    report, figures = write_report(opts.out, configs, sets, models, results, meta, done.failures)
    return StudyOutcome(done, meta["seconds"], report, figures)
