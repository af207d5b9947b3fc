"""Reading a trace file: what is not a file, gzip cut short, huge lines, bounded reads."""

from __future__ import annotations

import gzip
import os
import re
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from batchd.workload import SWFError, iter_swf, load_swf, read_header
from batchd.workload.source import load_trace
from batchd.workload.swf_fields import MAX_LINE

HEADER = "; Version: 2.2\n; MaxNodes: 64\n"


def job_lines(count: int) -> str:
    return "".join(
        f"{i} {i * 7} -1 {10 + i % 50} {1 + i % 8} -1 -1 {1 + i % 8} 60 -1 1 {i % 5} -1 -1 "
        "1 -1 -1 -1\n"
        for i in range(1, count + 1)
    )


def peak_bytes(read: Callable[[], object]) -> int:
    """The most memory Python objects took while ``read`` ran."""
    tracemalloc.start()
    try:
        read()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# --------------------------------------------------------------------------------------------
# Not a regular file


def test_a_directory_is_refused(tmp_path: Path) -> None:
    for read in (read_header, lambda p: load_swf(p, nodes=4), lambda p: load_trace(str(p), 4)):
        with pytest.raises(SWFError) as err:
            read(tmp_path)
        assert str(err.value) == (
            f"{tmp_path}: a directory, not a trace file: give a file (plain or gzip)"
        )


def test_dev_zero_is_refused_before_it_is_read() -> None:
    for read in (lambda p: load_trace(p, 4), read_header, lambda p: list(iter_swf(p))):
        with pytest.raises(SWFError, match=r"^/dev/zero: a character device, not a trace file"):
            read("/dev/zero")


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    """A pipe a writer fills with a trace once a reader opens it (for at most 5 s)."""
    path = tmp_path / "trace.fifo"
    os.mkfifo(path)
    done = threading.Event()

    def write() -> None:
        deadline = time.monotonic() + 5
        while not done.is_set() and time.monotonic() < deadline:
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader yet
                time.sleep(0.01)
                continue
            with os.fdopen(fd, "w") as fh:
                fh.write(HEADER + job_lines(3))
            return

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    yield path
    done.set()
    writer.join(10)


def test_a_pipe_is_refused_without_waiting_for_a_writer(fifo: Path) -> None:
    with pytest.raises(SWFError, match=r"trace\.fifo: a pipe, not a trace file"):
        load_swf(fifo, nodes=4)


# --------------------------------------------------------------------------------------------
# Gzip data cut short or damaged


def gz_trace(tmp_path: Path, jobs: int = 20_000) -> tuple[Path, bytes]:
    data = gzip.compress((HEADER + job_lines(jobs)).encode())
    return tmp_path / "t.swf.gz", data


