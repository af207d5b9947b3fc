"""The dynP study from options to report: job sets, runs (new or reused), report."""

from __future__ import annotations

from batchd_studies.dynp.configs import check_policies, config_set
from batchd_studies.dynp.jobsets import prepare_traces
from batchd_studies.dynp.options import StudyOptions
from batchd_studies.dynp.report import write_report
from batchd_studies.dynp.runs import Task, order_entries, plan_tasks, results_file, run_task
from batchd_studies.framework.meta import elapsed, started, study_meta
from batchd_studies.framework.runs import StudyOutcome, run_missing


def run_study(opts: StudyOptions) -> StudyOutcome[Task]:
    """Generate the job sets, run (or reuse) every replay, write results.json and report.md.

    A shard (``opts.scope.shard``) stops after its replays and writes neither.
    """
    began = started()
    configs = config_set(opts.configs)
    check_policies(configs)
    opts.out.mkdir(parents=True, exist_ok=True)
    specs = prepare_traces(
        opts.traces, opts.out, jobs=opts.jobs, seed=opts.seed, nodes_for=opts.nodes_for
    )
    tasks = plan_tasks(specs, opts.shrinks, configs, perfect_estimates=opts.perfect_estimates)
    names = [s.name for s in specs]
    config_names = [c.name for c in configs]
    runs = run_missing(
        tasks,
        run_task,
        results_file(opts.out, names, config_names),
        scope=opts.scope,
        workers=opts.workers,
        dask=opts.dask,
        desc="dynp study",
    )
    if opts.scope.shard is not None:
        return StudyOutcome(runs, elapsed(began))
    results = order_entries(runs.results, names, config_names)
    meta = study_meta(opts.command, runs)
    meta.update(
        jobs=opts.jobs,
        seed=opts.seed,
        perfect_estimates=opts.perfect_estimates,
        configs=opts.configs,
        seconds=elapsed(began),
    )
    report, figures = write_report(opts.out, specs, results, meta, runs.failures)
    return StudyOutcome(runs, meta["seconds"], report, figures)
