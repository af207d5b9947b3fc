"""Trace analyzer and job generator (batchd.workload.model_fit / generate)."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import numpy as np
import pytest

from batchd.workload.generate import (
    format_table3,
    generate_jobs,
    job_set_stats,
    write_generated_swf,
)
from batchd.workload.model_fit import analyze_trace, fit_weibull, from_operational, to_operational
from batchd.workload.trace_model import ModelFormatError, TraceModel, format_table2
from paths import TRACES

HOUR = 3600
WEEK = 168 * HOUR
# Header clock of the synthetic trace: submit 0 is Wednesday 13:00 local time.
UNIX_START = 1500 * WEEK + 61 * HOUR - 3600 - 3 * 86400
TZ = 3600
SUBMIT0_OF_WEEK = 61 * HOUR


def _true_rate(hour_of_week: np.ndarray) -> np.ndarray:
    """Busy weekdays 08-18, quiet nights, quieter weekends."""
    day, hour = np.divmod(hour_of_week, 24)
    weekday = np.where((hour >= 8) & (hour < 18), 2.0, 0.4)
    return np.where(day < 5, weekday, 0.3)


def _synthetic_submits(rng: np.random.Generator, n: int) -> np.ndarray:
    """Thinned Weibull renewal process with the weekly pattern above (local clock)."""
    accepted: list[np.ndarray] = []
    clock = 0.0
    while sum(a.size for a in accepted) < n:
        times = clock + np.cumsum(rng.weibull(0.7, 4 * n) * 150.0)
        clock = float(times[-1])
        hours = ((times + SUBMIT0_OF_WEEK) // HOUR).astype(np.int64) % 168
        keep = rng.random(times.size) < _true_rate(hours) / 2.0
        accepted.append(times[keep])
    return np.floor(np.concatenate(accepted)[:n]).astype(np.int64)


def _write_synthetic_trace(path: Path, n: int = 3000, seed: int = 5) -> None:
    rng = np.random.default_rng(seed)
    submit = _synthetic_submits(rng, n)
    width = rng.choice([1, 2, 3, 4, 8, 16, 32, 64], size=n, p=[0.3, 0.15, 0.05] + [0.1] * 5)
    estimate = rng.choice([300, 600, 1800, 3600, 7200, 14400, 43200], size=n)
    runtime = np.rint(estimate * rng.beta(0.8, 1.5, size=n)).astype(np.int64)
    over = rng.random(n) < 0.06
    runtime[over] = estimate[over] + rng.integers(1, 300, size=int(over.sum()))
    lines = [
        "; Version: 2.2",
        "; Computer: test machine",
        "; Acknowledge: nobody",
        f"; UnixStartTime: {UNIX_START}",
        f"; TimeZone: {TZ}",
        "; MaxNodes: 128 (test)",
        "; MaxProcs: 128",
    ]
    for i in range(n):
        fields = [i + 1, submit[i], 10, runtime[i], width[i], -1, -1, width[i], estimate[i]]
        fields += [-1, 1, 1, 1, -1, -1, -1, -1, -1]
        lines.append(" ".join(str(int(v)) for v in fields))
    lines.append(f"{n + 1} {submit[-1] + 5} 0 -1 -1 -1 -1 -1 600 -1 5 1 1 -1 -1 -1 -1 -1")
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("trace") / "synthetic.swf"
    _write_synthetic_trace(path)
    return path


@pytest.fixture(scope="module")
def model(trace_path: Path) -> TraceModel:
    return analyze_trace(trace_path)


def test_weibull_mle_recovers_parameters() -> None:
    rng = np.random.default_rng(42)
    alpha, beta = 0.6, 500.0
    x = rng.weibull(alpha, 50_000) * beta
    fit = fit_weibull(x)
    assert fit.alpha == pytest.approx(alpha, rel=0.05)
    assert fit.beta == pytest.approx(beta, rel=0.05)
    scipy_stats = pytest.importorskip("scipy.stats")
    c, _, scale = scipy_stats.weibull_min.fit(x, floc=0)
    assert fit.alpha == pytest.approx(c, rel=1e-3)
    assert fit.beta == pytest.approx(scale, rel=1e-3)
    mean_logpdf = scipy_stats.weibull_min.logpdf(x, fit.alpha, scale=fit.beta).mean()
    assert fit.likelihood == pytest.approx(math.exp(mean_logpdf), rel=1e-9)


def test_analyzer_reads_header_and_skips_cancelled(model: TraceModel, trace_path: Path) -> None:
    assert model.stats.records == 3001 and model.stats.jobs == 3000
    assert model.machine_nodes == 128 and model.stats.max_width == 64
    assert model.arrivals.unix_start == UNIX_START and model.arrivals.tz_offset_s == TZ
    rate = np.array(model.arrivals.weekly_rate).reshape(7, 24)
    assert rate.mean() == pytest.approx(1.0)
    assert rate[:5, 9:17].mean() > 3 * rate[:5, 0:6].mean()  # aligned with the local clock
    assert rate[:5, 9:17].mean() > 3 * rate[5:, :].mean()
    clock = np.linspace(0, 5 * WEEK, 2001)
    op = to_operational(clock, model.arrivals.weekly_rate)
    assert np.all(np.diff(op) > 0) and op[-1] == pytest.approx(5 * WEEK)
    assert from_operational(op, model.arrivals.weekly_rate) == pytest.approx(clock, abs=1e-6)
    assert model.provenance == ["Computer: test machine", "Acknowledge: nobody"]
    gz = trace_path.with_suffix(".swf.gz")
    gz.write_bytes(gzip.compress(trace_path.read_bytes()))
    assert analyze_trace(gz).shapes == model.shapes
    table = format_table2(model.stats)
    for row in ("number of jobs", "likelihood of interarrival time", "Weibull: alpha"):
        assert row in table


def _night_day_ratio(local_seconds: np.ndarray) -> float:
    hour = (local_seconds // HOUR) % 24
    return np.count_nonzero(hour < 6) / 6 / (np.count_nonzero((hour >= 9) & (hour < 17)) / 8)


def test_round_trip_statistics(model: TraceModel, trace_path: Path) -> None:
    jobs = generate_jobs(model, 10_000, seed=11)
    gen = job_set_stats(jobs, model.machine_nodes)
    ref = model.stats
    assert [j.id for j in jobs[:3]] == [1, 2, 3] and jobs[0].submit == 0
    assert gen["avg_width"] == pytest.approx(ref.avg_width, rel=0.10)
    assert gen["estimate_avg"] == pytest.approx(ref.estimate_avg, rel=0.15)
    assert gen["runtime_avg"] == pytest.approx(ref.runtime_avg, rel=0.15)
    assert abs(gen["overrun_pct"] - ref.overrun_pct) < 2.0
    assert gen["interarrival_avg"] == pytest.approx(ref.interarrival_avg, rel=0.15)
    trace = np.loadtxt(trace_path, comments=";", usecols=(1, 3))
    trace_submit = trace[trace[:, 1] >= 0, 0] + SUBMIT0_OF_WEEK  # local, from Monday 00:00
    gen_submit = np.array([j.submit for j in jobs], dtype=np.float64)  # 0 = Monday 00:00
    ratio_trace, ratio_gen = _night_day_ratio(trace_submit), _night_day_ratio(gen_submit)
    assert ratio_gen == pytest.approx(ratio_trace, rel=0.25)
    assert "average requested resources" in format_table3([gen])


def test_same_seed_same_bytes(model: TraceModel, tmp_path: Path) -> None:
    outputs = {}
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        for suffix in (".swf", ".swf.gz"):
            path = tmp_path / f"{name}{suffix}"
            write_generated_swf(path, generate_jobs(model, 500, seed=seed), model, seed)
            outputs[name + suffix] = path.read_bytes()
    assert outputs["a.swf"] == outputs["b.swf"] and outputs["a.swf.gz"] == outputs["b.swf.gz"]
    assert outputs["a.swf"] != outputs["c.swf"]
    text = outputs["a.swf"].decode()
    for line in ("; Computer: batchd synthetic job set", "; Generator: batchd generate"):
        assert line in text
    for line in ("; Model: synthetic.swf", "; Seed: 3", "; MaxNodes: 128", "; MaxJobs: 500"):
        assert line in text
    records = [line.split() for line in text.splitlines() if not line.startswith(";")]
    assert len(records) == 500 and all(len(r) == 18 for r in records)
    assert records[0][7] == records[0][4] and records[0][10] == "1" and records[0][2] == "-1"


def test_width_folding_keeps_area(model: TraceModel) -> None:
    plain = generate_jobs(model, 5000, seed=9)
    folded = generate_jobs(model, 5000, seed=9, max_width=16)
    assert max(j.width for j in folded) <= 16 < max(j.width for j in plain)
    for attr in ("runtime", "estimate"):
        before = sum(j.width * getattr(j, attr) for j in plain)
        after = sum(j.width * getattr(j, attr) for j in folded)
        assert after == pytest.approx(before, rel=0.01)
    overruns = [sum(j.runtime > j.estimate for j in s) for s in (plain, folded)]
    assert overruns[0] == overruns[1]


def test_model_json_round_trip_and_errors(model: TraceModel, tmp_path: Path) -> None:
    path = tmp_path / "model.json"
    model.save(path)
    assert TraceModel.load(path).to_json() == model.to_json()

    def broken(edit) -> str:
        data = json.loads(path.read_text())
        edit(data)
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(data))
        with pytest.raises(ModelFormatError) as info:
            TraceModel.load(bad)
        assert str(bad) in str(info.value)
        return str(info.value)

    assert "arrivals.alpha" in broken(lambda d: d["arrivals"].pop("alpha"))
    assert "arrivals.weekly_rate" in broken(lambda d: d["arrivals"]["weekly_rate"].pop())
    assert "stats.jobs" in broken(lambda d: d["stats"].update(jobs="many"))
    assert "shapes.samples" in broken(lambda d: d["shapes"]["samples"].pop())
    (tmp_path / "text.json").write_text("{not json")
    with pytest.raises(ModelFormatError, match="text.json"):
        TraceModel.load(tmp_path / "text.json")


def test_kth_table2_facts() -> None:
    path = TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"
    if not path.exists():
        pytest.skip(f"real traces not available at {TRACES}")
    stats = analyze_trace(path).stats
    # 28,476 records; one cancelled job (runtime -1) is skipped by the analyzer.
    assert stats.records == 28_476 and stats.jobs == 28_475
    assert stats.max_width == 100 and stats.machine_width == 100
    assert stats.avg_width == pytest.approx(7.7, abs=0.1)
    assert stats.estimate_avg == pytest.approx(13_677, rel=0.03)
    assert stats.runtime_avg == pytest.approx(8_876, rel=0.03)
    assert stats.interarrival_avg == pytest.approx(1_031, rel=0.05)
    assert stats.overrun_jobs == 475
