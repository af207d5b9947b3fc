"""key=value tokens after the 18 SWF fields (Lee's utility paper's extension): read, kept, written back."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from batchd.cli import main
from batchd.model.utility import Utility
from batchd.workload import SWFError, iter_swf, iter_swf_tokens, load_swf, write_swf
from batchd.workload.double import double_jobs

LINE_A = "1 0 5 100 4 -1 -1 4 200 -1 1 3 1 -1 2 -1 -1 -1"
LINE_B = "2 10 -1 50 2 -1 -1 2 60 -1 1 4 1 -1 1 -1 -1 -1"
LINE_C = "3 20 -1 30 1 -1 -1 1 40 -1 1 5 1 -1 1 -1 -1 -1"
UTIL_A = "utility=0:1000,3600:800,7200.5:0"


def _trace(tmp_path: Path, text: str, name: str = "t.swf") -> Path:
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def _tokens_trace(tmp_path: Path, name: str = "t.swf") -> Path:
    text = (
        "; MaxNodes: 8\n"
        f"{LINE_A} {UTIL_A} site=north\n"
        f"{LINE_B}\n"
        f"{LINE_C} color=blue utility=0:5.25,10:0\n"
    )
    return _trace(tmp_path, text, name)


def test_readers_keep_tokens_and_the_18_fields_stay_the_fields(tmp_path: Path) -> None:
    path = _tokens_trace(tmp_path)
    got = list(iter_swf_tokens(path))
    assert [(n, toks) for n, _, toks in got] == [
        (2, (UTIL_A, "site=north")),
        (3, ()),
        (4, ("color=blue", "utility=0:5.25,10:0")),
    ]
    assert [rec for _, rec, _ in got] == [rec for _, rec in iter_swf(path)]
    assert got[0][1] == tuple(int(x) for x in LINE_A.split())
    # A plain reader of the 18 fields (here: the first 18 items of each line) reads the file.
    plain = [line.split()[:18] for line in path.read_text().splitlines()[1:]]
    assert [list(map(int, p)) for p in plain] == [list(rec) for _, rec, _ in got]


@pytest.mark.parametrize("name", ["t.swf", "t.swf.gz"])
def test_load_gives_jobs_their_utility_and_tokens(tmp_path: Path, name: str) -> None:
    wl = load_swf(_tokens_trace(tmp_path, name), nodes=8)
    by_id = {j.id: j for j in wl.jobs}
    assert by_id[1].utility == Utility([(0, 1000), (3600, 800), (7200.5, 0)])
    assert by_id[1].trace_tokens == (UTIL_A, "site=north")
    assert by_id[2].utility is None and by_id[2].trace_tokens == ()
    assert by_id[3].utility is not None and by_id[3].utility.value_at(5) == pytest.approx(2.625)
    # The same jobs as without tokens otherwise.
    plain = _trace(tmp_path, f"; MaxNodes: 8\n{LINE_A}\n{LINE_B}\n{LINE_C}\n", "plain.swf")
    other = load_swf(plain, nodes=8)
    key = [(j.id, j.submit, j.width, j.estimate, j.runtime) for j in other.jobs]
    assert [(j.id, j.submit, j.width, j.estimate, j.runtime) for j in wl.jobs] == key
    assert [j.trace.fields for j in wl.jobs if j.trace] == [
        j.trace.fields for j in other.jobs if j.trace
    ]


def test_writer_round_trips_tokens_in_their_order(tmp_path: Path) -> None:
    wl = load_swf(_tokens_trace(tmp_path), nodes=8)
    for j in wl.jobs:
        j.start, j.end, j.units = j.submit, j.submit + j.runtime, [0]
    out = tmp_path / "out.swf"
    write_swf(out, wl.header, wl.jobs)
    lines = [line for line in out.read_text().splitlines() if not line.startswith(";")]
    assert lines[0].endswith(f" -1 {UTIL_A} site=north")  # the text as read
    assert lines[1].endswith(" -1")  # no tokens: the 18 fields alone
    assert lines[2].endswith(" -1 color=blue utility=0:5.25,10:0")
    # The 18 fields stay right-aligned columns, whatever follows them.
    width = len(lines[1])
    assert all(len(line[:width].split()) == 18 and line[width] == " " for line in lines[::2])
    again = load_swf(out, nodes=8)
    assert [j.utility for j in again.jobs] == [j.utility for j in wl.jobs]
    assert [j.trace_tokens for j in again.jobs] == [j.trace_tokens for j in wl.jobs]


def test_writer_writes_a_changed_or_new_utility_in_seconds(tmp_path: Path) -> None:
    wl = load_swf(_tokens_trace(tmp_path), nodes=8)
    by_id = {j.id: j for j in wl.jobs}
    by_id[1].utility = Utility.parse("0:10,1h:0")
    by_id[2].utility = Utility.parse("0:3,90m:1.5,2h:0")
    by_id[3].utility = None
    out = tmp_path / "out.swf"
    write_swf(out, wl.header, wl.jobs)
    toks = [t for _, _, t in iter_swf_tokens(out)]
    assert toks == [
        ("utility=0:10,3600:0", "site=north"),
        ("utility=0:3,5400:1.5,7200:0",),
        ("color=blue",),
    ]


def test_doubling_copies_utility_and_tokens(tmp_path: Path) -> None:
    wl = load_swf(_tokens_trace(tmp_path), nodes=8)
    twice = double_jobs(wl.jobs)
    assert [j.trace_tokens for j in twice][:2] == [wl.jobs[0].trace_tokens] * 2
    assert twice[1].utility == wl.jobs[0].utility


def test_the_priority_class_token_and_its_copies(tmp_path: Path) -> None:
    text = f"; MaxNodes: 8\n{LINE_A} priority_class=3\n{LINE_B}\n{LINE_C} priority_class=0\n"
    wl = load_swf(_trace(tmp_path, text), nodes=8)
    assert [j.priority_class for j in wl.jobs] == [3, 0, 0]
    assert [j.priority for j in wl.jobs] == [0, 0, 0]  # the PBS priority is another thing
    assert [j.priority_class for j in double_jobs(wl.jobs)] == [3, 3, 0, 0, 0, 0]


@pytest.mark.parametrize(
    ("tail", "message"),
    [
        ("5", "t.swf:2: expected 18 fields, found 19: item 19 ('5') is not a key=value token"),
        ("=x", "t.swf:2: expected 18 fields, found 19: item 19 ('=x') is not a key=value"),
        ("a=1 a=2", "t.swf:2: token 'a' is given twice"),
        ("utility=0:5", "t.swf:2: token utility: a utility function needs at least two points"),
        ("utility=0:5,10:6", "t.swf:2: token utility: point 2 (10:6): values must never increase"),
        ("utility=0:5,1h:0", "t.swf:2: token utility: point 2 ('1h:0'): '1h' is not a time in"),
        ("utility=5:5,10:0", "t.swf:2: token utility: point 1 (5:5): the first time must be 0"),
        ("priority_class=-1", "t.swf:2: token priority_class: '-1' is not a priority class"),
        ("priority_class=high", "t.swf:2: token priority_class: 'high' is not a priority"),
    ],
)
def test_a_bad_token_names_its_line(tmp_path: Path, tail: str, message: str) -> None:
    path = _trace(tmp_path, f"; MaxNodes: 8\n{LINE_A} {tail}\n{LINE_B}\n")
    with pytest.raises(SWFError) as err:
        list(iter_swf(path))
    assert message in str(err.value)
    assert err.value.line_no == 2
    with pytest.raises(SWFError, match="t.swf:2: "):
        load_swf(path, nodes=8)


def test_replay_out_swf_round_trips_tokens(tmp_path: Path) -> None:
    out = tmp_path / "out.swf"
    trace = _tokens_trace(tmp_path)
    assert (
        main(["replay", str(trace), "--policy", "fcfs", "--nodes", "8", "--out-swf", str(out)]) == 0
    )
    toks = [t for _, _, t in iter_swf_tokens(out)]
    assert toks == [(UTIL_A, "site=north"), (), ("color=blue", "utility=0:5.25,10:0")]
