"""The trace model that ``analyze_trace`` fits and the generator draws from, and Table 2.

A :class:`TraceModel` (arrivals, job shapes, statistics) is saved as JSON and read
back with every key checked; :func:`format_table2` prints its statistics as the
rows of paper Table 2. ``batchd.workload.model_fit`` describes the fit.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError

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
