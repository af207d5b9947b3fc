"""A range of a trace's jobs by number (batchd.workload.job_range)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from batchd.workload.job_range import parse_job_range, slice_jobs
from batchd.workload.loader import load_swf
from batchd.workload.swf import SWFError

TRACE = """\
; Version: 2.2
; MaxProcs: 8
;
 1 0 5 10 2 -1 -1 2 20 -1 1 1 -1 -1 3 -1 -1 -1
 2 10 0 10 2 -1 -1 2 20 -1 1 1 -1 -1 3 -1 -1 -1 utility=0:5,20:0
; a comment between jobs
 3 20 0 10 4 -1 -1 4 20 -1 1 2 -1 -1 0 -1 -1 -1
 4 30 7 10 8 -1 -1 8 20 -1 1 2 -1 -1 1 -1 -1 -1
 5 40 0 10 1 -1 -1 1 20 -1 1 3 -1 -1 2 -1 -1 -1
"""


def test_slice_keeps_comments_and_the_numbered_jobs(tmp_path: Path) -> None:
    src = tmp_path / "t.swf"
    src.write_text(TRACE)
    dst = tmp_path / "part.swf"
    assert slice_jobs(src, dst, 2, 4) == 3
    lines = dst.read_text().splitlines()
    assert lines[:3] == ["; Version: 2.2", "; MaxProcs: 8", ";"]
    assert lines[3] == "; Note: jobs numbered 2 to 4 of t.swf"
    assert lines[4:] == [
        " 2 10 0 10 2 -1 -1 2 20 -1 1 1 -1 -1 3 -1 -1 -1 utility=0:5,20:0",
        "; a comment between jobs",
        " 3 20 0 10 4 -1 -1 4 20 -1 1 2 -1 -1 0 -1 -1 -1",
        " 4 30 7 10 8 -1 -1 8 20 -1 1 2 -1 -1 1 -1 -1 -1",
    ]
    jobs = load_swf(dst, nodes=8).jobs
    assert [j.id for j in jobs] == [2, 3, 4]
    assert jobs[0].utility is not None and jobs[0].utility.start_value == 5


def test_slice_of_a_gzip_trace_to_gzip(tmp_path: Path) -> None:
    src = tmp_path / "t.swf.gz"
    src.write_bytes(gzip.compress(TRACE.encode()))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = tmp_path / "a" / "part.swf.gz", tmp_path / "b" / "part.swf.gz"
    assert slice_jobs(src, first, 5, 9) == 1
    slice_jobs(src, second, 5, 9)
    assert first.read_bytes() == second.read_bytes()  # the same bytes on every run
    assert (
        gzip.decompress(first.read_bytes())
        .decode()
        .endswith(" 5 40 0 10 1 -1 -1 1 20 -1 1 3 -1 -1 2 -1 -1 -1\n")
    )


def test_slice_errors_name_the_problem(tmp_path: Path) -> None:
    src = tmp_path / "t.swf"
    src.write_text(TRACE)
    with pytest.raises(ValueError, match="no job numbered 6 to 9"):
        slice_jobs(src, tmp_path / "o.swf", 6, 9)
    with pytest.raises(ValueError, match="first job number is above the last"):
        slice_jobs(src, tmp_path / "o.swf", 4, 2)
    bad = tmp_path / "bad.swf"
    bad.write_text(TRACE.replace(" 4 30 7", " x4 30 7"))
    with pytest.raises(
        SWFError, match=r"bad\.swf:8: field 1 \(job_number\): 'x4' is not an integer"
    ):
        slice_jobs(bad, tmp_path / "o.swf", 1, 9)


def test_parse_job_range() -> None:
    assert parse_job_range("5000-10000") == (5000, 10000)
    assert parse_job_range(" 7-7 ") == (7, 7)
    for text in ("5000", "a-b", "-5", "10-5", "1-2-3"):
        with pytest.raises(ValueError, match="job range"):
            parse_job_range(text)
