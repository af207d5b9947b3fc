"""``batchd report`` loads the studies by name; without them it says so and exits 2."""

from __future__ import annotations

import sys

import pytest

from batchd.cli import build_parser, main


def test_report_lists_the_studies() -> None:
    parser = build_parser("report")
    args = parser.parse_args(["report", "grid", "--trace", "CTC=t.swf", "--config", "g.toml"])
    assert args.report == "grid"


def test_report_without_the_studies_package_names_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in [m for m in sys.modules if m.startswith("batchd_studies")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "batchd_studies", None)  # an import of it fails
    assert main(["report", "dynp", "--trace", "t.swf"]) == 2
    err = capsys.readouterr().err
    assert "batchd: error: report: the studies package batchd_studies is not installed" in err


def test_an_import_error_inside_the_studies_is_not_hidden(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in [m for m in sys.modules if m.startswith("batchd_studies")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "batchd_studies.dynp.options", None)
    with pytest.raises(ModuleNotFoundError, match="batchd_studies.dynp.options"):
        build_parser("report")
