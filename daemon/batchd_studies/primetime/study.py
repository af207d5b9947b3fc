"""The prime-time study: traces, a replay per (trace, size, discipline, limits), report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from batchd_studies.framework.results import Entry, ResultsFile
from batchd_studies.framework.study import Report, Study
from batchd_studies.framework.traces import TraceFile, check_unique, read_trace
from batchd_studies.primetime.options import StudyOptions, parse_nodes
from batchd_studies.primetime.report import make_report
from batchd_studies.primetime.runs import Run, plan_runs, results_file, run_task


class PrimetimeStudy(Study[StudyOptions, Run]):
    name = "primetime"
    work = staticmethod(run_task)

    def check(self) -> None:
        opts = self.options
        self.specs: list[TraceFile] = [read_trace(t) for t in dict.fromkeys(opts.traces)]
        check_unique([s.name for s in self.specs], "traces")
        self.nodes = {s.name: parse_nodes(opts.nodes, s.machine) for s in self.specs}

    def plan(self) -> list[Run]:
        opts = self.options
        return plan_runs(
            self.specs,
            self.nodes,
            opts.disciplines,
            opts.limits,
            first=opts.first,
            must_fit=opts.must_fit,
        )

    def results_file(self) -> ResultsFile:
        return results_file(self.options.out)

    def report(
        self, results: Sequence[Entry], meta: Mapping[str, Any], failures: Sequence[tuple[Run, str]]
    ) -> Report:
        return make_report(self.options, self.specs, self.nodes, results, meta, failures)
