"""Every numeric option of ``batchd`` is bounded: out of range is one line and exit code 2.

``--speed 1e300`` once ran the emulated clock past any date and saved it, so that no
later start could load the state; ``--start`` past the clock's range did the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from batchd.cli import main
from paths import ROOT

CONF = str(ROOT / "conf" / "hpcline96.toml")


@pytest.fixture(autouse=True)
def keep_logging(monkeypatch: pytest.MonkeyPatch) -> None:
    """``batchd serve`` run in this process must not point the logs at a captured stream."""
    monkeypatch.setattr("batchd.server.logs.setup_logging", lambda *args: None)


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line ``batchd ARGV`` fails with (exit code 2, nothing on stdout)."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert code == 2 and out == "", (argv, code, out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["serve", "--speed", "1e300"], "--speed: expected a number from 0.001 to 1,000,000"),
        (["serve", "--speed", "1000001"], "--speed: expected a number from 0.001 to 1,000,000"),
        (["serve", "--speed", "0"], "got '0'"),
        (["serve", "--speed", "1e-9"], "got '1e-9'"),
        (["serve", "--speed", "inf"], "got 'inf'"),
        (["serve", "--speed", "nan"], "got 'nan'"),
        (["serve", "--speed", "fast"], "got 'fast'"),
        (["serve", "--shrink", "1e300"], "--shrink: expected a number from 0.001 to 1,000"),
        (["serve", "--shrink", "0"], "--shrink"),
        (["serve", "--seed", "-1"], "--seed: expected an integer from 0 to 9,223,372,036,854"),
        (["serve", "--seed", str(2**64)], "--seed"),
        (["demo", "--speed", "1e300"], "--speed: expected a number from 0.001"),
        (["demo", "--jobs", "1000000000"], "--jobs: expected an integer from 1 to 1,000,000"),
        (["replay", "synthetic", "--nodes", "10000000"], "--nodes: expected an integer from 1"),
        (["replay", "synthetic", "--nodes", "0"], "--nodes"),
        (["replay", "synthetic", "--first", "1" + "0" * 30], "--first"),
        (["replay", "synthetic", "--shrink", "-2"], "--shrink"),
        (["replay", "synthetic", "--seed", "1e3"], "--seed: expected an integer"),
        (["analyze", "x.swf", "-o", "m.json", "--nodes", "2000000"], "--nodes"),
        (["generate", "m.json", "-o", "o.swf", "--count", "100000000"], "--count"),
        (["generate", "m.json", "-o", "o.swf", "--max-width", "0"], "--max-width"),
        (["generate", "m.json", "-o", "o.swf", "--shrink", "1e300"], "--shrink"),
        (["report", "dynp", "--trace", "t.swf", "--workers", "5000"], "--workers"),
        (["report", "dynp", "--trace", "t.swf", "--jobs", "100000000"], "--jobs"),
        (["report", "dynp", "--trace", "t.swf", "--shrink", "1.0,1e300"], "from 0.001 to 1000"),
        (["report", "dynp", "--trace", "t.swf", "--nodes-for", "CTC=9999999"], "1 to 1,000,000"),
        (["report", "dynp", "--trace", "t.swf", "--seed", "-5"], "--seed"),
    ],
)
def test_numeric_options_are_bounded(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = refused(argv, capsys)
    assert says in err, err


@pytest.mark.parametrize(
    "start",
    ["99999999999999", "-1", "9950-01-01T00:00+00:00", "250246627200"],
)
def test_start_is_bounded(start: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["serve", "--config", CONF, "--state", str(tmp_path / "s.db")]
    argv += ["--socket", str(tmp_path / "s.sock"), "--speed", "60", "--start", start]
    err = refused(argv, capsys)
    assert f"--start {start}: " in err and "is not a time the clock can run at" in err, err
    assert "years 1970 to 9899" in err
    assert not (tmp_path / "s.sock").exists()


def test_primetime_node_counts_are_bounded() -> None:
    from batchd_studies.framework import StudyError
    from batchd_studies.primetime.options import parse_nodes

    assert parse_nodes("1000000,96", 128) == [1_000_000, 96]
    with pytest.raises(StudyError, match="node counts up to 1,000,000"):
        parse_nodes("99999999", 128)


def test_the_largest_values_are_accepted() -> None:
    from batchd.cli import build_parser

    ns = build_parser().parse_args(["serve", "--speed", "1000000", "--seed", str(2**63 - 1)])
    assert (ns.speed, ns.seed) == (1_000_000.0, 2**63 - 1)
    ns = build_parser().parse_args(["serve", "--speed", "0.001", "--shrink", "1000"])
    assert (ns.speed, ns.shrink) == (0.001, 1000.0)


@pytest.mark.parametrize("command", ["analyze", "utility", "moldable"])
def test_a_directory_is_not_a_trace(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    message = refused([command, str(tmp_path), "-o", str(tmp_path / "out")], capsys)
    assert f"{tmp_path}: a directory, not a trace file" in message
    missing = refused([command, str(tmp_path / "none.swf"), "-o", str(tmp_path / "out")], capsys)
    assert "none.swf: no such trace file" in missing
