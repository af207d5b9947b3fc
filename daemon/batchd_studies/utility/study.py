"""The utility study: a slice of a trace, its augmentations, a replay per scenario, report."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from batchd_studies.framework.results import Entry, ResultsFile
from batchd_studies.framework.study import Report, Study
from batchd_studies.framework.traces import existing
from batchd_studies.utility.options import StudyOptions
from batchd_studies.utility.plan import Run, plan_runs, scenarios
from batchd_studies.utility.report import make_report
from batchd_studies.utility.runs import order_entries, results_file, run_task
from batchd_studies.utility.workloads import Slice, augment, machine_size, make_slice, queue_map


class UtilityStudy(Study[StudyOptions, Run]):
    name = "utility"
    work = staticmethod(run_task)

    def check(self) -> None:
        trace = existing(Path(self.options.trace))
        self.qmap = queue_map(trace, self.options.queue_map)
        machine_size(trace, self.options.nodes)

    def plan(self) -> list[Run]:
        opts = self.options
        self.piece: Slice = make_slice(opts.trace, opts.jobs, opts.nodes, opts.out)
        wanted = scenarios(
            opts.factors, opts.deadlines, opts.heavy, opts.value_orders, opts.deadline_froms
        )
        kinds = sorted({s.kind for s in wanted}, key=lambda k: (k[0], k[1], k[2] != "submit"))
        workloads, self.augmentations = augment(self.piece, opts.seeds, kinds, self.qmap)
        return plan_runs(
            self.piece.trace,
            opts.jobs,
            self.piece.nodes,
            wanted,
            workloads,
            opts.schedulers,
            opts.ga_seeds,
            generations=opts.generations,
            population=opts.population,
        )

    def results_file(self) -> ResultsFile:
        return results_file(self.options.out)

    def order(self, entries: Iterable[Entry]) -> list[Entry]:
        return order_entries(entries)

    def report(
        self, results: Sequence[Entry], meta: Mapping[str, Any], failures: Sequence[tuple[Run, str]]
    ) -> Report:
        opts = self.options
        return make_report(opts, self.piece, self.augmentations, results, meta, failures)
