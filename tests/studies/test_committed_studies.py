"""The committed studies come out again from their results.json, byte for byte, no replays.

Each study is copied to a temporary tree laid out like the repository (the
commands name ``../shared/traces`` and ``docs/...``) and its report is written
again with ``--report-only``.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

import batchd_studies.framework.meta
import batchd_studies.framework.study
from batchd.cli import main
from paths import ROOT, TRACES

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

pytestmark = pytest.mark.skipif(not TRACES.is_dir(), reason="needs the shared traces")


def copy_study(tmp_path: Path, folder: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``docs/<folder>`` without its report and figures, in a tree like the repository's."""
    work = tmp_path / "repo"
    (tmp_path / "shared").symlink_to(TRACES.parent)
    source = ROOT / "docs" / folder
    target = work / "docs" / folder
    target.mkdir(parents=True)
    for name in ("results.json", "study.json", "discussion.md"):
        if (source / name).is_file():
            shutil.copy(source / name, target / name)
    monkeypatch.chdir(work)
    return target


def as_invoked(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> int:
    """Run ``batchd`` as from a shell, so the report names the exact command line."""
    monkeypatch.setattr(sys, "argv", ["batchd", *argv])
    return main(argv)


def test_primetime_kth_report_is_byte_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = copy_study(tmp_path, "primetime-study/kth", monkeypatch)
    committed = (ROOT / "docs" / "primetime-study" / "kth" / "report.md").read_text()
    # The date and wall time of the pass that wrote the committed report.
    monkeypatch.setattr(batchd_studies.framework.meta, "now", lambda: "2026-11-21 13:06:01 UTC")
    monkeypatch.setattr(batchd_studies.framework.study, "elapsed", lambda since: 0.0)
    argv = [
        "report",
        "primetime",
        "--trace",
        "../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz",
        "--nodes",
        "100",
        "--out",
        "docs/primetime-study/kth",
        "--report-only",
    ]
    assert as_invoked(monkeypatch, argv) == 0
    assert "200 runs (0 new, 200 reused, 0 failed), 7 figures" in capsys.readouterr().out
    assert (out / "report.md").read_text() == committed
    figures = sorted(p.name for p in out.glob("*.png"))
    assert figures == sorted(p.name for p in (ROOT / "docs/primetime-study/kth").glob("*.png"))
    for name in figures:
        assert (out / name).read_bytes().startswith(PNG_MAGIC)


def test_dynp_report_is_identical_but_for_the_invocation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """dynP's header describes the pass that wrote the report: here a --report-only one."""
    out = copy_study(tmp_path, "dynp-study", monkeypatch)
    committed = (ROOT / "docs" / "dynp-study" / "report.md").read_text().splitlines()
    traces = ("KTH-SP2-1996-2.1", "CTC-SP2-1996-3.1", "SDSC-SP2-1998-4.2")
    argv = ["report", "dynp"]
    for trace in traces:
        argv += ["--trace", f"synthetic-from:../shared/traces/{trace}-cln.swf.gz"]
    argv += [
        "--shrink",
        "1.0,0.95,0.9,0.85,0.8,0.75,0.7,0.65,0.6",
        "--jobs",
        "10000",
        "--seed",
        "1",
        "--workers",
        "2",
        "--out",
        "docs/dynp-study",
        "--configs",
        "as-queued",
        "--report-only",
    ]
    assert as_invoked(monkeypatch, argv) == 0
    assert "486 runs (0 new, 486 reused, 0 failed), 6 figures" in capsys.readouterr().out
    report = (out / "report.md").read_text().splitlines()
    assert len(report) == len(committed)
    differ = [new for new, old in zip(report, committed, strict=True) if new != old]
    invocation = ("- Command:", "- All options:", "- Date:", "- Machine:", "- Runs: 486 (0 run")
    assert [line for line in differ if not line.startswith(invocation)] == [
        next(line for line in report if line.startswith("Wall seconds of each replay"))
    ]
    assert differ[0].endswith("--out docs/dynp-study --configs as-queued --report-only`")
    assert "## Discussion" in report and report[-1].endswith("does not define its own.")
    for name in (
        "fig2_artww_quality",
        "fig3_sldww60_quality",
        "fig4_artww",
        "fig5_sldww60",
        "fig8_utilization",
        "fig_candidates_artww",
    ):
        assert (out / f"{name}.png").read_bytes().startswith(PNG_MAGIC)


def test_grid_report_is_byte_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The grid study's tables, claims and figures come again from its results.json, and
    its command, run again, replays none of its runs."""
    out = copy_study(tmp_path, "grid-study", monkeypatch)
    (out.parent.parent / "conf").symlink_to(ROOT / "conf")
    committed = (ROOT / "docs" / "grid-study" / "report.md").read_text()
    written = next(line for line in committed.splitlines() if line.startswith("- Report written"))
    monkeypatch.setattr(batchd_studies.framework.meta, "now", lambda: written.rsplit(" on ", 1)[1])
    argv = ["report", "grid"]
    argv += ["--trace", "CTC-prob=../shared/traces/CTC-SP2-1996-3.1-cln.swf.gz"]
    argv += ["--trace", "Par-prob=../shared/traces/SDSC-Par-1996-3.1-cln.swf.gz"]
    argv += ["--jobs-per-node", "8", "--seed", "1", "--workers", "2"]
    argv += ["--out", "docs/grid-study"]
    # The committed command itself replays nothing and leaves results.json as it is.
    results = (out / "results.json").read_bytes()
    assert main(argv) == 0
    assert "672 runs (0 new, 672 reused, 0 failed), 4 figures" in capsys.readouterr().out
    assert (out / "results.json").read_bytes() == results and not (out / "runs").exists()
    argv.append("--report-only")
    assert main(argv) == 0
    assert "672 runs (0 new, 672 reused, 0 failed), 4 figures" in capsys.readouterr().out
    assert (out / "report.md").read_text() == committed
    for name in ("fig_art.png", "fig_makespan.png", "fig_utilization.png", "fig_overhead.png"):
        assert (out / name).read_bytes() == (ROOT / "docs" / "grid-study" / name).read_bytes()


def test_utility_report_is_byte_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The utility study's tables, claims and figures come again from its results.json.

    The workloads are cut and augmented again (not kept in git): the same bytes, so the
    same run keys.
    """
    out = copy_study(tmp_path, "utility-study", monkeypatch)
    committed = (ROOT / "docs" / "utility-study" / "report.md").read_text()
    written = next(line for line in committed.splitlines() if line.startswith("- Report written"))
    monkeypatch.setattr(batchd_studies.framework.meta, "now", lambda: written.rsplit(" on ", 1)[1])
    argv = ["report", "utility", "--trace", "../shared/traces/SDSC-BLUE-2000-4.2-cln.swf.gz"]
    argv += ["--out", "docs/utility-study", "--report-only"]
    assert as_invoked(monkeypatch, argv) == 0
    runs = len(json.loads((out / "results.json").read_text()))
    assert f"{runs} runs (0 new, {runs} reused, 0 failed), 6 figures" in capsys.readouterr().out
    assert (out / "report.md").read_text() == committed
    for png in sorted((ROOT / "docs" / "utility-study").glob("*.png")):
        assert (out / png.name).read_bytes() == png.read_bytes()
