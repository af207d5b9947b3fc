"""Synthetic utility functions for a trace (Lee's utility paper, sec. 4): start values by priority bin,
the deadline rule, the three decay shapes, the queue map, and determinism."""

from __future__ import annotations

import random
import statistics
from pathlib import Path

import pytest

from batchd.cli import main
from batchd.model.utility import Utility
from batchd.workload import iter_swf_tokens, load_swf
from batchd.workload.utility_gen import (
    SDSC_BLUE_MAP,
    UtilityParams,
    augment_trace,
    load_queue_map,
    make_utility,
)

TRACE_DIR = Path(__file__).resolve().parents[3] / "shared" / "traces"


def _line(jid: int, wait: int, procs: int, req: int, queue: int, tail: str = "") -> str:
    fields = [
        jid,
        jid * 10,
        wait,
        100,
        procs,
        -1,
        -1,
        procs,
        req,
        -1,
        1,
        1,
        1,
        -1,
        queue,
        -1,
        -1,
        -1,
    ]
    return " ".join(map(str, fields)) + tail


def _trace(tmp_path: Path, n: int = 300) -> Path:
    lines = ["; Installation: SDSC Blue Horizon", "; MaxNodes: 144"]
    lines += [
        _line(i, (i * 37) % 5000 - 1, 1 + i % 8, 60 * (1 + i % 5), i % 7) for i in range(1, n)
    ]
    lines.append(_line(n, 3, 2, 120, 1, " site=north utility=0:1,5:0"))
    path = tmp_path / "t.swf"
    path.write_text("\n".join(lines) + "\n")
    return path


def _one(
    decay_weights: tuple[float, float, float], wait: int, seed: int = 3, **kw: float
) -> tuple[Utility, str, float]:
    params = UtilityParams(weights=decay_weights, seed=seed, **kw)  # type: ignore[arg-type]
    return make_utility(random.Random(seed), params, 1, 4, 8, 600, wait)


def test_start_values_centre_on_the_priority_bin() -> None:
    params = UtilityParams(globmax=8.0, sigma=0.5)
    rng = random.Random(1)
    for prio in range(4):
        # 1 processor x 60 s = one processor-minute: the start value is the drawn value.
        starts = [make_utility(rng, params, prio, 4, 1, 60, 0)[2] for _ in range(4000)]
        # Bins of width 2: the centres are 1, 3, 5, 7.
        assert statistics.mean(starts) == pytest.approx(2 * prio + 1, abs=0.05)
        assert statistics.stdev(starts) == pytest.approx(0.5, abs=0.05)
    # Scaled by processors x requested minutes: 8 x 10 = 80 processor-minutes.
    fixed = UtilityParams(globmax=8.0, sigma=0.0)
    assert make_utility(random.Random(0), fixed, 2, 4, 8, 600, 0)[2] == 5 * 80


def test_value_order_priority_puts_the_highest_priority_on_the_top_bin() -> None:
    # The same draws, the bins mirrored: priority p on bin N - 1 - p (centres 7, 5, 3, 1).
    formula = UtilityParams(globmax=8.0, sigma=0.0, seed=4)
    mirrored = UtilityParams(globmax=8.0, sigma=0.0, seed=4, value_order="priority")
    for prio in range(4):
        low = make_utility(random.Random(9), formula, prio, 4, 1, 60, 100)
        high = make_utility(random.Random(9), mirrored, prio, 4, 1, 60, 100)
        assert low[2] == 2 * prio + 1 and high[2] == 7 - 2 * prio
        assert low[1] == high[1]  # the decay type drawn first, as before
        assert [t for t, _ in low[0].points] == [t for t, _ in high[0].points]
    with pytest.raises(ValueError, match="value order must be one of formula, priority"):
        UtilityParams(value_order="queue")


def test_deadline_is_twice_the_wait_or_ten_seconds() -> None:
    for weights in ((1, 0, 0), (0, 1, 0), (0, 0, 1)):
        assert _one(weights, wait=1000)[0].deadline == 2000
        assert _one(weights, wait=3)[0].deadline == 10
        assert _one(weights, wait=-1)[0].deadline == 10
        assert _one(weights, wait=1000, deadline_factor=3)[0].deadline == 3000
        assert _one(weights, wait=333, deadline_factor=1.5)[0].deadline == 500  # 499.5 up


