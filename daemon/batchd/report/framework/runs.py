"""Run what the results file lacks, in worker processes, and tell the terminal how it went."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from batchd.report.framework import StudyError
from batchd.report.framework.pool import run_parallel
from batchd.report.framework.results import Entry, ResultsFile, run_key


class StudyRun(Protocol):
    """One replay of a study (a frozen dataclass, pickled to a worker process)."""

    def identity(self) -> Mapping[str, Any]:
        """Everything that determines the result, as the results entry records it."""
        ...

    def label(self) -> str:
        """A few words for the progress bar and messages."""
        ...


R = TypeVar("R", bound=StudyRun)


@dataclass
class Runs(Generic[R]):
    """The entries of a study's runs, in the order of the runs, and how they came about."""

    results: list[Entry]
    new: int
    reused: int
    failures: list[tuple[R, str]]
    workers: int


def run_missing(
    runs: Sequence[R],
    work: Callable[[R], Entry],
    results: ResultsFile,
    *,
    reuse: bool,
    report_only: bool = False,
    workers: int | None = None,
    dask: str | None = None,
    desc: str,
) -> Runs[R]:
    """Replay every run whose key is not in the results file, saving each entry at once.

    ``reuse``: take matching entries from the file (other entries stay in it);
    without it the file starts empty. ``report_only``: replay nothing, and fail
    when the file lacks a run. ``work`` is a module-level function (pickled).
    ``workers`` and ``dask`` choose the executor as ``--workers`` and ``--dask`` do.
    """
    reuse = reuse or report_only
    cache = results.load() if reuse else {}
    keys = [run_key(run.identity()) for run in runs]
    todo = [run for run, key in zip(runs, keys, strict=True) if key not in cache]
    if report_only and todo:
        raise StudyError(
            f"--report-only: {results.path} lacks {len(todo)} of the {len(runs)} runs "
            f"(e.g. {todo[0].label()}); run without --report-only"
        )
    if not reuse:
        results.save([])
    failures: list[tuple[R, str]] = []

    def on_done(run: R, entry: Entry | None, error: BaseException | None) -> None:
        if entry is None:
            failures.append((run, f"{type(error).__name__}: {error}"))
            return
        cache[run_key(run.identity())] = entry
        results.save(cache.values())

    count = workers or os.cpu_count() or 1
    count = run_parallel(
        todo, work, count, on_done, desc=desc, label=lambda run: run.label(), dask=dask
    )
    done = [cache[key] for key in keys if key in cache]
    return Runs(done, len(todo) - len(failures), len(runs) - len(todo), failures, count)


@dataclass
class StudyOutcome(Generic[R]):
    report: Path
    results: list[Entry]
    new: int
    reused: int
    failures: list[tuple[R, str]]
    seconds: float
    figures: list[Path]


def finish(outcome: StudyOutcome[R], describe: Callable[[R], str]) -> int:
    """Print failed runs (stderr) and the summary line; the exit code: 1 if a run failed."""
    for run, message in outcome.failures:
        print(f"batchd: run failed: {describe(run)}: {message}", file=sys.stderr)
    print(
        f"{outcome.report}: {len(outcome.results)} runs ({outcome.new} new, "
        f"{outcome.reused} reused, {len(outcome.failures)} failed), "
        f"{len(outcome.figures)} figures, {outcome.seconds:.1f} s"
    )
    return 1 if outcome.failures else 0
