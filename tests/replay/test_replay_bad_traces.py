"""Traces that once crashed, hung or filled memory: one line naming file and line, exit 2."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from batchd.cli import main

FIELDS = "1 0 -1 10 2 -1 -1 2 10 -1 1 1 -1 -1 -1 -1 -1 -1"


def replay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """Exit code and stderr of ``batchd replay ARGS``."""
    code = main(["replay", *args])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def test_an_overflowing_request_is_refused_before_the_scheduler(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.swf"
    path.write_text("; MaxNodes: 4\n" + FIELDS.replace(" 2 10 ", f" 2 {10**25} ") + "\n")
    code, err = replay(capsys, str(path), "--policy", "fcfs-cons")
    assert code == 2
    assert err == (
        f"batchd: error: {path}:2: field 9 (requested_time): {10**25} is out of bounds: "
        "a duration may be from -2,147,483,647 to 2,147,483,647\n"
    )


def test_a_header_size_beyond_a_machine_needs_nodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.swf"
    path.write_text(f"; MaxNodes: 2000000\n{FIELDS}\n")
    code, err = replay(capsys, str(path), "--policy", "fcfs")
    assert code == 2
    assert err == (
        f"batchd: error: {path}:1: header MaxNodes: '2000000' is more than a machine may "
        "have (1 to 1,000,000): give the size another way (--nodes N)\n"
    )
    assert replay(capsys, str(path), "--policy", "fcfs", "--nodes", "4")[0] == 0


def test_a_truncated_gzip_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.swf.gz"
    data = gzip.compress(("; MaxNodes: 4\n" + (FIELDS + "\n") * 50_000).encode())
    path.write_bytes(data[: len(data) // 2])
    code, err = replay(capsys, str(path), "--policy", "fcfs")
    assert code == 2
    assert err.startswith(f"batchd: error: {path}:")
    assert err.endswith(": the gzip data ends early (the file is cut short)\n")


@pytest.mark.parametrize("nodes", [[], ["--nodes", "4"]])
def test_a_directory_or_a_device(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], nodes: list[str]
) -> None:
    code, err = replay(capsys, str(tmp_path), "--policy", "fcfs", *nodes)
    assert code == 2
    assert err == (
        f"batchd: error: {tmp_path}: a directory, not a trace file: give a file (plain or gzip)\n"
    )
    code, err = replay(capsys, "/dev/zero", "--policy", "fcfs", *nodes)
    assert (code, err) == (
        2,
        "batchd: error: /dev/zero: a character device, not a trace file: "
        "give a file (plain or gzip)\n",
    )
