"""Run what is not stored yet, in worker processes, and tell the terminal how it went."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from batchd.sweep.shard import Shard
from batchd_studies.framework import StudyError
from batchd_studies.framework.cli import Scope
from batchd_studies.framework.code import CODE_FIELD, code_digest
from batchd_studies.framework.pool import run_parallel
from batchd_studies.framework.results import Entry, ResultsFile, as_plain, run_key
from batchd_studies.framework.stored import StudyStore

EVERY_RUN = Scope()  # every run without a stored result, then every output


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
    """The entries of a study's runs, in the order of the runs, and how they came about.

    ``new``, ``reused`` (``collected`` of them from records in OUT/runs) and ``failures``
    count this invocation's runs: all of them, or a shard's share. ``missing``: runs of
    the whole study without a stored result at the end.
    """

    results: list[Entry]
    new: int
    reused: int
    failures: list[tuple[R, str]]
    workers: int
    collected: int = 0
    missing: int = 0
    total: int = 0
    shard: Shard | None = None
    folder: Path | None = None  # OUT/runs


def run_missing(
    runs: Sequence[R],
    work: Callable[[R], Entry],
    results: ResultsFile,
    *,
    scope: Scope = EVERY_RUN,
    workers: int | None = None,
    dask: str | None = None,
    desc: str,
) -> Runs[R]:
    """Replay every run (of ``scope.shard``'s share) without a stored result, storing each
    entry as it finishes with the digest of the code that replayed it (``code``);
    unsharded, combine what is stored into the results file.

    The results file's entries of other runs stay in it. ``scope.report_only`` and
    ``scope.collect``: replay nothing, and fail when a run has no stored result. ``work``
    is a module-level function (pickled). ``workers`` and ``dask`` choose the executor as
    ``--workers`` and ``--dask`` do.
    """
    store = StudyStore.beside(results)
    keys = [run_key(run.identity()) for run in runs]
    mine = [i for i in range(len(runs)) if scope.shard is None or scope.shard.owns(i)]
    combined, recorded = store.load(keys[i] for i in mine)
    todo = [runs[i] for i in mine if keys[i] not in combined and keys[i] not in recorded]
    if todo and not scope.replays:
        raise StudyError(missing_message(scope, store, todo, len(runs)))
    fresh: dict[str, Entry] = {}
    failures: list[tuple[R, str]] = []

    def on_done(run: R, entry: Entry | None, error: BaseException | None) -> None:
        if entry is None:
            failures.append((run, f"{type(error).__name__}: {error}"))
            return
        key = run_key(run.identity())
        fresh[key] = as_plain({**entry, CODE_FIELD: code_digest()})
        store.put(key, fresh[key])

    count = workers or os.cpu_count() or 1
    count = run_parallel(
        todo, work, count, on_done, desc=desc, label=lambda run: run.label(), dask=dask
    )
    added = {**recorded, **fresh}
    if scope.shard is None and added:
        store.combine(combined, added)
    found = {**combined, **added}
    done = found.keys() | (store.stored(keys) if scope.shard is not None else set())
    return Runs(
        results=[found[key] for key in keys if key in found],
        new=len(fresh),
        reused=len(mine) - len(todo),
        failures=failures,
        workers=count,
        collected=len(recorded),
        missing=sum(1 for key in keys if key not in done),
        total=len(runs),
        shard=scope.shard,
        folder=store.folder,
    )


def missing_message(scope: Scope, store: StudyStore, todo: Sequence[StudyRun], total: int) -> str:
    example = todo[0].label()
    if scope.collect:
        return (
            f"--collect: {len(todo)} of the {total} runs have no record in {store.folder} "
            f"nor an entry in {store.results.path} (e.g. {example}); run the shards that "
            "lack them (--shard I/N), then --collect again"
        )
    return (
        f"--report-only: {store.results.path} lacks {len(todo)} of the {total} runs "
        f"(e.g. {example}); run without --report-only"
    )


@dataclass
class StudyOutcome(Generic[R]):
    """A study's runs and what it wrote: ``report`` None for a shard, which writes nothing."""

    runs: Runs[R]
    seconds: float
    report: Path | None = None
    figures: list[Path] = field(default_factory=list)


def finish(outcome: StudyOutcome[R], describe: Callable[[R], str]) -> int:
    """Print failed runs (stderr) and the summary line; the exit code: 1 if a run failed."""
    runs = outcome.runs
    for run, message in runs.failures:
        print(f"batchd: run failed: {describe(run)}: {message}", file=sys.stderr)
    counts = f"({runs.new} new, {runs.reused} reused, {len(runs.failures)} failed)"
    if outcome.report is not None:
        print(
            f"{outcome.report}: {len(runs.results)} runs {counts}, "
            f"{len(outcome.figures)} figures, {outcome.seconds:.1f} s"
        )
    else:
        print(shard_line(runs, counts, outcome.seconds))
    return 1 if runs.failures else 0


def shard_line(runs: Runs[Any], counts: str, seconds: float) -> str:
    """What a shard did, and what to do next."""
    mine = runs.new + runs.reused + len(runs.failures)
    if runs.missing:
        after = (
            f"{runs.missing} of the {runs.total} runs have no stored result yet; when every "
            f"shard has finished, run the same command with --collect instead of "
            f"--shard {runs.shard}"
        )
    else:
        after = (
            f"every run has a stored result: run the same command with --collect instead of "
            f"--shard {runs.shard} to write the outputs"
        )
    return (
        f"{runs.folder}: shard {runs.shard}: {mine} of the {runs.total} runs {counts}, "
        f"{seconds:.1f} s; no outputs written: {after}"
    )


def conclude(study: Callable[[], StudyOutcome[R]], out: Path, describe: Callable[[R], str]) -> int:
    """Run ``study`` and print how it went (``finish``); the exit code. Stopped with
    Ctrl-C, it says where the finished runs are kept and returns 130."""
    try:
        outcome = study()
    except KeyboardInterrupt:
        print(
            f"batchd: study interrupted; the finished runs are stored in {out}/runs: run the same "
            "command again to resume",
            file=sys.stderr,
        )
        return 130
    return finish(outcome, describe)
