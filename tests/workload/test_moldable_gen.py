"""The moldable tokens in SWF, and ``batchd moldable``: properties and determinism."""

from __future__ import annotations

from pathlib import Path

import pytest

from batchd.cli import main
from batchd.metrics.moldable import moldable_summary, size_category, width_bin
from batchd.model.moldable import Speedup
from batchd.workload import SWFError, iter_swf_tokens, load_swf, write_swf
from batchd.workload.moldable_gen import MoldParams, augment_moldable, trace_load

RIGID = """; MaxNodes: 64
1 0 -1 100 8 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1
2 50 -1 40 -1 -1 -1 16 60 -1 1 2 1 -1 1 -1 -1 -1 utility=0:5,10:0
3 100 -1 10 128 -1 -1 128 60 -1 1 2 1 -1 1 -1 -1 -1
4 200 -1 20 2 -1 -1 -1 -1 -1 1 2 1 -1 1 -1 -1 -1
"""


def _write(tmp_path: Path, text: str, name: str = "t.swf") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_tokens_give_jobs_their_shape_and_round_trip(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        "; MaxNodes: 64\n"
        "1 0 -1 100 8 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1 nodes=4-32 speedup=downey:64:1.5\n"
        "2 5 -1 50 4 -1 -1 4 60 -1 1 1 1 -1 1 -1 -1 -1 speedup=fixed\n"
        "3 5 -1 50 4 -1 -1 4 60 -1 1 1 1 -1 1 -1 -1 -1 nodes=2-100\n",
    )
    jobs = load_swf(src, nodes=64).jobs
    one, two, three = jobs
    assert one.mold is not None and (one.mold.low, one.mold.high) == (4, 32)
    assert one.mold.speedup == Speedup("downey", 64, 1.5)
    assert (one.mold.width, one.mold.runtime, one.mold.estimate) == (8, 100, 200)
    assert two.mold is not None and (two.mold.low, two.mold.high) == (1, 64)  # the machine
    assert three.mold is not None and three.mold.high == 64  # cut to the machine
    assert three.mold.speedup.kind == "fixed"
    for job in jobs:  # as run on the requested widths: the same fields come back
        job.start, job.end = job.submit, job.submit + job.runtime
    out = tmp_path / "o.swf"
    write_swf(out, None, jobs)
    again = load_swf(out, nodes=64).jobs
    assert [j.mold for j in again] == [j.mold for j in jobs]


@pytest.mark.parametrize(
    ("tail", "message"),
    [
        ("nodes=8-4", "swf:2: .*token nodes.*below the minimum"),
        ("speedup=downey:0:1", "swf:2: .*token speedup.*at least 1"),
        ("speedup=amdahl", "swf:2: .*downey:A:SIGMA"),
        ("nodes=16-32", "swf:2: .*requested width 8 is outside the range 16-32"),
        ("nodes=100-200", "swf:2: .*wider than the machine"),
    ],
)
def test_a_bad_moldable_token_names_its_line(tmp_path: Path, tail: str, message: str) -> None:
    src = _write(
        tmp_path, f"; MaxNodes: 64\n1 0 -1 100 8 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1 {tail}\n"
    )
    with pytest.raises(SWFError, match=message):
        load_swf(src, nodes=64)


def test_replay_out_swf_writes_the_chosen_width_and_its_runtime(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        "; MaxNodes: 10\n"
        "1 0 -1 100 6 -1 -1 6 100 -1 1 1 1 -1 1 -1 -1 -1\n"
        "2 0 -1 100 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1 nodes=1-10 speedup=downey:10:0\n",
    )
    out = tmp_path / "o.swf"
    args = ["replay", str(src), "--nodes", "10", "--policy", "moldable-greedy"]
    assert main([*args, "--out-swf", str(out)]) == 0
    rows = {rec[0]: rec for _, rec, _ in iter_swf_tokens(out)}
    assert (rows[2][4], rows[2][3], rows[2][7]) == (4, 50, 2)  # chosen, its runtime, asked


def _gen(tmp_path: Path, name: str, **kw: object) -> Path:
    src = _write(tmp_path, RIGID)
    out = tmp_path / name
    augment_moldable(src, out, MoldParams(nodes=64, **kw))  # type: ignore[arg-type]
    return out


