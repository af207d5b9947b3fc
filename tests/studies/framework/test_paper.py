"""The papers' numbers are data files shipped with the studies, read in one place each."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from batchd_studies.dynp.paper import SEED_CASES, SEED_RUNS
from batchd_studies.framework import StudyError
from batchd_studies.framework.paper import paper_data, section
from batchd_studies.primetime.paper import PAPER_TABLE3, TABLE3_COLUMNS
from batchd_studies.utility.paper import TABLE1, TABLE2


def test_the_studies_read_the_papers_numbers() -> None:
    assert SEED_RUNS["CTC_syn"]["artww"] == (25_980, 21_912)
    assert SEED_CASES["KTH_syn"][-1] == 18_840  # the printed total
    assert TABLE3_COLUMNS == ((30, 100), (80, 100), (100, 100))
    assert PAPER_TABLE3["avg resptime-prime"] == (1.73, 18.87, 23.91)
    assert TABLE1["ga"].aggregate == 1.35e9 and TABLE2["fcfs-cons"].wait[1] == 3621
    assert isinstance(TABLE1["ga"].makespan, float) and isinstance(TABLE1["ga"].bsld, int)


def test_the_case_rows_match_the_case_groups() -> None:
    from batchd_studies.dynp.tables import CASE_GROUPS

    for cases in SEED_CASES.values():
        assert len(cases) == len(CASE_GROUPS) + 1  # and the printed total


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "somestudy"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield folder
    sys.modules.pop("somestudy", None)


def test_a_broken_paper_file_is_an_error_naming_it(package: Path) -> None:
    (package / "paper.json").write_text('{"table": [1, 2,}')
    with pytest.raises(StudyError, match=r"somestudy/paper\.json: the paper's numbers cannot"):
        paper_data("somestudy")
    (package / "paper.json").write_text("[1, 2]")
    with pytest.raises(StudyError, match=r"somestudy/paper\.json: expected a JSON object"):
        paper_data("somestudy")


def test_a_missing_paper_file_or_key_is_named(package: Path) -> None:
    with pytest.raises(StudyError, match=r"somestudy/paper\.json"):
        paper_data("somestudy")
    (package / "paper.json").write_text('{"table": [1, 2]}')
    data = paper_data("somestudy")
    assert section(data, "table", "somestudy") == [1, 2]
    with pytest.raises(StudyError, match=r"somestudy/paper\.json: no 'cases'"):
        section(data, "cases", "somestudy")
