"""One ``Study`` base, and the skeleton every study runs through.

A study says what is its own: its inputs (``check``, ``plan``), its runs and how one is
replayed (``work``), its results file and order, the options its report records, and
its report (``report``: tables, figures, claims, text). ``run_study`` does the rest
the same way for every study: make OUT, run what is not stored yet (all of it, or a
shard's share), stop there for a shard, else record the invocation and write
OUT/report.md; ``run_to_end`` runs it from the command line and says how it went.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from batchd_studies.framework.cli import Scope
from batchd_studies.framework.meta import elapsed, record_invocation, started, study_meta
from batchd_studies.framework.results import Entry, ResultsFile
from batchd_studies.framework.runs import StudyOutcome, StudyRun, conclude, run_missing

REPORT_FILE = "report.md"


@dataclass(frozen=True)
class Report:
    """A study's report: its text (OUT/report.md) and the figures drawn for it."""

    text: str
    figures: list[Path]


class Invocation(Protocol):
    """What every study's options hold besides its own: where it writes, how it runs."""

    out: Path
    workers: int | None
    dask: str | None
    scope: Scope
    command: str  # every option spelled out


R = TypeVar("R", bound=StudyRun)
Opts = TypeVar("Opts", bound=Invocation)


class Study(ABC, Generic[Opts, R]):
    """A study of a seed paper, from its options to its report.

    ``name``: as ``batchd report NAME`` spells it. ``records_invocation``: keep in
    OUT/study.json who replayed last, so that a pass replaying nothing names that
    invocation in the report. ``work``: a module-level function that replays one
    run in a worker process and returns its results entry (set with
    ``staticmethod``, it is pickled by name).
    """

    name: ClassVar[str]
    records_invocation: ClassVar[bool] = True
    work: Callable[[R], Entry]

    def __init__(self, options: Opts) -> None:
        self.options = options

    def check(self) -> None:  # noqa: B027 - a study without checks has nothing to add
        """Read and check the inputs that can fail before OUT is made."""

    @abstractmethod
    def plan(self) -> Sequence[R]:
        """Every run of the study (OUT exists: input files may be made there); what the
        outputs need besides the results is kept on ``self``."""

    @abstractmethod
    def results_file(self) -> ResultsFile:
        """OUT/results.json of the study."""

    def order(self, entries: Iterable[Entry]) -> list[Entry]:
        """The results in the report's order (default: the runs' order)."""
        return list(entries)

    def recorded_options(self) -> Mapping[str, Any]:
        """The study's own options its report and OUT/study.json record."""
        return {}

    @abstractmethod
    def report(
        self,
        results: Sequence[Entry],
        meta: Mapping[str, Any],
        failures: Sequence[tuple[R, str]],
    ) -> Report:
        """The report of every run's entry (its figures drawn into OUT)."""

    def describe(self, run: R) -> str:
        """A failed run, as the terminal names it."""
        return run.label()


def run_study(study: Study[Any, R]) -> StudyOutcome[R]:
    """Run (or reuse) every run of ``study``, then write its report and figures.

    A shard (``scope.shard``) stops after its replays and writes nothing.
    """
    opts = study.options
    began = started()
    study.check()
    opts.out.mkdir(parents=True, exist_ok=True)
    done = run_missing(
        study.plan(),
        study.work,
        study.results_file(),
        scope=opts.scope,
        workers=opts.workers,
        dask=opts.dask,
        desc=f"{study.name} study",
    )
    if opts.scope.shard is not None:
        return StudyOutcome(done, elapsed(began))
    results = study.order(done.results)
    meta = study_meta(opts.command, done)
    meta.update(study.recorded_options())
    meta["seconds"] = elapsed(began)
    if study.records_invocation:
        record_invocation(meta, opts.out, bool(done.new or done.collected))
    report = study.report(results, meta, done.failures)
    path = opts.out / REPORT_FILE
    path.write_text(report.text)
    return StudyOutcome(done, meta["seconds"], path, report.figures)


def run_to_end(study: Study[Any, Any]) -> int:
    """``batchd report NAME``: run the study, print how it went; the exit code."""
    return conclude(lambda: run_study(study), study.options.out, study.describe)