def test_system_a_and_the_default_range(tmp_path: Path) -> None:
    out = _gen(tmp_path, "s.swf", seed=3)
    lines = [line.split() for line in out.read_text().splitlines() if not line.startswith(";")]
    assert lines[0][18:] == ["nodes=1-64", lines[0][18 + 1]]
    assert lines[0][19].startswith("speedup=downey:64:")
    assert "utility=0:5,10:0" in lines[1]  # other tokens kept
    assert len(lines[2]) == 18  # wider than the system: rigid
    jobs = load_swf(out, nodes=64).jobs
    for job in jobs:
        assert job.mold is not None
        assert job.mold.speedup.a == 64 and 0 <= job.mold.speedup.sigma <= 2


def test_random_a_lies_between_one_and_two_times_the_width(tmp_path: Path) -> None:
    out = _gen(tmp_path, "r.swf", a="random", seed=9, low=4, high=32)
    for job in load_swf(out, nodes=64).jobs:
        assert job.mold is not None
        assert job.width <= job.mold.speedup.a <= 2 * job.width
        assert job.mold.low == min(4, job.width) and job.mold.high == 32


def test_same_seed_same_bytes_and_another_seed_other_draws(tmp_path: Path) -> None:
    a = _gen(tmp_path, "a.swf", a="random", seed=5).read_bytes()
    b = _gen(tmp_path, "b.swf", a="random", seed=5).read_bytes()
    c = _gen(tmp_path, "c.swf", a="random", seed=6).read_bytes()
    assert a == b != c


def test_load_scales_runtimes_and_estimates(tmp_path: Path) -> None:
    src = _write(tmp_path, RIGID)
    # Jobs that fit: 8x100 + 16x40 + 2x20 = 1480 node-seconds over 64 x 200.
    assert trace_load(src, 64) == pytest.approx(1480 / 12800)
    out = tmp_path / "l.swf"
    stats = augment_moldable(src, out, MoldParams(nodes=64, load=0.2315, seed=1))
    factor = 0.2315 / (1480 / 12800)
    assert stats.factor == pytest.approx(factor)
    rows = [rec for _, rec, _ in iter_swf_tokens(out)]
    assert [r[3] for r in rows] == [round(100 * factor), round(40 * factor), 20, 40]
    assert [r[1] for r in rows] == [0, 50, 100, 200]  # submits untouched
    assert stats.offered == pytest.approx(0.2315, abs=0.002)
    assert 0 < stats.effective <= stats.offered


def test_the_command_reports_and_refuses_a_bad_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _write(tmp_path, RIGID)
    out = tmp_path / "o.swf"
    assert main(["moldable", str(src), "-o", str(out), "--a", "random", "--load", "0.3"]) == 0
    assert "effective load" in capsys.readouterr().out
    assert main(["moldable", str(src), "-o", str(out), "--range", "8-4"]) != 0
    assert "below the minimum" in capsys.readouterr().err


def test_size_categories_and_width_bins() -> None:
    from batchd.model.job import Job

    assert [
        size_category(Job(1, 0, w, 1, r))
        for w, r in [(1, 199), (1, 200), (32, 100), (1, 10**5), (2, 10**6)]
    ] == [
        "<200",
        "200-3200",
        "3200-100000",
        "100000-2000000",
        ">2000000",
    ]
    assert [width_bin(w) for w in (1, 2, 3, 4, 5, 8, 9, 512)] == [
        "1",
        "2",
        "3-4",
        "3-4",
        "5-8",
        "5-8",
        "9-16",
        "257-512",
    ]


def test_the_summary_by_hand(tmp_path: Path) -> None:
    from batchd.model.job import Job
    from batchd.model.moldable import Moldable

    mold = Moldable(1, 10, Speedup("downey", 10, 0), 2, 100, 100)
    a = Job(1, 0, 4, 50, 50, mold=mold)
    a.start, a.end = 0, 50
    b = Job(2, 0, 6, 100, 100)
    b.start, b.end = 0, 100
    out = moldable_summary([a, b], 10)
    assert out is not None
    assert out["turnaround"] == 75
    assert out["utilization"] == pytest.approx((200 + 600) / 1000)
    assert out["effective_utilization"] == pytest.approx((50 * 4 + 600) / 1000)
    assert out["turnaround_by_size"]["3200-100000"] == {"jobs": 0, "turnaround": None}
    assert out["turnaround_by_size"]["200-3200"] == {"jobs": 2, "turnaround": 75}
    assert out["widths"]["wider"] == 1 and out["widths"]["mean_ratio"] == 2
