"""The grid study: job sets, a replay per (job set, grid, structure x scheduler), report."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from batchd_studies.framework.results import Entry, ResultsFile
from batchd_studies.framework.study import Report, Study
from batchd_studies.grid.jobsets import Config, JobSet, make_jobsets, read_config
from batchd_studies.grid.options import StudyOptions
from batchd_studies.grid.report import make_report
from batchd_studies.grid.runs import Run, order_entries, plan_runs, results_file, run_task
from batchd_studies.grid.variants import all_variants


class GridStudy(Study[StudyOptions, Run]):
    name = "grid"
    work = staticmethod(run_task)

    def check(self) -> None:
        self.configs: list[Config] = [read_config(c) for c in self.options.configs]

    def plan(self) -> list[Run]:
        opts = self.options
        self.sets: list[JobSet]
        self.sets, self.models = make_jobsets(
            opts.traces, self.configs, opts.out, jobs_per_node=opts.jobs_per_node, seed=opts.seed
        )
        variants = all_variants()
        self.variant_order = [v.key for v in variants]
        return plan_runs(self.sets, self.configs, variants, opts.seed)

    def results_file(self) -> ResultsFile:
        return results_file(self.options.out, self.variant_order)

    def order(self, entries: Iterable[Entry]) -> list[Entry]:
        return order_entries(entries, self.variant_order)

    def recorded_options(self) -> Mapping[str, Any]:
        return {"jobs_per_node": self.options.jobs_per_node, "seed": self.options.seed}

    def report(
        self, results: Sequence[Entry], meta: Mapping[str, Any], failures: Sequence[tuple[Run, str]]
    ) -> Report:
        out = self.options.out
        return make_report(out, self.configs, self.sets, self.models, results, meta, failures)
