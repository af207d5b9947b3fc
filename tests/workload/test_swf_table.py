"""The whole-file SWF reader against the exact line-by-line one.

``load_swf`` reads a trace into columns (``batchd.workload.swf_table``) and falls back to
the exact reader (``iter_swf``) for anything irregular. Every case here loads the same
file both ways and wants the same jobs (field by field, value types included), the same
skip counts and header, or the same error.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batchd.model.job import Job
from batchd.workload import SKIP_REASONS, load_swf, loader, read_header
from batchd.workload.swf_table import SWFTable, parse_swf_table, read_swf_table
from paths import DATA, TRACES

HEADER = "; Version: 2.2\n; Computer: test\n; MaxNodes: 64\n;\n"

# Right-aligned fixed columns, as in the archive's files (KTH-SP2 has this layout).
WIDTHS = (5, 9, 7, 7, 5, 7, 6, 5, 7, 6, 3, 4, 4, 5, 3, 3, 3, 3)
ROWS = [
    (1, 0, 5, 100, 4, -1, -1, 4, 200, -1, 1, 3, 1, -1, 2, -1, -1, -1),
    (2, 10, 0, 50, 2, -1, -1, -1, -1, -1, 1, 4, 1, -1, -1, -1, -1, -1),
    (3, 5, 1, 30, 1, -1, -1, 1, 20, -1, 0, 3, 1, -1, 0, -1, -1, -1),
    (4, 20, -1, -1, 0, -1, -1, -1, 600, -1, 5, 5, 2, -1, 1, -1, -1, -1),
    (5, 30, -1, -1, 2, -1, -1, 2, 600, -1, 5, 5, 2, -1, 1, -1, -1, -1),
    (6, 40, 0, 10, 99, -1, -1, 99, 600, -1, 1, 6, 2, -1, 1, -1, -1, -1),
    (7, 40, 2, 13, 3, -1, -1, 3, 900, -1, 1, 7, 2, -1, 1, -1, -1, -1),
    (8, 50, 7, 100000, 16, -1, -1, 16, 86400, -1, 1, 123, 2, -1, 1, -1, -1, -1),
]


def line(row: tuple[Any, ...], widths: tuple[int, ...] = WIDTHS) -> str:
    return " ".join(str(v).rjust(w) for v, w in zip(row, widths, strict=True))


def trace(rows: list[tuple[Any, ...]] = ROWS, header: str = HEADER) -> str:
    return header + "".join(line(r) + "\n" for r in rows)


def job_key(job: Job) -> tuple[Any, ...]:
    rec = None if job.trace is None else tuple((v, type(v)) for v in job.trace.fields)
    fields = (job.id, job.submit, job.width, job.estimate, job.runtime, job.user, job.queue)
    return (*fields, tuple(type(v) for v in fields), rec)


def outcome(path: Path, **kw: Any) -> tuple[Any, ...]:
    """What load_swf makes of the file: its jobs, skips and header, or its error."""
    kw.setdefault("nodes", 64)
    try:
        wl = load_swf(path, **kw)
    except Exception as exc:  # noqa: BLE001 - the error itself is the outcome
        return ("error", type(exc), str(exc))
    assert wl.header is not None
    return ("ok", [job_key(j) for j in wl.jobs], wl.skipped, wl.header.lines)


@contextmanager
def exact_reader() -> Iterator[None]:
    """load_swf without the table: the line-by-line reader only."""
    with mock.patch.object(loader, "read_swf_table", return_value=None):
        yield


def compare(path: Path, **kw: Any) -> tuple[Any, ...]:
    got = outcome(path, **kw)
    with exact_reader():
        want = outcome(path, **kw)
    assert got == want
    return got


def write(tmp_path: Path, text: str | bytes, name: str = "t.swf", gz: bool = False) -> Path:
    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    path = tmp_path / name
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return path


def table_of(text: str | bytes) -> SWFTable | None:
    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    return parse_swf_table(data)


# --------------------------------------------------------------------------------------------
# The table reads regular files, and gives what the exact reader gives


@pytest.mark.parametrize("gz", [False, True])
def test_fixed_columns(tmp_path: Path, gz: bool) -> None:
    path = write(tmp_path, trace(), gz=gz)
    table = read_swf_table(path)
    assert table is not None and table.rows == len(ROWS) and table.order is None
    assert table.columns[5] == -1  # the same on every line: kept once
    assert table.columns[0] == [r[0] for r in ROWS]
    assert not table.floats
    got = compare(path)
    assert got[0] == "ok" and got[2] == {"width<=0": 1, "runtime<0": 1, "wider_than_machine": 1}


def test_layouts_of_several_widths(tmp_path: Path) -> None:
    """Wider values push the later fields along (CTC-SP2): one block per layout."""
    rows = [
        *ROWS[:4],
        (9, 60, 12345678, 5, 1, 2.5, -1, 1, 60, -1, 1, 9, 1, 12345, 1, -1, -1, -1),
        (10, 60, 3, 5, 1, 142.0, -1, 1, 60, -1, 1, 9, 1, 3, 1, -1, -1, -1),
        *ROWS[4:],
        (11, 70, 3, 5, 1, 42689, -1, 1, 60, -1, 1, 9, 1, 1234567, 1, -1, -1, -1),
    ]
    text = HEADER + "".join(
        line(tuple(f"{v:.2f}" if isinstance(v, float) else v for v in r)) + "\n" for r in rows
    )
    table = table_of(text)
    assert table is not None and table.rows == len(rows) and table.order is not None
    assert sorted(table.order) == list(range(len(rows)))
    assert table.floats == {5}
    by_line = dict(zip(table.order, table.columns[5], strict=True))  # type: ignore[arg-type]
    assert by_line[4] == 2.5 and type(by_line[10]) is int and type(by_line[5]) is float
    compare(write(tmp_path, text))


def test_single_spaces_every_line_its_own_length(tmp_path: Path) -> None:
    text = HEADER + "".join(" ".join(map(str, r)) + "\n" for r in ROWS)
    assert table_of(text) is not None
    compare(write(tmp_path, text))


def test_left_aligned_columns(tmp_path: Path) -> None:
    text = HEADER + "".join(
        " ".join(str(v).ljust(w) for v, w in zip(r, WIDTHS, strict=True)) + "\n" for r in ROWS
    )
    assert table_of(text) is not None
    compare(write(tmp_path, text))


def test_ties_across_layouts_keep_file_order(tmp_path: Path) -> None:
    rows = [
        (i, 100, 1, 10, 5, -1, -1, 1, 10 ** (i % 5), -1, 1, i, 1, -1, 1, -1, -1, -1)
        for i in range(1, 30)
    ]
    text = HEADER + "".join(" ".join(map(str, r)) + "\n" for r in rows)
    table = table_of(text)
    assert table is not None and table.order is not None
    got = compare(write(tmp_path, text))
    assert [k[0] for k in got[1]] == list(range(1, 30))


def test_real_trace_sample(tmp_path: Path) -> None:
    compare(DATA / "swf_ok.swf")  # comments and a blank line between jobs: the exact reader
    compare(DATA / "swf_ok.swf", first=3)


@pytest.mark.parametrize("name", ["KTH-SP2-1996-2.1-cln.swf.gz", "CTC-SP2-1996-3.1-cln.swf.gz"])
def test_real_traces_are_read_as_tables(name: str) -> None:
    if not TRACES.is_dir():
        pytest.skip(f"real traces folder {TRACES} is absent")
    table = read_swf_table(TRACES / name, first=3000)
    assert table is not None and table.rows == 3000
    compare(TRACES / name, first=3000, nodes=128)


# --------------------------------------------------------------------------------------------
# Odd values in any field


def with_field(field: int, text: str, row: int = 3) -> str:
    """The trace with field ``field`` (1-based) of row ``row`` (0-based) set to ``text``."""
    rows: list[tuple[Any, ...]] = [tuple(r) for r in ROWS]
    values = list(rows[row])
    values[field - 1] = text
    rows[row] = tuple(values)
    return trace(rows)


ODD = [
    "12.5", "0.5", "-0.25", "142.00", "-0.0", "0.0", "-0", "007", "-05", "00", "+7", "1.",
    ".5", "-.5", "1e3", "1E3", "1.5e2", "1_000", "inf", "nan", "-Infinity", "0x1F", "ff",
    "1f", "--1", "1-2", "-", ".", "1.2.3", "99999999999999999999999", "3" * 40 + ".5",
]  # fmt: skip


@pytest.mark.parametrize("field", range(1, 19))
@pytest.mark.parametrize("text", ODD)
def test_odd_values(tmp_path: Path, field: int, text: str) -> None:
    compare(write(tmp_path, with_field(field, text)))


@pytest.mark.parametrize("field", [1, 2, 4, 5, 8, 9, 12, 15])
def test_floats_in_job_fields_every_line(tmp_path: Path, field: int) -> None:
    rows = [tuple(v + 0.5 if i == field - 1 else v for i, v in enumerate(r)) for r in ROWS]
    text = trace(rows)
    table = table_of(text)
    assert table is not None and table.floats == {field - 1}
    compare(write(tmp_path, text))
    compare(write(tmp_path, text), perfect_estimates=True)


# --------------------------------------------------------------------------------------------
# Odd lines and files


def lines_of(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def insert(text: str, at: int, extra: str) -> str:
    parts = lines_of(text)
    parts.insert(at, extra)
    return "".join(parts)


MIDDLE = 7  # a line in the middle of the jobs


@pytest.mark.parametrize(
    "extra",
    [
        "; a comment between jobs\n",
        "   ; an indented comment\n",
        "\n",
        "      \n",
        "\t\n",
        "\x0c\n",
        "\x1c\n",
        line(ROWS[0])[:-3] + "\n",  # 17 fields
        line(ROWS[0]) + "  -1\n",  # 19 fields
        line(ROWS[0]).replace("    ", "\t", 1) + "\n",
        line(ROWS[0]).replace("  ", "\x1c", 1) + "\n",
        line(ROWS[0]).replace("  ", "\u00a0", 1) + "\n",
        line(ROWS[0]).replace(" ", "", 3) + "\n",  # two fields run together
        line(ROWS[0]) + " " * 300 + "\n",
        "x" * 400 + "\n",
    ],
)
def test_odd_lines_in_the_middle(tmp_path: Path, extra: str) -> None:
    compare(write(tmp_path, insert(trace(), MIDDLE, extra)))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n",
        HEADER,
        HEADER + "\n   \n",
        trace().replace("\n", "\r\n"),
        trace().replace("\n", "\r"),
        trace().replace("\n", "\r\n", 5),
        trace()[:-1],  # no final line end
        trace() + "\n\n  \n",
        trace()[:-1] + "   ",
        "\ufeff" + trace(),
        "\ufeff" + trace(header=""),
        HEADER.replace("test", "caf\udce9 \udcff") + trace(header=""),
        trace(header="") + "; a comment after the jobs\n",
        trace(header="\n" + HEADER + "\n"),
        trace(ROWS[:1]),
        trace(ROWS[:1])[:-1],
    ],
)
def test_odd_files(tmp_path: Path, text: str) -> None:
    compare(write(tmp_path, text))
    compare(write(tmp_path, text, name="t.swf.gz", gz=True))


def test_undecodable_bytes_in_the_header(tmp_path: Path) -> None:
    data = b"; Computer: caf\xe9\n; Note: \xff\xfe\n" + trace(header="").encode()
    got = compare(write(tmp_path, data))
    assert got[3][0] == "; Computer: caf\udce9"
    assert read_header(write(tmp_path, data)).lines == got[3]


def test_gzip_of_several_members_and_damaged(tmp_path: Path) -> None:
    text = trace().encode()
    two = gzip.compress(text[:100], mtime=0) + gzip.compress(text[100:], mtime=0)
    path = tmp_path / "two.swf.gz"
    path.write_bytes(two)
    assert read_swf_table(path) is not None
    compare(path)
    whole = gzip.compress(text, mtime=0)
    for name, damaged in [("cut", whole[:-20]), ("crc", whole[:-8] + b"\0\0\0\0" + whole[-4:])]:
        path = tmp_path / f"{name}.swf.gz"
        path.write_bytes(damaged)
        assert read_swf_table(path) is None
        assert compare(path)[0] == "error"


def test_missing_file(tmp_path: Path) -> None:
    assert compare(tmp_path / "absent.swf")[0] == "error"


# --------------------------------------------------------------------------------------------
# first, skips, estimates


@pytest.mark.parametrize("first", [0, 1, 3, 4, 5, 8, 100])
def test_first(tmp_path: Path, first: int) -> None:
    compare(write(tmp_path, trace()), first=first)
    text = "".join(lines_of(trace())[:3]) + "".join(line(r) + "\n" for r in reversed(ROWS))
    compare(write(tmp_path, text.replace(line(ROWS[0]), " ".join(map(str, ROWS[0])))), first=first)


@pytest.mark.parametrize("first", [2, 3, 4])
def test_first_and_a_bad_line_after(tmp_path: Path, first: int) -> None:
    """The line after the first N is parsed (and may fail), the ones after it are not."""
    got = compare(write(tmp_path, with_field(9, "1h00", row=3)), first=first)
    assert (got[0] == "error") == (first >= 3)  # row 3 is job line 4


@pytest.mark.parametrize("nodes", [1, 3, 16, 1 << 40])
@pytest.mark.parametrize("perfect", [False, True])
def test_skips_and_estimates(tmp_path: Path, nodes: int, perfect: bool) -> None:
    got = compare(write(tmp_path, trace()), nodes=nodes, perfect_estimates=perfect)
    assert tuple(got[2]) == SKIP_REASONS


def test_all_rows_skipped_and_all_constant(tmp_path: Path) -> None:
    row = (1, 0, 5, 100, 4, -1, -1, 0, 200, -1, 1, 3, 1, -1, 2, -1, -1, -1)
    text = trace([row] * 4)
    table = table_of(text)
    assert table is not None and all(not isinstance(c, list) for c in table.columns)
    compare(write(tmp_path, text), nodes=2)
    compare(write(tmp_path, text), nodes=8, shrink=0.5)


# --------------------------------------------------------------------------------------------
# Generated traces


SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    database=None,
)

values = st.one_of(
    st.integers(-1, 9),
    st.integers(-5, 10**9),
    st.just(-1),
    st.floats(0, 10**6, allow_nan=False).map(lambda v: round(v, 2)),
)


@st.composite
def swf_texts(draw: st.DrawFn) -> str:
    rows = draw(st.lists(st.tuples(*([values] * 18)), min_size=0, max_size=12))
    style = draw(st.sampled_from(["fixed", "narrow", "single", "ragged"]))
    out = [draw(st.sampled_from(["", HEADER, "; x\n\n; y: 1\n"]))]
    for row in rows:
        texts = [f"{v:.2f}" if isinstance(v, float) else str(v) for v in row]
        if style == "fixed":
            text = " ".join(t.rjust(w) for t, w in zip(texts, WIDTHS, strict=True))
        elif style == "narrow":  # values wider than their columns push the rest along
            text = " ".join(t.rjust(3) for t in texts)
        elif style == "single":
            text = " ".join(texts)
        else:
            text = "".join(" " * draw(st.integers(1, 3)) + t for t in texts)
        out.append(text + draw(st.sampled_from(["", "", " ", "  "])) + "\n")
        if draw(st.integers(0, 30)) == 0:
            out.append(draw(st.sampled_from(["; note\n", "\n", "1 2 3\n", texts[0] + "\n"])))
    text = "".join(out)
    if draw(st.booleans()) and text:
        pos = draw(st.integers(0, len(text) - 1))
        text = (
            text[:pos]
            + draw(st.sampled_from(["", "-", ".", "0", " ", "\n", "\r\n"]))
            + text[pos + 1 :]
        )
    return text


@SETTINGS
@given(
    text=swf_texts(),
    first=st.one_of(st.none(), st.integers(0, 13)),
    nodes=st.sampled_from([1, 8, 10**9]),
    gz=st.booleans(),
)
def test_generated(tmp_path: Path, text: str, first: int | None, nodes: int, gz: bool) -> None:
    compare(write(tmp_path, text, gz=gz), first=first, nodes=nodes)


def test_float_columns_round_like_the_exact_reader(tmp_path: Path) -> None:
    """Half-way values round to even, in the table's float path as in the exact one."""
    rows = [tuple(v + 0.5 if i in (1, 3) else v for i, v in enumerate(r)) for r in ROWS]
    got = compare(write(tmp_path, trace(rows)))
    submits = {k[0]: k[1] for k in got[1]}
    assert submits[1] == 0 and submits[3] == 6  # 0.5 and 5.5
    assert {k[0]: k[4] for k in got[1]}[1] == 100  # runtime 100.5
