"""What a job line's numbers and a header's values may be: bounds, the clock, machine sizes."""

from __future__ import annotations

from pathlib import Path

import pytest

from batchd.model.times import CLOCK_MAX
from batchd.workload import SWFError, iter_swf, load_swf, read_header
from batchd.workload.swf_fields import DURATION_MAX, FIELD_MAX

HEADER = "; Version: 2.2\n; MaxNodes: 4\n"
LINE = "1 0 -1 10 2 -1 -1 2 10 -1 1 1 -1 -1 -1 -1 -1 -1"


def job_line(**values: object) -> str:
    """A regular job line, with the 1-based fields ``f<N>`` replaced."""
    fields = LINE.split()
    for key, value in values.items():
        fields[int(key[1:]) - 1] = str(value)
    return " ".join(fields)


def write(tmp_path: Path, *lines: str, header: str = HEADER) -> Path:
    path = tmp_path / "t.swf"
    path.write_text(header + "".join(line + "\n" for line in lines))
    return path


def regular_with(tmp_path: Path, bad: str, before: int = 5) -> Path:
    """A file the table reader takes, but for line ``before + 3``."""
    return write(tmp_path, *[job_line(f1=i + 1) for i in range(before)], bad, job_line(f1=99))


# --------------------------------------------------------------------------------------------
# Field bounds: beyond them the scheduler's 64-bit kernels overflowed


@pytest.mark.parametrize(
    ("field", "value", "bound"),
    [
        (12, 10**26, "a field may be from -1,000,000,000,000,000 to 1,000,000,000,000,000"),
        (2, 2**63, "a field may be from"),
        (9, 10**25, "a duration may be from -2,147,483,647 to 2,147,483,647"),
        (4, 2**31, "a duration may be from"),
        (4, "1e300", "a duration may be from"),
        (6, "-1e300", "a field may be from"),
        (7, FIELD_MAX + 1, "a field may be from"),
    ],
)
def test_a_number_out_of_bounds_names_file_line_and_field(
    tmp_path: Path, field: int, value: object, bound: str
) -> None:
    path = regular_with(tmp_path, job_line(**{f"f{field}": value}))
    for read in (lambda: list(iter_swf(path)), lambda: load_swf(path, nodes=4)):
        with pytest.raises(SWFError) as err:
            read()
        assert err.value.line_no == 8
        assert err.value.field_no == field
        assert str(err.value).startswith(f"{path}:8: field {field} (")
        assert bound in str(err.value)


def test_the_bounds_themselves_are_accepted(tmp_path: Path) -> None:
    # 2147483647 is what the archive writes for an unlimited requested time
    path = write(
        tmp_path,
        job_line(f1=1, f9=DURATION_MAX, f7=FIELD_MAX, f12=-FIELD_MAX),
        job_line(f1=2, f4=-DURATION_MAX),
    )
    wl = load_swf(path, nodes=4)
    assert [(j.id, j.estimate, j.user) for j in wl.jobs] == [(1, DURATION_MAX, str(-FIELD_MAX))]
    assert wl.skipped["runtime<0"] == 1
    assert next(iter_swf(path))[1][6] == FIELD_MAX


def test_a_field_of_many_digits_is_shortened(tmp_path: Path) -> None:
    path = write(tmp_path, job_line(f12="9" * 100_000))
    with pytest.raises(SWFError) as err:
        load_swf(path, nodes=4)
    message = str(err.value)
    assert message.startswith(f"{path}:3: field 12 (user_id): '9999")
    assert "(100,000 characters)" in message
    assert len(message) < 300


# --------------------------------------------------------------------------------------------
# Floats: finite and in bounds; negative values have their meaning


def test_negative_floats_are_skipped_or_fall_back_as_negative_ints_are(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        job_line(f1=1, f4=-5.5),  # negative run time: skipped
        job_line(f1=2, f4=10.5, f9=-3.5),  # negative request: the estimate is the run time
        job_line(f1=3, f5=-2.0, f8=-2.0),  # no width: skipped
    )
    wl = load_swf(path, nodes=4)
    assert [(j.id, j.runtime, j.estimate) for j in wl.jobs] == [(2, 10, 10)]
    assert wl.skipped == {"width<=0": 1, "runtime<0": 1, "wider_than_machine": 0}


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "NaN", "1e999"])
def test_non_finite_floats_are_refused(tmp_path: Path, text: str) -> None:
    path = regular_with(tmp_path, job_line(f6=text))
    with pytest.raises(SWFError, match=r"t\.swf:8: field 6 \(average_cpu_time\): "):
        load_swf(path, nodes=4)


def test_bytes_that_are_not_utf8_are_shown_as_bytes(tmp_path: Path) -> None:
    path = tmp_path / "t.swf"
    path.write_bytes(HEADER.encode() + b"\xff\xfe " + job_line().split(" ", 1)[1].encode() + b"\n")
    with pytest.raises(SWFError) as err:
        load_swf(path, nodes=4)
    assert str(err.value) == (f"{path}:3: field 1 (job_number): not a finite number: '\\xff\\xfe'")


