"""The prime-time study from options to report: traces, runs (new or reused), report."""

from __future__ import annotations

from batchd_studies.framework.meta import (
    elapsed,
    record_invocation,
    started,
    study_meta,
)
from batchd_studies.framework.runs import StudyOutcome, run_missing
from batchd_studies.framework.traces import check_unique, read_trace
from batchd_studies.primetime.options import StudyOptions, parse_nodes
from batchd_studies.primetime.report import write_report
from batchd_studies.primetime.runs import Run, plan_runs, results_file, run_task


def run_study(opts: StudyOptions) -> StudyOutcome[Run]:
    """Replay what OUT/results.json lacks, then write the report from every run of the study.

    OUT/study.json keeps who replayed last; a pass that replays nothing names that
    invocation in the report's header and itself as the one that wrote the report.
    """
    began = started()
    specs = [read_trace(t) for t in dict.fromkeys(opts.traces)]
    check_unique([s.name for s in specs], "traces")
    nodes = {s.name: parse_nodes(opts.nodes, s.machine) for s in specs}
    runs = plan_runs(
        specs, nodes, opts.disciplines, opts.limits, first=opts.first, must_fit=opts.must_fit
    )
    opts.out.mkdir(parents=True, exist_ok=True)
    done = run_missing(
        runs,
        run_task,
        results_file(opts.out),
        scope=opts.scope,
        workers=opts.workers,
        dask=opts.dask,
        desc="primetime study",
    )
    if opts.scope.shard is not None:
        return StudyOutcome(done, elapsed(began))
    meta = study_meta(opts.command, done)
    meta["seconds"] = elapsed(began)
    record_invocation(meta, opts.out, bool(done.new or done.collected))
    report, figures = write_report(opts, specs, nodes, done.results, meta, done.failures)
    return StudyOutcome(done, meta["seconds"], report, figures)