def test_a_truncated_gzip_names_the_file_and_the_line_reached(tmp_path: Path) -> None:
    path, data = gz_trace(tmp_path)
    path.write_bytes(data[: len(data) // 2])
    for read in (lambda: load_swf(path, nodes=64), lambda: list(iter_swf(path))):
        with pytest.raises(SWFError) as err:
            read()
        assert err.value.line_no is not None and 1000 < err.value.line_no < 20_000
        assert str(err.value) == (
            f"{path}:{err.value.line_no}: the gzip data ends early (the file is cut short)"
        )


def test_a_truncated_gzip_header_block(tmp_path: Path) -> None:
    path = tmp_path / "t.swf.gz"
    path.write_bytes(gzip.compress(b"; Version: 2.2\n" * 1000)[:40])
    with pytest.raises(SWFError, match=r"t\.swf\.gz:1: the gzip data ends early"):
        read_header(path)


def test_damaged_gzip_data_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path, data = gz_trace(tmp_path, jobs=100)
    damaged = bytearray(data)
    damaged[-8] ^= 0xFF  # the checksum of the data
    path.write_bytes(bytes(damaged))
    with pytest.raises(SWFError) as err:
        load_swf(path, nodes=64)
    assert str(err.value).startswith(f"{path}:103: the gzip data is damaged: CRC check failed")


def test_gzip_members_and_padding_read_as_one_trace(tmp_path: Path) -> None:
    text = HEADER + job_lines(300)
    path = tmp_path / "t.swf.gz"
    cut = text.index("\n100 ") + 1
    path.write_bytes(
        gzip.compress(text[:cut].encode()) + gzip.compress(text[cut:].encode()) + b"\0" * 512
    )
    plain = tmp_path / "t.swf"
    plain.write_text(text)
    read = [(j.id, j.submit, j.width) for j in load_swf(path, nodes=64).jobs]
    assert read == [(j.id, j.submit, j.width) for j in load_swf(plain, nodes=64).jobs]
    assert len(read) == 300
    first = load_swf(path, nodes=64, first=150).jobs
    assert [j.id for j in first] == list(range(1, 151))


# --------------------------------------------------------------------------------------------
# One huge line


def test_a_line_beyond_the_cap_names_its_line_shortened(tmp_path: Path) -> None:
    path = tmp_path / "t.swf"
    fields = "1 0 -1 10 2 -1 -1 2 10 -1 1 1 -1 -1 -1 -1 -1 "
    path.write_text(HEADER + job_lines(2) + fields + "9" * (2 * MAX_LINE) + "\n")
    for read in (lambda: load_swf(path, nodes=64), lambda: list(iter_swf(path))):
        with pytest.raises(SWFError) as err:
            read()
        assert str(err.value) == (
            f"{path}:5: the line is longer than 1,048,576 characters "
            "(it begins '1 0 -1 10 2 -1 -1 2 10 -1 1 1 -1 -1 -1 -')"
        )


def test_a_line_at_the_cap_is_read(tmp_path: Path) -> None:
    path = tmp_path / "t.swf"
    comment = ";" + "x" * (MAX_LINE - 1)
    path.write_text(HEADER + comment + "\n" + job_lines(2))
    assert read_header(path).lines[-1] == comment
    assert len(load_swf(path, nodes=64).jobs) == 2


def test_a_huge_line_is_not_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "t.swf"
    path.write_text(HEADER)
    with path.open("r+b") as fh:  # 64 MB of zero bytes, no line end: a sparse file
        fh.truncate(len(HEADER) + 64 * 2**20)

    def read() -> None:
        with pytest.raises(SWFError, match=r"t\.swf:3: the line is longer than"):
            load_swf(path, nodes=64)

    assert peak_bytes(read) < 16 * 2**20


def test_a_gzip_bomb_is_not_inflated_whole(tmp_path: Path) -> None:
    path = tmp_path / "t.swf.gz"
    zeros = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b"\0" * 2**20
    path.write_bytes(
        b"".join([*(zeros.compress(chunk) for _ in range(256)), zeros.flush()])
    )  # 256 MB of zero bytes in about 250 kB

    def read() -> None:
        with pytest.raises(SWFError, match=r"t\.swf\.gz:1: the line is longer than"):
            load_swf(path, nodes=64)

    assert peak_bytes(read) < 16 * 2**20


# --------------------------------------------------------------------------------------------
# --first N reads only the start of the file


def with_garbage_tail(path: Path, text: str, tail: int) -> None:
    """``text``, then ``tail`` zero bytes that take no disk (a sparse file)."""
    path.write_text(text)
    with path.open("r+b") as fh:
        fh.truncate(len(text) + tail)


def test_first_reads_a_bounded_prefix_of_a_plain_trace(tmp_path: Path) -> None:
    path = tmp_path / "t.swf"
    with_garbage_tail(path, HEADER + job_lines(200), 256 * 2**20)
    jobs: list[int] = []

    def read() -> None:
        jobs.extend(j.id for j in load_swf(path, nodes=64, first=100).jobs)

    assert peak_bytes(read) < 16 * 2**20
    assert jobs == list(range(1, 101))


def test_first_reads_a_bounded_prefix_of_a_gzip_trace(tmp_path: Path) -> None:
    path = tmp_path / "t.swf.gz"
    zeros = zlib.compressobj(9, zlib.DEFLATED, 31)
    tail = b"".join([*(zeros.compress(b"\0" * 2**20) for _ in range(256)), zeros.flush()])
    path.write_bytes(gzip.compress((HEADER + job_lines(200)).encode()) + tail)
    jobs: list[int] = []

    def read() -> None:
        jobs.extend(j.id for j in load_swf(path, nodes=64, first=100).jobs)

    assert peak_bytes(read) < 16 * 2**20
    assert jobs == list(range(1, 101))


@pytest.mark.parametrize("first", [1, 99, 100, 199, 200, 500])
def test_first_gives_the_jobs_a_full_read_gives(tmp_path: Path, first: int) -> None:
    path = tmp_path / "t.swf"
    path.write_text(HEADER + job_lines(200))
    full = [(j.id, j.submit, j.runtime, j.width) for j in load_swf(path, nodes=64).jobs]
    some = [
        (j.id, j.submit, j.runtime, j.width) for j in load_swf(path, nodes=64, first=first).jobs
    ]
    assert some == full[:first]


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        ("101 x", "expected 18 fields, found 2"),
        (f"101 1 -1 10 1 -1 -1 1 60 -1 1 {10**20} -1 -1 1 -1 -1 -1", "field 12 (user_id): "),
    ],
)
def test_first_still_checks_the_line_after(tmp_path: Path, bad: str, error: str) -> None:
    path = tmp_path / "t.swf"
    path.write_text(HEADER + job_lines(100) + bad + "\n" + job_lines(1000))
    with pytest.raises(SWFError, match=rf"t\.swf:103: {re.escape(error)}"):
        load_swf(path, nodes=64, first=100)
    assert len(load_swf(path, nodes=64, first=99).jobs) == 99


# --------------------------------------------------------------------------------------------
# Empty


def test_an_empty_trace_has_no_jobs(tmp_path: Path) -> None:
    for name, data in (("t.swf", b""), ("t.swf.gz", gzip.compress(b""))):
        path = tmp_path / name
        path.write_bytes(data)
        wl = load_swf(path, nodes=4)
        assert wl.jobs == []
        assert wl.header is not None and wl.header.lines == []
        assert read_header(path).lines == []
