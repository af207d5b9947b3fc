"""The Study base: the skeleton every study runs through (batchd_studies.framework.study)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from batchd.sweep.shard import Shard
from batchd_studies.framework import StudyError
from batchd_studies.framework.cli import Scope
from batchd_studies.framework.meta import META_FILE
from batchd_studies.framework.results import RESULTS_FILE, Entry, ResultsFile
from batchd_studies.framework.study import Report, Study, run_study, run_to_end


@dataclass(frozen=True)
class Square:
    n: int

    def identity(self) -> dict[str, Any]:
        return {"n": self.n}

    def label(self) -> str:
        return f"n={self.n}"


def square(run: Square) -> Entry:
    if run.n < 0:
        raise ValueError("negative")
    return {"n": run.n, "square": run.n * run.n}


@dataclass
class Options:
    out: Path
    numbers: list[int]
    workers: int | None = 1
    dask: str | None = None
    scope: Scope = field(default_factory=Scope)
    command: str = "batchd report squares"


class Squares(Study[Options, Square]):
    name = "squares"
    work = staticmethod(square)

    def __init__(self, options: Options) -> None:
        super().__init__(options)
        self.steps: list[str] = []
        self.written: tuple[list[Entry], dict[str, Any], list[tuple[Square, str]]] | None = None

    def check(self) -> None:
        self.steps.append(f"check (OUT made: {self.options.out.exists()})")
        if not self.options.numbers:
            raise StudyError("--numbers: none given")

    def plan(self) -> list[Square]:
        self.steps.append(f"plan (OUT made: {self.options.out.exists()})")
        return [Square(n) for n in self.options.numbers]

    def results_file(self) -> ResultsFile:
        return ResultsFile(self.options.out / RESULTS_FILE, lambda e: {"n": e["n"]})

    def order(self, entries: Iterable[Entry]) -> list[Entry]:
        return sorted(entries, key=lambda e: e["n"])

    def recorded_options(self) -> Mapping[str, Any]:
        return {"numbers": self.options.numbers}

    def report(
        self,
        results: Sequence[Entry],
        meta: Mapping[str, Any],
        failures: Sequence[tuple[Square, str]],
    ) -> Report:
        self.steps.append("report")
        self.written = (list(results), dict(meta), list(failures))
        figure = self.options.out / "fig.png"
        figure.write_bytes(b"")
        return Report(" ".join(str(e["square"]) for e in results) + "\n", [figure])


def test_a_study_runs_its_steps_in_order_and_writes_from_every_run(tmp_path: Path) -> None:
    study = Squares(Options(tmp_path / "out", [3, 1, 2]))
    outcome = run_study(study)
    assert study.steps == ["check (OUT made: False)", "plan (OUT made: True)", "report"]
    assert outcome.report == tmp_path / "out" / "report.md"
    assert outcome.report.read_text() == "1 4 9\n"  # in the study's order
    assert outcome.figures == [tmp_path / "out" / "fig.png"]
    assert study.written is not None
    results, meta, failures = study.written
    assert (meta["new"], meta["reused"], meta["numbers"], failures) == (3, 0, [3, 1, 2], [])
    assert list(meta)[-2:] == ["numbers", "seconds"]  # the study's options, then the wall time
    assert json.loads((tmp_path / "out" / META_FILE).read_text())["new"] == 3


def test_a_failed_check_makes_nothing(tmp_path: Path) -> None:
    with pytest.raises(StudyError, match="--numbers: none given"):
        run_study(Squares(Options(tmp_path / "out", [])))
    assert not (tmp_path / "out").exists()


def test_a_shard_replays_its_share_and_writes_nothing(tmp_path: Path) -> None:
    study = Squares(Options(tmp_path / "out", [1, 2, 3, 4], scope=Scope(shard=Shard(1, 2))))
    outcome = run_study(study)
    assert (outcome.report, study.written) == (None, None)
    assert (outcome.runs.new, outcome.runs.missing) == (2, 2)
    assert not (tmp_path / "out" / "report.md").exists()
    assert not (tmp_path / "out" / META_FILE).exists()


def test_a_pass_that_replays_nothing_names_the_one_that_did(tmp_path: Path) -> None:
    run_study(Squares(Options(tmp_path / "out", [1, 2], command="batchd report squares first")))
    again = Squares(Options(tmp_path / "out", [1, 2], scope=Scope(report_only=True)))
    run_study(again)
    assert again.written is not None
    meta = again.written[1]
    assert (meta["new"], meta["reused"]) == (0, 2)
    assert meta["replayed_by"]["options"] == "batchd report squares first"
    recorded = json.loads((tmp_path / "out" / META_FILE).read_text())
    assert recorded["options"] == "batchd report squares first"  # kept, not overwritten


def test_a_study_that_records_no_invocation_keeps_no_study_file(tmp_path: Path) -> None:
    class Unrecorded(Squares):
        records_invocation = False

    study = Unrecorded(Options(tmp_path / "out", [1]))
    run_study(study)
    assert study.written is not None and "replayed_by" not in study.written[1]
    assert not (tmp_path / "out" / META_FILE).exists()


def test_run_to_end_names_a_failed_run_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_to_end(Squares(Options(tmp_path / "out", [2, -1]))) == 1
    captured = capsys.readouterr()
    assert "batchd: run failed: n=-1: ValueError: negative" in captured.err
    assert "report.md: 1 runs (1 new, 0 reused, 1 failed), 1 figures" in captured.out