def test_deadline_from_start_moves_the_function_later_by_the_runtime() -> None:
    """A job that runs longer than its deadline earns nothing from submit; counted from
    its start, it earns at its response time what its wait alone would give."""
    for weights in ((1, 0, 0), (0, 1, 0), (0, 0, 1)):
        params = UtilityParams(weights=weights, seed=5)
        moved = UtilityParams(weights=weights, seed=5, deadline_from="start")
        runtime = 3600  # far beyond the deadline of 2 x 100 s
        plain, kind, start = make_utility(random.Random(5), params, 1, 4, 8, 600, 100, runtime)
        later, kind2, start2 = make_utility(random.Random(5), moved, 1, 4, 8, 600, 100, runtime)
        assert (kind, start) == (kind2, start2)  # the same draws
        assert plain.deadline == 200 and later.deadline == 200 + runtime
        assert plain.value_at(runtime) == 0 and later.value_at(runtime) == start
        for wait in (0, 1, 50, 99.5, 150, 199, 200, 500):
            assert later.value_at(wait + runtime) == pytest.approx(plain.value_at(wait))
    # Without a known runtime (-1) or with none, nothing moves.
    zero = UtilityParams(seed=5, deadline_from="start")
    for runtime in (0, -1):
        same = make_utility(random.Random(5), zero, 1, 4, 8, 600, 100, runtime)[0]
        assert (
            same.points
            == make_utility(random.Random(5), UtilityParams(seed=5), 1, 4, 8, 600, 100)[0].points
        )
    with pytest.raises(ValueError, match="deadline from must be one of submit, start"):
        UtilityParams(deadline_from="end")


def test_decay_shapes() -> None:
    for seed in range(50):
        lin, kind, start = _one((1, 0, 0), wait=500, seed=seed, points=5)
        assert kind == "expected-linear"
        assert len(lin.points) == 7 and lin.points[0] == (0, start) and lin.points[-1] == (1000, 0)
        assert all(float(t).is_integer() for t, _ in lin.points)
        exp, kind, _ = _one((0, 1, 0), wait=500, seed=seed, points=5)
        assert kind == "expected-exponential" and len(exp.points) == 7
        step, kind, start = _one((0, 0, 1), wait=500, seed=seed)
        assert kind == "step"
        (t0, v0), (t1, v1), (t2, v2), (t3, v3), (t4, v4) = step.points
        assert (t0, v0, v1) == (0, start, start) and t2 == t1 + 1 and v2 == v3
        assert (t3, t4, v4) == (999, 1000, 0)

    # Exponential: each value drawn below the last, so on average the first drop is the
    # largest; linear: values uniform in [0, start], so the first drop is smaller.
    def first_drop(weights: tuple[float, float, float]) -> float:
        drops = []
        for seed in range(400):
            u, _, start = _one(weights, wait=500, seed=seed, points=4)
            if start > 0:  # a draw below 0 is a start value of 0
                drops.append((start - u.points[1][1]) / start)
        return statistics.mean(drops)

    assert first_drop((0, 1, 0)) == pytest.approx(0.5, abs=0.06)
    assert first_drop((1, 0, 0)) == pytest.approx(0.2, abs=0.06)  # 1 - E[max of 4]


def test_few_seconds_give_fewer_points() -> None:
    u, _, _ = _one((1, 0, 0), wait=0, points=20)  # deadline 10: times 1..9 only
    assert len(u.points) == 11


def test_trace_augmented_every_job_valid_and_same_bytes_for_a_seed(tmp_path: Path) -> None:
    src = _trace(tmp_path)
    params = UtilityParams(seed=7)
    a, b, c = tmp_path / "a.swf", tmp_path / "b.swf", tmp_path / "c.swf"
    stats = augment_trace(src, a, params, SDSC_BLUE_MAP)
    augment_trace(src, b, params, SDSC_BLUE_MAP)
    augment_trace(src, c, UtilityParams(seed=8), SDSC_BLUE_MAP)
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()
    assert stats.jobs == 300 and sum(stats.by_decay.values()) == 300
    assert all(90 <= v <= 110 for v in stats.by_decay.values())  # a third each
    # Queue 6 is not in the map: those jobs take the lowest priority, 5.
    assert stats.unmapped == sum(1 for i in range(1, 300) if i % 7 == 6)
    rows = list(iter_swf_tokens(a))
    assert [r for _, r, _ in rows] == [r for _, r, _ in iter_swf_tokens(src)]
    last = rows[-1][2]
    # The old utility token is replaced, other tokens kept after the new ones.
    assert last[0].startswith("utility=") and last[0] != "utility=0:1,5:0"
    # Job 300 is in queue 1: priority class 1, the token prio-fifo ranks it by.
    assert last[1:] == ("utility_decay=" + last[1].split("=")[1], "priority_class=1", "site=north")
    jobs = load_swf(a, nodes=144).jobs
    assert all(j.utility is not None for j in jobs)
    # Queues 0-5 map to classes 0-5; queue 6 is not in the map and takes the lowest, 5.
    assert [j.priority_class for j in jobs[:8]] == [1, 2, 3, 4, 5, 5, 0, 1]
    src_lines = [x for x in src.read_text().splitlines() if not x.startswith(";")]
    out_lines = [x for x in a.read_text().splitlines() if not x.startswith(";")]
    assert all(
        o.startswith(s + " utility=") for s, o in zip(src_lines[:-1], out_lines, strict=False)
    )


