"""Trace analyzer: fit a job-generation model to an SWF trace (paper sec. 4).

``analyze_trace`` reads a Standard Workload Format log and returns a
:class:`TraceModel` that :mod:`batchd.workload.generate` draws synthetic job
sets from. The model has three parts:

* **Arrivals.** Submit times are sorted; consecutive differences are the
  inter-arrival times. A Weibull distribution (shape ``alpha``, scale ``beta``)
  is fitted by maximum likelihood. Inter-arrivals of 0 s exist (jobs submitted
  in the same second), where the Weibull log-density diverges, so every fit is
  made on ``max(x, 1 s)`` (``INTERARRIVAL_FLOOR_S``). The reported
  "likelihood of interarrival time" (paper Table 2) is the geometric-mean
  likelihood ``exp(mean log f(x_i))`` of that fit.

  The daily and weekly cycle is kept as ``weekly_rate``: the arrival rate in
  each of the 168 hours of the week (index 0 = Monday 00:00-01:00 local time)
  divided by the mean rate, so the values average to 1. Hours are aligned with
  the header's ``; UnixStartTime:`` plus ``; TimeZone:`` (seconds added to UTC;
  daylight saving time is ignored); without them submit time 0 is taken as
  Monday 00:00. The generator draws Weibull inter-arrivals in *operational
  time* ``L(t) = integral of weekly_rate`` and maps them back to clock time,
  so busy hours receive proportionally more jobs. For that reason a second
  Weibull is fitted to the trace's inter-arrivals measured in operational time
  (``ArrivalModel.alpha``/``beta``); Table 2 reports the fit to the plain
  clock-time inter-arrivals (``TraceStats.alpha``/``beta``), as the paper does.

* **Job shapes.** The joint distribution of (width, estimate, actual runtime)
  is a sparse 3-D probability matrix. Width bins are powers of two
  (1, 2, 3-4, 5-8, ...: bin ``ceil(log2 w)``); runtime bins (shared by estimate
  and runtime) are bin 0 for ``t < 1 s`` plus ``time_bins`` logarithmic bins
  from 1 s to the trace maximum. Each occupied cell keeps up to
  ``max_samples`` exact (width, estimate, runtime) triples of its jobs, which
  the generator draws from, so round user estimates such as 3600 s and jobs
  that overrun their estimate survive in generated sets. A cell with more
  jobs keeps a systematic sample: its jobs sorted by (runtime > estimate,
  estimate, runtime, width), every ``count/max_samples``-th one from a random
  start (seeded RNG). That is a random subset which, unlike a plain reservoir
  sample, keeps the cell's share of overrunning jobs and of each round
  estimate to within ``1/max_samples``.

* **Statistics.** :class:`TraceStats` holds the rows of paper Table 2;
  :func:`format_table2` prints them.

Width is SWF field 8 (requested processors) if > 0, else field 5 (allocated);
the estimate is field 9 (requested time) if > 0, else the runtime (field 4).
Jobs with width <= 0 or runtime < 0 (cancelled before they started) are
skipped.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from batchd.workload.loader import load_swf
from batchd.workload.trace_model import (
    DEFAULT_MAX_SAMPLES,
    DEFAULT_TIME_BINS,
    HOUR_S,
    HOURS_PER_WEEK,
    INTERARRIVAL_FLOOR_S,
    MONDAY_SHIFT_S,
    PROVENANCE_KEYS,
    RATE_FLOOR,
    WEEK_S,
    ArrivalModel,
    ShapeMatrix,
    TraceModel,
    TraceStats,
    WeibullFit,
)

# --------------------------------------------------------------------------- SWF reading


@dataclass(slots=True)
class _Trace:
    header_lines: list[str]
    records: int
    submit: np.ndarray  # int64, sorted
    width: np.ndarray
    estimate: np.ndarray
    runtime: np.ndarray


def _load_trace(path: Path) -> _Trace:
    """The trace's jobs under the replay's rules (width, estimate and skips: ``load_swf``).

    The analyzer keeps jobs of any width; the machine is chosen later.
    """
    workload = load_swf(path, nodes=sys.maxsize)
    jobs = workload.jobs

    def col(attr: str) -> np.ndarray:
        return np.fromiter((getattr(j, attr) for j in jobs), dtype=np.int64, count=len(jobs))

    header = [line[1:] for line in workload.header.lines] if workload.header else []
    records = len(jobs) + sum(workload.skipped.values())
    return _Trace(header, records, col("submit"), col("width"), col("estimate"), col("runtime"))


_KEY_RE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]*)\s*:(?!//)\s*(.*?)\s*$")


def parse_header(lines: Sequence[str]) -> dict[str, str]:
    """``Key: value`` pairs of SWF header lines (text after ';'); first occurrence wins."""
    out: dict[str, str] = {}
    for line in lines:
        match = _KEY_RE.match(line)
        if match:
            out.setdefault(match.group(1), match.group(2))
    return out


def _leading_int(value: str | None) -> int | None:
    match = re.match(r"\s*(-?\d+)", value or "")
    return int(match.group(1)) if match else None


def _provenance(lines: Sequence[str]) -> list[str]:
    """Header lines naming the source and its terms (acknowledgement, copyright, ...)."""
    out: list[str] = []
    keep = False
    for line in lines:
        match = _KEY_RE.match(line)
        if match:
            keep = match.group(1) in PROVENANCE_KEYS
        elif not line.strip():
            keep = False
        if keep:
            out.append(line.strip())
    return out


# --------------------------------------------------------------------------- Weibull MLE


def fit_weibull(samples: Any, *, floor: float = 0.0, tol: float = 1e-10) -> WeibullFit:
    """Maximum-likelihood Weibull fit (location 0) by Newton iteration on the shape.

    Values below ``floor`` are raised to it first (use ``floor=1`` for
    inter-arrival times that contain zeros). Solves the profile equation
    ``sum(x^k ln x)/sum(x^k) - 1/k - mean(ln x) = 0`` for the shape ``k``,
    safeguarded by bisection; then ``beta = mean(x^k)^(1/k)``.
    """
    x = np.maximum(np.asarray(samples, dtype=np.float64).ravel(), floor)
    if x.size < 2 or np.any(x <= 0) or not np.all(np.isfinite(x)):
        raise ValueError("Weibull fit needs at least two positive finite values")
    logx = np.log(x)
    centred = logx - logx.mean()
    if np.ptp(centred) == 0:
        raise ValueError("Weibull fit needs values that are not all equal")
    k = _solve_shape(centred, tol)
    z = k * centred
    zmax = z.max()
    log_beta = logx.mean() + (zmax + math.log(np.mean(np.exp(z - zmax)))) / k
    beta = math.exp(log_beta)
    loglik = math.log(k) - log_beta + (k - 1.0) * (logx.mean() - log_beta)
    loglik -= float(np.mean(np.exp(k * (logx - log_beta))))
    return WeibullFit(alpha=k, beta=beta, loglik_per_obs=loglik)


def _shape_equation(k: float, y: np.ndarray) -> tuple[float, float]:
    """g(k) and g'(k) of the profile equation for centred log data ``y``."""
    z = k * y
    w = np.exp(z - z.max())
    w /= w.sum()
    m1 = float(w @ y)
    m2 = float(w @ (y * y))
    return m1 - 1.0 / k, (m2 - m1 * m1) + 1.0 / (k * k)


