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

import json
import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import ConfigDict, Field, TypeAdapter, ValidationError

from batchd.workload.loader import load_swf

SCHEMA = "batchd.trace-model/1"
HOURS_PER_WEEK = 168
HOUR_S = 3600
WEEK_S = HOURS_PER_WEEK * HOUR_S
MONDAY_SHIFT_S = 3 * 86400  # 1970-01-01 was a Thursday; +3 days makes 0 a Monday 00:00
INTERARRIVAL_FLOOR_S = 1.0
DEFAULT_TIME_BINS = 24
DEFAULT_MAX_SAMPLES = 64
RATE_FLOOR = 1e-3  # keeps operational time strictly increasing in hours without arrivals
PROVENANCE_KEYS = (
    "Computer",
    "Installation",
    "Acknowledge",
    "Copyright",
    "Information",
    "Conversion",
)

_STRICT = ConfigDict(extra="forbid")
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Probability = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0)]


class ModelFormatError(ValueError):
    """A trace-model JSON file (or dict) is malformed; the message names file and key."""


# --------------------------------------------------------------------------- data model


@dataclass(slots=True)
class WeibullFit:
    """Maximum-likelihood Weibull fit: shape ``alpha``, scale ``beta`` (seconds)."""

    alpha: float
    beta: float
    loglik_per_obs: float  # mean log-density of the fitted sample

    @property
    def likelihood(self) -> float:
        """Geometric-mean likelihood ``exp(mean log f(x_i))`` (Table 2's row)."""
        return math.exp(self.loglik_per_obs)

    @property
    def mean(self) -> float:
        return self.beta * math.gamma(1.0 + 1.0 / self.alpha)


@dataclass(slots=True)
class TraceStats:
    """The rows of paper Table 2 for one trace (times in seconds)."""

    __pydantic_config__ = _STRICT

    name: str
    records: Count  # data lines in the log, including the skipped ones
    jobs: Count  # usable jobs (width > 0 and runtime >= 0)
    max_width: Count
    machine_width: Count
    avg_width: NonNegative
    estimate_avg: NonNegative
    estimate_min: NonNegative
    estimate_max: NonNegative
    runtime_avg: NonNegative
    runtime_min: NonNegative
    runtime_max: NonNegative
    overrun_jobs: Count
    overrun_pct: Annotated[float, Field(ge=0, le=100)]
    interarrival_avg: NonNegative
    interarrival_min: NonNegative
    interarrival_max: NonNegative
    likelihood: NonNegative
    alpha: Positive
    beta: Positive


@dataclass(slots=True)
class ArrivalModel:
    """What the generator needs for submit times (see the module docstring)."""

    __pydantic_config__ = _STRICT

    alpha: Positive  # Weibull shape of operational-time inter-arrivals
    beta: Positive  # Weibull scale (s) of operational-time inter-arrivals
    loglik_per_job: float
    mean_interarrival: Positive  # empirical mean (s) of operational-time inter-arrivals
    weekly_rate: Annotated[list[NonNegative], Field(min_length=168, max_length=168)]
    floor_s: Positive = INTERARRIVAL_FLOOR_S
    unix_start: int | None = None  # header UnixStartTime, if any
    tz_offset_s: int = 0  # header TimeZone, if any


@dataclass(slots=True)
class ShapeMatrix:
    """Sparse joint distribution of (width, estimate, runtime) bins with cell samples."""

    __pydantic_config__ = _STRICT

    time_edges: Annotated[list[NonNegative], Field(min_length=2)]
    matrix: list[tuple[Count, Count, Count, Probability]]  # [w_bin, e_bin, a_bin, p]
    samples: list[Annotated[list[tuple[int, int, int]], Field(min_length=1)]]
    overrun_fraction: Probability  # share of jobs with runtime > estimate
    max_samples: Annotated[int, Field(ge=1)] = DEFAULT_MAX_SAMPLES
    sample_seed: int = 0