def test_weights_choose_the_decay_types(tmp_path: Path) -> None:
    stats = augment_trace(
        _trace(tmp_path), tmp_path / "o.swf", UtilityParams(weights=(0, 0, 1)), {1: 0, 2: 1}
    )
    assert stats.by_decay == {"expected-linear": 0, "expected-exponential": 0, "step": 300}


def test_map_file(tmp_path: Path) -> None:
    good = tmp_path / "map.txt"
    good.write_text("# queue priority\n1 0\n2 1  # high\n3 1\n")
    assert load_queue_map(good) == {1: 0, 2: 1, 3: 1}
    for text, says in [
        ("1 0\n2 2\n", "no queue has 1"),
        ("1 0\n1 1\n", ":2: queue 1 is mapped twice"),
        ("1 x\n", ":1: expected QUEUE PRIORITY"),
        ("", "the queue map is empty"),
    ]:
        good.write_text(text)
        with pytest.raises(ValueError, match=says):
            load_queue_map(good)


def test_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _trace(tmp_path)
    out = tmp_path / "out.swf"
    assert main(["utility", str(src), "-o", str(out), "--seed", "4", "--weights", "1,1,0"]) == 0
    said = capsys.readouterr().out
    assert "300 jobs with a utility function" in said and "step 0" in said
    header = [x for x in out.read_text().splitlines() if x.startswith(";")]
    assert any("built-in SDSC Blue Horizon queue map" in x for x in header)
    assert not any("highest values to the highest priority" in x for x in header)
    mirrored = tmp_path / "mirrored.swf"
    argv = ["utility", str(src), "-o", str(mirrored), "--seed", "4", "--weights", "1,1,0"]
    assert main([*argv, "--value-order", "priority"]) == 0
    capsys.readouterr()
    assert "highest values to the highest priority" in mirrored.read_text()
    assert mirrored.read_text() != out.read_text()
    from_start = tmp_path / "from-start.swf"
    moved = ["utility", str(src), "-o", str(from_start), "--seed", "4", "--weights", "1,1,0"]
    assert main([*moved, "--deadline-from", "start"]) == 0
    capsys.readouterr()
    assert "decay and deadline from the job's start" in from_start_text(from_start, out)
    with pytest.raises(SystemExit):
        main([*moved, "--deadline-from", "end"])
    assert "--deadline-from: invalid choice: 'end'" in capsys.readouterr().err
    plain = tmp_path / "plain.swf"
    plain.write_text(_line(1, 5, 1, 60, 0) + "\n")
    assert main(["utility", str(plain), "-o", str(out)]) != 0
    assert "give --map FILE" in capsys.readouterr().err
    qmap = tmp_path / "m.txt"
    qmap.write_text("0 0\n")
    assert main(["utility", str(plain), "-o", str(out), "--map", str(qmap)]) == 0


def from_start_text(from_start: Path, submit: Path) -> str:
    """The file written with --deadline-from start: every job's function moved by its
    runtime (100 s in ``_line``), the rest as with the default."""
    moved, plain = load_swf(from_start, nodes=144).jobs, load_swf(submit, nodes=144).jobs
    assert len(moved) == len(plain) == 300
    for a, b in zip(moved, plain, strict=True):
        assert a.utility is not None and b.utility is not None
        assert a.utility.deadline == b.utility.deadline + 100
    return from_start.read_text()


@pytest.mark.skipif(not TRACE_DIR.is_dir(), reason="../shared/traces is absent")
def test_sdsc_blue_header_selects_the_built_in_map(tmp_path: Path) -> None:
    trace = TRACE_DIR / "SDSC-BLUE-2000-4.2-cln.swf.gz"
    out = tmp_path / "blue.swf"
    assert main(["utility", str(trace), "-o", str(out), "--seed", "1"]) == 0
    jobs = load_swf(out, nodes=1152, first=500).jobs
    assert all(j.utility is not None for j in jobs)