def _solve_shape(y: np.ndarray, tol: float) -> float:
    lo, hi, k = 0.0, math.inf, 1.0
    for _ in range(200):
        g, dg = _shape_equation(k, y)
        if g > 0:
            hi = k
        else:
            lo = k
        step = k - g / dg
        if not lo < step < hi:  # Newton left the bracket: bisect (or expand)
            step = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * k
        if abs(step - k) <= tol * k:
            return step
        k = step
    raise RuntimeError("Weibull shape iteration did not converge")


# --------------------------------------------------------------------------- weekly pattern


def _aligned(submit: np.ndarray, unix_start: int | None, tz_offset: int) -> np.ndarray:
    """Seconds since a Monday 00:00 local time (any Monday)."""
    if unix_start is None:
        return submit.astype(np.float64)
    return (submit + unix_start + tz_offset + MONDAY_SHIFT_S).astype(np.float64)


def weekly_rate(aligned: np.ndarray) -> np.ndarray:
    """Arrival rate per hour of week (168 bins) divided by the mean rate.

    Each bin's count is divided by how often that hour of week occurs in the
    trace's span, so partial weeks at the ends do not bias it.
    """
    hours = np.floor(aligned / HOUR_S).astype(np.int64)
    counts = np.bincount(hours % HOURS_PER_WEEK, minlength=HOURS_PER_WEEK)
    span = np.arange(hours.min(), hours.max() + 1) % HOURS_PER_WEEK
    exposure = np.bincount(span, minlength=HOURS_PER_WEEK)
    rate = np.divide(counts, exposure, out=np.zeros(HOURS_PER_WEEK), where=exposure > 0)
    rate[exposure == 0] = counts.sum() / max(exposure.sum(), 1)  # trace shorter than a week
    rate = np.maximum(rate / rate.mean(), RATE_FLOOR)
    normalised: np.ndarray = rate / rate.mean()
    return normalised


