"""The SWF reader: headers, numbers, errors and the jobs a trace gives (the writer: test_swf_write)."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from batchd.workload import (
    SWF_FIELDS,
    SWFError,
    SWFHeader,
    iter_swf,
    open_text,
    read_header,
)
from paths import DATA

SWF_OK = DATA / "swf_ok.swf"

OK_HEADER = [
    "; Version: 2.2",
    "; Computer: hand-made test machine",
    ";MaxJobs: 7",
    ";        MaxProcs: 16",
    "; MaxNodes: 8 (batch partition; 16 total)",
    "; Information: http://www.cs.huji.ac.il/labs/parallel/workload/",
    ";              http://example.org/",
    ";",
]
OK_JOB_LINES = [9, 10, 11, 14, 15, 16, 17]


def _gzip_copy(src: Path, dst: Path) -> Path:
    with open(src, "rb") as fin, gzip.open(dst, "wb") as fout:
        shutil.copyfileobj(fin, fout)
    return dst


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


LINE_OK = "1 0 5 100 4 -1 -1 4 200 -1 1 3 1 -1 2 -1 -1 -1"


# --------------------------------------------------------------------------------------------
# Fields and header


def test_field_names() -> None:
    assert len(SWF_FIELDS) == 18
    assert SWF_FIELDS[0] == "job_number"
    assert SWF_FIELDS[7] == "requested_processors"
    assert SWF_FIELDS[17] == "think_time"


def test_read_header_keeps_leading_comment_block_only() -> None:
    header = read_header(SWF_OK)
    assert header.lines == OK_HEADER
    assert header.value("Version") == "2.2"
    assert header.value("Computer") == "hand-made test machine"
    assert header.value("MaxJobs") == "7"  # ";Key: value" without the space
    assert header.value("MaxProcs") == "16"  # right-aligned key
    assert header.value("Information") == "http://www.cs.huji.ac.il/labs/parallel/workload/"
    assert header.value("http") is None  # a continuation line is not a key
    assert header.value("maxnodes") is None  # keys are case-sensitive
    assert header.value("MaxQueues") is None
    assert header.max_nodes == 8
    assert header.max_procs == 16


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("; MaxNodes: 100", 100),
        (";MaxNodes: 1524", 1524),
        (";        MaxNodes: 70  (dual)", 70),
        ("; MaxNodes: 338 (batch partition; 512 total)", 338),
        ("; MaxNodes: 184  ( 6,  171,   7)", 184),
        ("; MaxNodes: N/A", None),
        ("; MaxProcs: 64", None),
    ],
)
def test_max_nodes_leading_integer(line: str, expected: int | None) -> None:
    assert SWFHeader([line]).max_nodes == expected


def test_max_procs_and_first_value_wins() -> None:
    header = SWFHeader(["; MaxProcs: 1664 (72, 1368, 224)", ";MaxQueues: 4", "; MaxQueues: 3"])
    assert header.max_procs == 1664
    assert header.max_nodes is None
    assert header.value("MaxQueues") == "4"


# --------------------------------------------------------------------------------------------
# Reading


def test_iter_swf_plain() -> None:
    records = list(iter_swf(SWF_OK))
    assert [n for n, _ in records] == OK_JOB_LINES
    assert all(len(rec) == 18 for _, rec in records)
    line_no, first = records[0]
    assert first == (1, 0, 5, 100, 4, 90.5, -1, 4, 200, -1, 1, 3, 1, -1, 2, -1, -1, -1)
    assert type(first[5]) is float
    assert all(type(v) is int for i, v in enumerate(first) if i != 5)
    _, last = records[-1]
    assert last[1] == 10.4 and last[3] == 12.6
    assert type(last[0]) is int


def test_iter_swf_gzip(tmp_path: Path) -> None:
    plain = list(iter_swf(SWF_OK))
    gz = _gzip_copy(SWF_OK, tmp_path / "trace.swf.gz")
    assert list(iter_swf(gz)) == plain
    assert read_header(gz).lines == OK_HEADER
    assert read_header(gz).max_nodes == 8
    # gzip is recognised by its magic bytes, whatever the name
    odd = _gzip_copy(SWF_OK, tmp_path / "trace.dat")
    assert list(iter_swf(odd)) == plain
    with open_text(odd) as fh:
        assert fh.readline() == "; Version: 2.2\n"


def test_bad_field_names_file_line_and_field() -> None:
    with pytest.raises(SWFError) as info:
        list(iter_swf(DATA / "swf_bad_field.swf"))
    err = info.value
    msg = str(err)
    assert msg.startswith(f"{DATA / 'swf_bad_field.swf'}:4: field 9 (requested_time): ")
    assert "1h00" in msg
    assert err.line_no == 4
    assert err.path == str(DATA / "swf_bad_field.swf")
    assert isinstance(err, ValueError)


def test_wrong_field_count() -> None:
    path = DATA / "swf_short_line.swf"
    with pytest.raises(SWFError) as info:
        list(iter_swf(path))
    assert str(info.value) == f"{path}:5: expected 18 fields, found 17"
    assert info.value.line_no == 5


def test_records_before_the_bad_line_are_yielded() -> None:
    records = iter_swf(DATA / "swf_bad_field.swf")
    assert next(records)[0] == 3
    with pytest.raises(SWFError):
        next(records)


@pytest.mark.parametrize(
    ("text", "field_no"),
    [("nan", 6), ("inf", 6), ("-Infinity", 4), ("1e999", 9), ("1_000", 2), ("12,5", 7)],
)
def test_non_finite_and_odd_numbers_are_errors(tmp_path: Path, text: str, field_no: int) -> None:
    parts = LINE_OK.split()
    parts[field_no - 1] = text
    path = _write(tmp_path, "bad.swf", f"; MaxNodes: 8\n{LINE_OK}\n{' '.join(parts)}\n")
    with pytest.raises(
        SWFError, match=rf"bad\.swf:3: field {field_no} \({SWF_FIELDS[field_no - 1]}\)"
    ):
        list(iter_swf(path))


def test_numbers_int_where_integer_else_float(tmp_path: Path) -> None:
    parts = LINE_OK.split()
    parts[5] = "1e3"
    parts[6] = "+7"
    parts[9] = "2.50"
    path = _write(tmp_path, "mixed.swf", " ".join(parts) + "\n")
    ((line_no, rec),) = list(iter_swf(path))
    assert line_no == 1
    assert rec[5] == 1000.0 and type(rec[5]) is float
    assert rec[6] == 7 and type(rec[6]) is int
    assert rec[9] == 2.5 and type(rec[9]) is float


def test_empty_and_header_only(tmp_path: Path) -> None:
    empty = _write(tmp_path, "empty.swf", "")
    assert list(iter_swf(empty)) == []
    assert read_header(empty).lines == []
    only = _write(tmp_path, "only.swf", "; MaxNodes: 4\n\n;\n")
    assert list(iter_swf(only)) == []
    assert read_header(only).lines == ["; MaxNodes: 4", ";"]
