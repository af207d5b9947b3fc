"""The SWF writer and jobs.csv: round trips, what a run changes, number formats, and
columns aligned over every job when the lines are written a slice at a time."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from batchd.model.job import Job, TraceLine
from batchd.workload import SWFHeader, iter_swf, load_swf, open_text, read_header
from batchd.workload.swf_write import write_jobs_csv, write_swf
from paths import DATA

SWF_OK = DATA / "swf_ok.swf"


def _run(job: Job, start: int, end: int, nodes: list[int], killed: bool = False) -> None:
    job.start, job.end, job.units, job.result.killed = start, end, nodes, killed


@pytest.mark.parametrize("name", ["out.swf", "out.swf.gz"])
def test_write_swf_round_trip(tmp_path: Path, name: str) -> None:
    wl = load_swf(SWF_OK, nodes=8)
    by_id = {job.id: job for job in wl.jobs}
    assert sorted(by_id) == [1, 2, 3, 7]
    _run(by_id[1], 50, 150, [0, 1, 2, 3])
    _run(by_id[3], 5, 25, [4], killed=True)  # killed at its estimate
    _run(by_id[2], 12, 62, [5, 6])
    _run(by_id[7], 10, 23, [4, 5, 6])
    synthetic = Job(id=9, submit=200, width=2, estimate=300, runtime=100)
    _run(synthetic, 210, 310, [0, 1])
    out = tmp_path / name
    write_swf(out, wl.header, [synthetic, *wl.jobs], extra_comments=["replayed by batchd"])

    if name.endswith(".gz"):
        with open(out, "rb") as fh:
            assert fh.read(2) == b"\x1f\x8b"
    # The header as read (tests/workload/test_swf.py), then the comment.
    assert len(wl.header.lines) == 8 and wl.header.lines[0] == "; Version: 2.2"
    assert read_header(out).lines == [*wl.header.lines, "; replayed by batchd"]
    records = {rec[0]: rec for _, rec in iter_swf(out)}
    assert list(records) == [1, 2, 3, 7, 9]  # sorted by id

    # carried fields kept, submit/wait/run/alloc replaced
    assert records[1] == (1, 0, 50, 100, 4, 90.5, -1, 4, 200, -1, 1, 3, 1, -1, 2, -1, -1, -1)
    assert records[2] == (2, 10, 2, 50, 2, -1, -1, -1, -1, -1, 1, 4, 1, -1, -1, -1, -1, -1)
    # killed: status 0 (it was already 0 in the trace for job 3, so check job 3 fields too)
    assert records[3][1:5] == (5, 0, 20, 1) and records[3][10] == 0
    # floats of the trace were rounded into ints on load; fields 2..5 come from the run
    assert records[7][1:5] == (10, 0, 13, 3)
    assert records[7][8] == 900
    # built record for a job without one
    assert records[9] == (9, 200, 10, 100, 2, -1, -1, 2, 300, -1, -1, -1, -1, -1, -1, -1, -1, -1)

    with open_text(out) as fh:
        lines = [line.rstrip("\n") for line in fh if not line.startswith(";")]
    assert len({len(line) for line in lines}) == 1  # right-aligned columns
    assert "90.5" in lines[0] and "90.50" not in lines[0]


def test_write_swf_status_and_unstarted_jobs(tmp_path: Path) -> None:
    rec = (4, 100, 7, 50, 2, -1, -1, 2, 60, -1, 1, 8, 1, -1, 3, -1, -1, -1)
    killed = Job(id=4, submit=100, width=2, estimate=60, runtime=90, trace=TraceLine(rec))
    _run(killed, 110, 170, [0, 1], killed=True)
    never = Job(id=5, submit=120, width=1, estimate=60, runtime=10, trace=None)
    out = tmp_path / "status.swf"
    write_swf(out, None, [never, killed])
    got = [r for _, r in iter_swf(out)]
    assert got[0] == (4, 100, 10, 60, 2, -1, -1, 2, 60, -1, 0, 8, 1, -1, 3, -1, -1, -1)
    assert got[1][:5] == (5, 120, -1, -1, 1)  # never started: wait and run unknown
    assert read_header(out).lines == []


def test_write_swf_float_format(tmp_path: Path) -> None:
    rec = (1, 0, 0, 10, 1, 3.14159, 0.004, 1, 60, 2.5, 1, 1, 1, -1, -1, -1, -1, 1234.0)
    job = Job(id=1, submit=0, width=1, estimate=60, runtime=10, trace=TraceLine(rec))
    _run(job, 0, 10, [0])
    out = tmp_path / "fmt.swf"
    write_swf(out, SWFHeader(["; MaxNodes: 1"]), [job])
    line = out.read_text().splitlines()[1]
    expected = "1 0 0 10 1 3.14 0 1 60 2.5 1 1 1 -1 -1 -1 -1 1234"
    assert line.split() == expected.split()


def test_jobs_csv(tmp_path: Path) -> None:
    a = Job(id=7, submit=100, width=5, estimate=600, runtime=300)
    _run(a, 160, 460, [8, 0, 1, 2, 3])
    b = Job(id=3, submit=0, width=1, estimate=3, runtime=50)
    _run(b, 10, 13, [4], killed=True)
    c = Job(id=5, submit=0, width=1, estimate=10, runtime=0)
    _run(c, 5, 5, [6])
    out = tmp_path / "jobs.csv"
    write_jobs_csv(out, [a, b, c])
    text = out.read_text()
    lines = text.splitlines()
    assert lines[0] == (
        "job_id,submission_time,requested_number_of_resources,requested_time,success,"
        "starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,"
        "allocated_resources"
    )
    assert lines[1] == "3,0,1,3,0,10,3,13,10,13,4.33333,4"
    assert lines[2] == "5,0,1,10,1,5,0,5,5,5,5,6"
    assert lines[3] == "7,100,5,600,1,160,300,460,60,360,1.2,0-3 8"
    rows = list(csv.DictReader(text.splitlines()))
    assert rows[2]["allocated_resources"] == "0-3 8"
    assert len(rows) == 3


def _traced(job_id: int, fields: dict[int, int | float]) -> Job:
    rec: list[int | float] = [job_id, 0, -1, -1, 1, -1, -1, 1, 60, -1, 1, 1, 1, -1, -1, -1, -1, -1]
    for i, value in fields.items():
        rec[i] = value
    job = Job(id=job_id, submit=0, width=1, estimate=60, runtime=10, trace=TraceLine(tuple(rec)))
    _run(job, 0, 10, [0])
    return job


def _expected_lines(jobs: list[Job], path: Path) -> list[str]:
    """The job lines each column right-aligned to its longest value over all jobs, made
    from the values the file holds as text."""
    rows = [line.split() for line in path.read_text().splitlines() if not line.startswith(";")]
    widths = [max(len(row[i]) for row in rows) for i in range(18)]
    return [" ".join(v.rjust(w) for v, w in zip(row, widths, strict=True)) for row in rows]


@pytest.mark.parametrize("slice_jobs", [1, 2, 3, 8192])
def test_columns_are_aligned_over_every_slice(tmp_path: Path, slice_jobs: int) -> None:
    # The longest value of each column sits in a different slice: a negative id-like
    # field first, a wide integer in the middle, a float with decimals last.
    jobs = [
        _traced(1, {5: -123456}),
        _traced(2, {6: 98765432}),
        _traced(3, {}),
        _traced(4, {9: 2.5}),
        _traced(5, {9: 1234.125, 17: 7}),
    ]
    out = tmp_path / "sliced.swf"
    write_swf(out, SWFHeader(["; MaxNodes: 1"]), reversed(jobs), slice_jobs=slice_jobs)
    lines = out.read_text().splitlines()
    assert lines[0] == "; MaxNodes: 1"
    assert lines[1:] == _expected_lines(jobs, out)
    assert len({len(line) for line in lines[1:]}) == 1
    fields = [line.split() for line in lines[1:]]
    assert [row[0] for row in fields] == ["1", "2", "3", "4", "5"]  # by id
    assert fields[0][5] == "-123456" and fields[1][6] == "98765432"
    assert fields[3][9] == "2.5" and fields[4][9] == "1234.12"  # 2 decimals, no trailing 0
    assert lines[2].index("98765432") == lines[1].index("-123456") + 8  # one column on


def test_same_text_whatever_the_slice(tmp_path: Path) -> None:
    wl = load_swf(SWF_OK, nodes=8)
    for i, job in enumerate(wl.jobs):
        _run(job, 100 + i, 200 + 7 * i, [i % 8])
    texts = set()
    for slice_jobs in (1, 2, 3, 4, 100):
        out = tmp_path / f"s{slice_jobs}.swf"
        write_swf(out, wl.header, wl.jobs, ["sliced"], slice_jobs=slice_jobs)
        texts.add(out.read_text())
    assert len(texts) == 1


def test_no_jobs_writes_the_header_alone(tmp_path: Path) -> None:
    out = tmp_path / "none.swf"
    write_swf(out, SWFHeader(["; MaxNodes: 4"]), [], ["nothing ran"])
    assert out.read_text() == "; MaxNodes: 4\n; nothing ran\n"