# --------------------------------------------------------------------------------------------
# The clock: UnixStartTime and every submit time added to it


@pytest.mark.parametrize("start", [-(10**12), 10**12, CLOCK_MAX + 1, -1])
def test_a_start_off_the_clock_names_the_header_line(tmp_path: Path, start: int) -> None:
    path = write(tmp_path, job_line(), header=f"; Version: 2.2\n\n; UnixStartTime: {start}\n")
    with pytest.raises(SWFError) as err:
        load_swf(path, nodes=4)
    assert str(err.value) == (
        f"{path}:3: header UnixStartTime: {start} is not a time the clock can run at: "
        "use years 1970 to 9899 (0 to 250246627199 seconds since the epoch)"
    )


def test_a_start_that_is_not_a_number_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, job_line(), header="; UnixStartTime: soon\n")
    with pytest.raises(SWFError, match=r"t\.swf:1: header UnixStartTime: 'soon' is not a whole"):
        load_swf(path, nodes=4)


def test_an_empty_start_counts_as_none(tmp_path: Path) -> None:
    path = write(tmp_path, job_line(), header="; UnixStartTime:\n")
    assert read_header(path).unix_start is None
    assert len(load_swf(path, nodes=4).jobs) == 1


@pytest.mark.parametrize(
    ("start", "submit"),
    [(0, CLOCK_MAX + 1), (0, -1), (1_000_000_000, CLOCK_MAX - 1_000_000_000 + 1)],
)
@pytest.mark.parametrize("tokens", ["", " nodes=1-2"])  # the table reader, the line reader
def test_a_submit_off_the_clock_names_its_line(
    tmp_path: Path, start: int, submit: int, tokens: str
) -> None:
    header = f"; UnixStartTime: {start}\n; MaxNodes: 4\n"
    lines = [job_line(f1=i + 1, f2=i) + tokens for i in range(5)]
    path = write(tmp_path, *lines, job_line(f1=6, f2=submit) + tokens, header=header)
    with pytest.raises(SWFError) as err:
        load_swf(path, nodes=4)
    message = str(err.value)
    assert message.startswith(f"{path}:8: field 2 (submit_time): {submit} (+ UnixStartTime")
    assert f"submit times may be from {-start} to {CLOCK_MAX - start} here" in message


def test_the_ends_of_the_clock_are_accepted(tmp_path: Path) -> None:
    header = "; UnixStartTime: 1000\n"
    path = write(
        tmp_path, job_line(f1=1, f2=-1000), job_line(f1=2, f2=CLOCK_MAX - 1000), header=header
    )
    assert [j.submit for j in load_swf(path, nodes=4).jobs] == [-1000, CLOCK_MAX - 1000]


def test_a_shrink_that_stretches_submits_off_the_clock_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, job_line(f1=1, f2=0), job_line(f1=2, f2=10**9))
    assert load_swf(path, nodes=4, shrink=100).jobs[1].submit == 10**11
    with pytest.raises(SWFError, match=r"t\.swf: --shrink 1000 puts the last submit time at"):
        load_swf(path, nodes=4, shrink=1000)


# --------------------------------------------------------------------------------------------
# Machine sizes in the header


@pytest.mark.parametrize("key", ["MaxNodes", "MaxProcs"])
def test_a_size_beyond_a_machine_names_the_header_line(tmp_path: Path, key: str) -> None:
    path = write(tmp_path, job_line(), header=f"; Version: 2.2\n; {key}: 300000000\n")
    header = read_header(path)
    with pytest.raises(SWFError) as err:
        _ = header.max_nodes if key == "MaxNodes" else header.max_procs
    assert str(err.value) == (
        f"{path}:2: header {key}: '300000000' is more than a machine may have "
        "(1 to 1,000,000): give the size another way (--nodes N)"
    )


@pytest.mark.parametrize(
    ("text", "size"),
    [("1000000", 1_000_000), ("-1", None), ("0", None), ("lots", None), ("", None)],
)
def test_sizes_within_a_machine_and_unknown_ones(
    tmp_path: Path, text: str, size: int | None
) -> None:
    path = write(tmp_path, job_line(), header=f"; MaxNodes: {text}\n")
    assert read_header(path).max_nodes == size


def test_a_garbage_header_is_kept_and_means_nothing(tmp_path: Path) -> None:
    path = tmp_path / "t.swf"
    garbage = b"; MaxNodes: \xff\xfe\n;;;; : :\n; ???\n;\x00\x01\n"
    path.write_bytes(garbage + job_line().encode() + b"\n")
    wl = load_swf(path, nodes=4)
    assert wl.header is not None and wl.header.max_nodes is None
    assert len(wl.header.lines) == 4
    assert len(wl.jobs) == 1
