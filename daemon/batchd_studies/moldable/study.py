"""The moldable study from options to report: workloads, runs (new or reused), report."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from batchd_studies.framework import StudyError
from batchd_studies.framework.meta import (
    elapsed,
    record_invocation,
    started,
    study_meta,
)
from batchd_studies.framework.runs import StudyOutcome, run_missing
from batchd_studies.moldable.options import StudyOptions
from batchd_studies.moldable.plan import Run, Scheduler, plan_runs, schedulers
from batchd_studies.moldable.report import write_report
from batchd_studies.moldable.runs import order_entries, results_file, run_task
from batchd_studies.moldable.workloads import make_source, make_workloads


def size_note(trace: str, nodes: int | None) -> str | None:
    """What the trace's header says of the machine, when the study takes its size from it."""
    from batchd.workload.swf import read_header

    if nodes is not None:
        return None
    said = read_header(Path(trace)).value("MaxNodes")
    return f"The header says `MaxNodes: {said}`." if said else None


def check_schedulers(scheds: Sequence[Scheduler]) -> None:
    """Fail before anything runs when a scheduler's policy or parameters are unknown."""
    from batchd.replay import policy_error

    for sched in scheds:
        error = policy_error(sched.policy, dict(sched.params))
        if error is not None:
            raise StudyError(f"{sched.label}: {error}")


def run_study(opts: StudyOptions) -> StudyOutcome[Run]:
    """Make the workloads, replay what OUT/results.json lacks, write the report."""
    began = started()
    scheds = schedulers(opts.obfs, opts.efs, opts.others)
    check_schedulers(scheds)
    opts.out.mkdir(parents=True, exist_ok=True)
    source = make_source(opts.trace, opts.jobs, opts.nodes, opts.out)
    workloads, facts = make_workloads(source, opts.a, opts.loads, opts.seed, opts.out)
    runs = plan_runs(source.trace, opts.jobs, source.nodes, workloads, scheds)
    done = run_missing(
        runs,
        run_task,
        results_file(opts.out),
        scope=opts.scope,
        workers=opts.workers,
        dask=opts.dask,
        desc="moldable study",
    )
    if opts.scope.shard is not None:
        return StudyOutcome(done, elapsed(began))
    results = order_entries(done.results)
    meta = study_meta(opts.command, done)
    meta["seconds"] = elapsed(began)
    record_invocation(meta, opts.out, bool(done.new or done.collected))
    report, figures = write_report(
        opts, source, size_note(opts.trace, opts.nodes), facts, scheds, results, meta, done.failures
    )
    return StudyOutcome(done, meta["seconds"], report, figures)