@dataclass(slots=True)
class TraceModel:
    """Everything ``generate_jobs`` needs, plus the Table 2 statistics."""

    __pydantic_config__ = _STRICT

    source: str
    machine_nodes: Annotated[int, Field(ge=1)]
    stats: TraceStats
    arrivals: ArrivalModel
    shapes: ShapeMatrix
    provenance: list[str] = field(default_factory=list)
    schema: str = SCHEMA

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable dict (tuples become lists)."""
        plain: dict[str, Any] = json.loads(json.dumps(asdict(self)))
        return plain

    @classmethod
    def from_json(cls, data: Any, *, origin: str = "<json>") -> TraceModel:
        """Validate ``data`` and build a model; errors name ``origin`` and the key."""
        try:
            model = _MODEL_ADAPTER.validate_python(data)
        except ValidationError as exc:
            raise ModelFormatError(_describe(exc, origin)) from None
        _check_consistency(model, origin)
        return model

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), separators=(",", ":")) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> TraceModel:
        try:
            data = json.loads(Path(path).read_text())
        except json.JSONDecodeError as exc:
            raise ModelFormatError(f"{path}: not valid JSON: {exc}") from None
        return cls.from_json(data, origin=str(path))


_MODEL_ADAPTER: TypeAdapter[TraceModel] = TypeAdapter(TraceModel)


def _describe(exc: ValidationError, origin: str) -> str:
    lines = [f"{origin}: invalid trace model ({exc.error_count()} error(s))"]
    for err in exc.errors():
        key = ".".join(str(part) for part in err["loc"]) or "<root>"
        lines.append(f"  key '{key}': {err['msg']}")
    return "\n".join(lines)


def _check_consistency(model: TraceModel, origin: str) -> None:
    def fail(key: str, msg: str) -> None:
        raise ModelFormatError(f"{origin}: invalid trace model\n  key '{key}': {msg}")

    if model.schema != SCHEMA:
        fail("schema", f"expected {SCHEMA!r}, got {model.schema!r}")
    shapes = model.shapes
    if len(shapes.samples) != len(shapes.matrix):
        fail("shapes.samples", f"{len(shapes.samples)} cells, matrix has {len(shapes.matrix)}")
    if not shapes.matrix:
        fail("shapes.matrix", "no occupied cells")
    total = math.fsum(row[3] for row in shapes.matrix)
    if abs(total - 1.0) > 1e-6:
        fail("shapes.matrix", f"probabilities sum to {total}, not 1")
    if any(b <= a for a, b in zip(shapes.time_edges, shapes.time_edges[1:], strict=False)):
        fail("shapes.time_edges", "not strictly increasing")
    for i, cell in enumerate(shapes.samples):
        if any(w < 1 or e < 0 or a < 0 for w, e, a in cell):
            fail(f"shapes.samples.{i}", "width must be >= 1 and times >= 0")
    if sum(model.arrivals.weekly_rate) <= 0:
        fail("arrivals.weekly_rate", "all rates are zero")


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


# --------------------------------------------------------------------------- tables

_Row = tuple[str, str, str]  # (row name, sub-row, key)

COMMON_ROWS: tuple[_Row, ...] = (
    ("number of jobs", "", "jobs"),
    ("maximum job width", "", "max_width"),
    ("width of machine (batch)", "", "machine_width"),
    ("average requested resources", "", "avg_width"),
    ("estimated runtime", "avg", "estimate_avg"),
    ("", "min", "estimate_min"),
    ("", "max", "estimate_max"),
    ("actual runtime", "avg", "runtime_avg"),
    ("", "min", "runtime_min"),
    ("", "max", "runtime_max"),
    ("jobs with actual > estimated runtime", "", "overrun_jobs"),
    ("interarrival time", "avg", "interarrival_avg"),
    ("", "min", "interarrival_min"),
    ("", "max", "interarrival_max"),
)
TABLE2_ROWS: tuple[_Row, ...] = COMMON_ROWS[:1] + (
    ("  records in log (incl. skipped)", "", "records"),
    *COMMON_ROWS[1:],
    ("likelihood of interarrival time", "", "likelihood"),
    ("Weibull: alpha", "", "alpha"),
    ("Weibull: beta", "", "beta"),
)


def _cell(stats: Mapping[str, Any], key: str) -> str:
    value = stats[key]
    if key in ("jobs", "records", "max_width", "machine_width"):
        return f"{int(value):,}"
    if key == "avg_width":
        return f"{value:.2f}"
    if key == "overrun_jobs":
        return f"{int(value):,} (= {stats['overrun_pct']:.2f} %)"
    if key == "likelihood":
        return f"{value:.7f}"
    if key == "alpha":
        return f"{value:.3f}"
    if key == "beta":
        return f"{value:,.1f}"
    return f"{round(value):,} s"


def _as_mapping(stats: TraceStats | Mapping[str, Any]) -> Mapping[str, Any]:
    return asdict(stats) if isinstance(stats, TraceStats) else stats


def format_table(
    stats: TraceStats | Mapping[str, Any] | Sequence[TraceStats | Mapping[str, Any]],
    rows: Sequence[_Row],
    names: Sequence[str] | None = None,
) -> str:
    """An aligned text table, one column per statistics record."""
    if isinstance(stats, TraceStats | Mapping):
        stats = [stats]
    records = [_as_mapping(s) for s in stats]
    heads = (
        list(names) if names else [str(r.get("name", f"set {i}")) for i, r in enumerate(records)]
    )
    body = [[name, sub, *(_cell(r, key) for r in records)] for name, sub, key in rows]
    table = [["", "", *heads], *body]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = []
    for row in table:
        left = f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}"
        right = "  ".join(f"{c:>{w}}" for c, w in zip(row[2:], widths[2:], strict=True))
        lines.append(f"{left}  {right}".rstrip())
    return "\n".join(lines)


def format_table2(
    stats: TraceStats | Mapping[str, Any] | Sequence[TraceStats | Mapping[str, Any]],
    names: Sequence[str] | None = None,
) -> str:
    """Paper Table 2 ("Output of the trace analyzer") for one or more traces."""
    return format_table(stats, TABLE2_ROWS, names)
