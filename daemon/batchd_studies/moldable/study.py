"""The moldable study: workloads made moldable, a replay per (workload, scheduler), report."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from batchd_studies.framework import StudyError
from batchd_studies.framework.results import Entry, ResultsFile
from batchd_studies.framework.study import Report, Study
from batchd_studies.moldable.options import StudyOptions
from batchd_studies.moldable.plan import Run, Scheduler, plan_runs, schedulers
from batchd_studies.moldable.report import make_report
from batchd_studies.moldable.runs import order_entries, results_file, run_task
from batchd_studies.moldable.workloads import Source, make_source, make_workloads


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


class MoldableStudy(Study[StudyOptions, Run]):
    name = "moldable"
    work = staticmethod(run_task)

    def check(self) -> None:
        opts = self.options
        self.scheds: list[Scheduler] = schedulers(opts.obfs, opts.efs, opts.others)
        check_schedulers(self.scheds)

    def plan(self) -> list[Run]:
        opts = self.options
        self.source: Source = make_source(opts.trace, opts.jobs, opts.nodes, opts.out)
        workloads, self.facts = make_workloads(self.source, opts.a, opts.loads, opts.seed, opts.out)
        return plan_runs(self.source.trace, opts.jobs, self.source.nodes, workloads, self.scheds)

    def results_file(self) -> ResultsFile:
        return results_file(self.options.out)

    def order(self, entries: Iterable[Entry]) -> list[Entry]:
        return order_entries(entries)

    def report(
        self, results: Sequence[Entry], meta: Mapping[str, Any], failures: Sequence[tuple[Run, str]]
    ) -> Report:
        opts = self.options
        note = size_note(opts.trace, opts.nodes)
        return make_report(
            opts, self.source, note, self.facts, self.scheds, results, meta, failures
        )
