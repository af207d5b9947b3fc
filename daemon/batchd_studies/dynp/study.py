"""The dynP study: job sets, a replay per (job set, shrink factor, configuration), report."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from batchd_studies.dynp.configs import Config, check_policies, config_set
from batchd_studies.dynp.jobsets import TraceSpec, prepare_traces
from batchd_studies.dynp.options import StudyOptions
from batchd_studies.dynp.report import make_report
from batchd_studies.dynp.runs import Task, order_entries, plan_tasks, results_file, run_task
from batchd_studies.framework.results import Entry, ResultsFile
from batchd_studies.framework.study import Report, Study


class DynpStudy(Study[StudyOptions, Task]):
    name = "dynp"
    records_invocation = False  # its header describes the pass that wrote the report
    work = staticmethod(run_task)

    def check(self) -> None:
        self.configs: list[Config] = list(config_set(self.options.configs))
        check_policies(self.configs)

    def plan(self) -> list[Task]:
        opts = self.options
        self.specs: list[TraceSpec] = prepare_traces(
            opts.traces, opts.out, jobs=opts.jobs, seed=opts.seed, nodes_for=opts.nodes_for
        )
        return plan_tasks(
            self.specs, opts.shrinks, self.configs, perfect_estimates=opts.perfect_estimates
        )

    def _names(self) -> tuple[list[str], list[str]]:
        return [s.name for s in self.specs], [c.name for c in self.configs]

    def results_file(self) -> ResultsFile:
        return results_file(self.options.out, *self._names())

    def order(self, entries: Iterable[Entry]) -> list[Entry]:
        return order_entries(entries, *self._names())

    def recorded_options(self) -> Mapping[str, Any]:
        opts = self.options
        return {
            "jobs": opts.jobs,
            "seed": opts.seed,
            "perfect_estimates": opts.perfect_estimates,
            "configs": opts.configs,
        }

    def report(
        self,
        results: Sequence[Entry],
        meta: Mapping[str, Any],
        failures: Sequence[tuple[Task, str]],
    ) -> Report:
        return make_report(self.options.out, self.specs, results, meta, failures)

    def describe(self, run: Task) -> str:
        return f"{run.trace} shrink {run.shrink:.2f} {run.config.name}"