def _knots(rate: Sequence[float] | np.ndarray) -> np.ndarray:
    r = np.asarray(rate, dtype=np.float64)
    r = np.maximum(r / r.mean(), RATE_FLOOR)
    knots = np.concatenate(([0.0], np.cumsum(r))) * HOUR_S
    scaled: np.ndarray = knots * (WEEK_S / knots[-1])
    return scaled


def to_operational(aligned: np.ndarray, rate: Sequence[float] | np.ndarray) -> np.ndarray:
    """Clock time (aligned to Monday 00:00) -> operational time ``L(t)``."""
    knots = _knots(rate)
    week, within = np.divmod(np.asarray(aligned, dtype=np.float64), WEEK_S)
    hour = np.minimum((within // HOUR_S).astype(np.int64), HOURS_PER_WEEK - 1)
    slope = np.diff(knots) / HOUR_S
    op: np.ndarray = week * WEEK_S + knots[hour] + slope[hour] * (within - hour * HOUR_S)
    return op


def from_operational(op: np.ndarray, rate: Sequence[float] | np.ndarray) -> np.ndarray:
    """Inverse of :func:`to_operational`."""
    knots = _knots(rate)
    week, within = np.divmod(np.asarray(op, dtype=np.float64), WEEK_S)
    clock = np.arange(HOURS_PER_WEEK + 1, dtype=np.float64) * HOUR_S
    return week * WEEK_S + np.interp(within, knots, clock)


def _fit_arrivals(trace: _Trace, header: Mapping[str, str]) -> ArrivalModel:
    unix_start = _leading_int(header.get("UnixStartTime"))
    tz = (_leading_int(header.get("TimeZone")) or 0) if unix_start is not None else 0
    aligned = _aligned(trace.submit, unix_start, tz)
    rate = weekly_rate(aligned)
    gaps = np.diff(to_operational(aligned, rate))
    fit = fit_weibull(gaps, floor=INTERARRIVAL_FLOOR_S)
    return ArrivalModel(
        alpha=fit.alpha,
        beta=fit.beta,
        loglik_per_job=fit.loglik_per_obs,
        mean_interarrival=max(float(gaps.mean()), 1e-9),
        weekly_rate=[float(v) for v in rate],
        unix_start=unix_start,
        tz_offset_s=tz,
    )


# --------------------------------------------------------------------------- shape matrix


def width_bin(width: np.ndarray) -> np.ndarray:
    """Power-of-two width bins: 1 -> 0, 2 -> 1, 3-4 -> 2, 5-8 -> 3, ..."""
    return np.frexp(np.asarray(width, dtype=np.float64) - 1.0)[1].astype(np.int64)


def time_edges(t_max: float, bins: int = DEFAULT_TIME_BINS) -> np.ndarray:
    """Edges of the runtime bins: bin 0 is [0, 1 s), then ``bins`` log bins to ``t_max``."""
    return np.geomspace(1.0, max(float(t_max), 1.0) + 1.0, bins + 1)


def time_bin(t: np.ndarray, edges: Sequence[float] | np.ndarray) -> np.ndarray:
    return np.searchsorted(np.asarray(edges), t, side="right").astype(np.int64)


def _fit_shapes(trace: _Trace, bins: int, max_samples: int, seed: int) -> ShapeMatrix:
    edges = time_edges(max(trace.estimate.max(), trace.runtime.max()), bins)
    nt = bins + 2
    wb = width_bin(trace.width)
    eb = time_bin(trace.estimate, edges)
    ab = time_bin(trace.runtime, edges)
    cell = (wb * nt + eb) * nt + ab
    rng = np.random.default_rng(seed)
    overrun = trace.runtime > trace.estimate
    keys = (rng.random(cell.size), trace.width, trace.runtime, trace.estimate, overrun, cell)
    order = np.lexsort(keys)  # by cell, then overrun flag, estimate, runtime, width
    ids, first, counts = np.unique(cell[order], return_index=True, return_counts=True)
    offsets = rng.random(ids.size)
    n = cell.size
    matrix: list[tuple[int, int, int, float]] = []
    samples: list[list[tuple[int, int, int]]] = []
    cells = zip(ids.tolist(), first.tolist(), counts.tolist(), offsets.tolist(), strict=True)
    for cid, start, count, offset in cells:
        rest, a = divmod(cid, nt)
        w, e = divmod(rest, nt)
        matrix.append((w, e, a, count / n))
        pick = order[start + _systematic(count, max_samples, offset)]
        samples.append(_triples(trace, pick))
    return ShapeMatrix(
        time_edges=[float(v) for v in edges],
        matrix=matrix,
        samples=samples,
        overrun_fraction=float(overrun.mean()),
        max_samples=max_samples,
        sample_seed=seed,
    )


def _systematic(count: int, k: int, offset: float) -> np.ndarray:
    """Positions of a systematic sample of ``k`` out of ``count`` sorted items."""
    if count <= k:
        return np.arange(count)
    return ((np.arange(k) + offset) * (count / k)).astype(np.int64)


def _triples(trace: _Trace, idx: np.ndarray) -> list[tuple[int, int, int]]:
    cols = (trace.width[idx].tolist(), trace.estimate[idx].tolist(), trace.runtime[idx].tolist())
    return list(zip(*cols, strict=True))


# --------------------------------------------------------------------------- statistics


def basic_stats(
    submit: np.ndarray,
    width: np.ndarray,
    estimate: np.ndarray,
    runtime: np.ndarray,
    machine_width: int,
) -> dict[str, Any]:
    """The Table 2/3 rows shared by traces and generated job sets."""
    gaps = np.diff(np.sort(submit)) if submit.size > 1 else np.zeros(1)
    overrun = int(np.count_nonzero(runtime > estimate))
    return {
        "jobs": int(width.size),
        "max_width": int(width.max()),
        "machine_width": int(machine_width),
        "avg_width": float(width.mean()),
        "estimate_avg": float(estimate.mean()),
        "estimate_min": float(estimate.min()),
        "estimate_max": float(estimate.max()),
        "runtime_avg": float(runtime.mean()),
        "runtime_min": float(runtime.min()),
        "runtime_max": float(runtime.max()),
        "overrun_jobs": overrun,
        "overrun_pct": 100.0 * overrun / width.size,
        "interarrival_avg": float(gaps.mean()),
        "interarrival_min": float(gaps.min()),
        "interarrival_max": float(gaps.max()),
    }


def _machine_width(header: Mapping[str, str], trace: _Trace, given: int | None) -> int:
    if given is not None:
        if given < 1:
            raise ValueError(f"machine_nodes must be >= 1, got {given}")
        return given
    for key in ("MaxNodes", "MaxProcs"):
        value = _leading_int(header.get(key))
        if value is not None and value > 0:
            return value
    return int(trace.width.max())


# --------------------------------------------------------------------------- entry point


def analyze_trace(
    path: str | Path,
    *,
    machine_nodes: int | None = None,
    time_bins: int = DEFAULT_TIME_BINS,
    max_samples: int = DEFAULT_MAX_SAMPLES,
    seed: int = 0,
) -> TraceModel:
    """Analyze an SWF trace (plain or gzipped) and return its generation model.

    ``machine_nodes`` overrides the header's ``MaxNodes`` (else ``MaxProcs``,
    else the widest job). ``seed`` only selects which exact triples each cell
    keeps, so the same trace and seed give the same model.
    """
    path = Path(path)
    trace = _load_trace(path)
    if trace.submit.size < 3:
        raise ValueError(f"{path}: need at least 3 usable jobs, found {trace.submit.size}")
    header = parse_header(trace.header_lines)
    machine = _machine_width(header, trace, machine_nodes)
    raw_fit = fit_weibull(np.diff(trace.submit), floor=INTERARRIVAL_FLOOR_S)
    base = basic_stats(trace.submit, trace.width, trace.estimate, trace.runtime, machine)
    stats = TraceStats(
        name=_trace_name(path),
        records=trace.records,
        **base,
        likelihood=raw_fit.likelihood,
        alpha=raw_fit.alpha,
        beta=raw_fit.beta,
    )
    return TraceModel(
        source=path.name,
        machine_nodes=machine,
        stats=stats,
        arrivals=_fit_arrivals(trace, header),
        shapes=_fit_shapes(trace, time_bins, max_samples, seed),
        provenance=_provenance(trace.header_lines),
    )


def _trace_name(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".swf"):
        name = name.removesuffix(suffix)
    return name
