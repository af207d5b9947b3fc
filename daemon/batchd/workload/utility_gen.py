"""Synthetic utility functions for a real trace (Lee's utility paper, sec. 4).

Each job line of the trace gets a ``utility=`` token (and ``utility_decay=``, the decay
type drawn, and ``priority_class=``, the job's normalised priority, by which ``prio-fifo``
ranks it) after its 18 fields; the lines are otherwise written as read.

- Priority: the job's queue (field 15) through a queue-to-priority map, normalised to
  0 (highest) .. N-1 (lowest). A queue not in the map takes the lowest priority.
- Start value (sec. 4.2): a value per processor-minute drawn from a normal distribution
  with mean ``(priority + 0.5) / N x globmax`` (the centre of the priority's bin) and
  standard deviation ``sigma`` (half a bin by default), at least 0; times the processors
  (field 8, else field 5) and the requested minutes (field 9, else the runtime). With
  priority 0 the highest, the seed's formula gives the highest priority the lowest bin,
  against its text ("higher priority jobs should have higher start values");
  ``value_order="priority"`` centres priority p on bin N - 1 - p instead.
- Deadline (sec. 4.3): ``max(factor x the job's wait in the log, 10 s)``, in whole
  seconds (rounded up), factor 2 by default. The function is of the response time
  (time since submit), so a job that runs longer than its deadline earns nothing
  however soon it starts; ``deadline_from="start"`` counts the decay and the deadline
  from the moment the job would start: every point but the first moves later by the
  job's runtime (field 4), after a flat start value until then, so that a job earns
  at its response time what it would earn at its wait as written (the same draws).
- Decay (sec. 4.3), drawn by weight (a third each by default):
  ``expected-linear``: K distinct whole-second times in (0, deadline), K values drawn
  uniformly from [0, start value], sorted decreasing; ``expected-exponential``: the same
  times, each value drawn uniformly between the previous value (first: the start
  value) and 0; ``step``: one time t in (0, deadline - 2), the start value until t, a
  value drawn from [0, start value] from t + 1 s until deadline - 1 s, 0 at the
  deadline. The linear and exponential functions end at (deadline, 0).
- Values are rounded to hundredths. The same trace, parameters and seed give the same
  bytes.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from batchd.model.utility import Utility, format_number
from batchd.workload.swf import (
    N_FIELDS,
    PRIORITY_CLASS_KEY,
    UTILITY_KEY,
    PathLike,
    SWFHeader,
    _open_write,
    iter_swf_tokens,
    open_text,
    read_header,
)

__all__ = [
    "DEADLINE_FROM",
    "DECAYS",
    "VALUE_ORDERS",
    "SDSC_BLUE_MAP",
    "UtilityParams",
    "UtilityStats",
    "augment_trace",
    "load_queue_map",
    "make_utility",
    "queue_map_for",
]

DECAYS: tuple[str, ...] = ("expected-linear", "expected-exponential", "step")
# Which priority's bin holds the highest start values: the seed's formula (the lowest
# priority's) or its text (the highest priority's).
VALUE_ORDERS: tuple[str, ...] = ("formula", "priority")
# Where the decay and the deadline count from: the submission (the seed's text) or the
# job's start (its function moved later by its runtime).
DEADLINE_FROM: tuple[str, ...] = ("submit", "start")
DECAY_KEY = "utility_decay"
_WRITTEN = (UTILITY_KEY, DECAY_KEY, PRIORITY_CLASS_KEY)  # replaced where a line has them
# The 18 fields of a job line as written (their spacing kept), without what follows.
_FIELDS_RE = re.compile(rf"^\s*(?:\S+\s+){{{N_FIELDS - 1}}}\S+")

# SDSC Blue Horizon (SDSC-BLUE-2000): its six main queues, most urgent first, in the
# order the trace's header lists them (queues 0 to 5): interactive (a user waits at a
# terminal), express (short jobs, quick turnaround), high, normal, low (the names, and
# SDSC charged high more and low less than normal), standby (runs on idle nodes only).
# The other 18 queues (Diag*, testqwh, unknown, ...) take the lowest priority.
SDSC_BLUE_MAP: dict[int, int] = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5}
_SDSC_BLUE = re.compile(r"SDSC\s+Blue\s+Horizon", re.I)


@dataclass(frozen=True, slots=True)
class UtilityParams:
    """What shapes the functions; see the module's docstring."""

    globmax: float = 10.0
    sigma: float | None = None  # None: half a priority bin, globmax / N / 2
    deadline_factor: float = 2.0
    weights: tuple[float, float, float] = (1.0, 1.0, 1.0)
    points: int = 4  # intermediate points of the linear and exponential decays
    seed: int = 0
    value_order: str = "formula"  # VALUE_ORDERS: the bin of priority p is p, or N - 1 - p
    deadline_from: str = "submit"  # DEADLINE_FROM

    def __post_init__(self) -> None:
        if not (self.globmax > 0 and math.isfinite(self.globmax)):
            raise ValueError(f"globmax must be a finite number > 0, got {self.globmax}")
        if self.sigma is not None and not (self.sigma >= 0 and math.isfinite(self.sigma)):
            raise ValueError(f"sigma must be a finite number >= 0, got {self.sigma}")
        if not (self.deadline_factor > 0 and math.isfinite(self.deadline_factor)):
            raise ValueError(f"deadline factor must be > 0, got {self.deadline_factor}")
        if len(self.weights) != 3 or any(not (w >= 0 and math.isfinite(w)) for w in self.weights):
            raise ValueError("weights: three finite numbers >= 0 (linear, exponential, step)")
        if sum(self.weights) <= 0:
            raise ValueError("weights: at least one must be > 0")
        if self.points < 0:
            raise ValueError(f"points must be >= 0, got {self.points}")
        if self.value_order not in VALUE_ORDERS:
            raise ValueError(
                f"value order must be one of {', '.join(VALUE_ORDERS)}, got {self.value_order!r}"
            )
        if self.deadline_from not in DEADLINE_FROM:
            raise ValueError(
                f"deadline from must be one of {', '.join(DEADLINE_FROM)}, "
                f"got {self.deadline_from!r}"
            )


@dataclass(slots=True)
class UtilityStats:
    """What a run of :func:`augment_trace` made."""

    jobs: int = 0
    by_decay: dict[str, int] = field(default_factory=lambda: dict.fromkeys(DECAYS, 0))
    by_priority: dict[int, int] = field(default_factory=dict)
    unmapped: int = 0  # jobs whose queue is not in the map (lowest priority)
    start_value_sum: float = 0.0


def load_queue_map(path: PathLike) -> dict[int, int]:
    """A map file: one ``QUEUE PRIORITY`` pair a line (``#`` comments), priorities
    0 (highest) to N-1, each of them used."""
    qmap: dict[int, int] = {}
    with open(path, encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            try:
                if len(parts) != 2:
                    raise ValueError
                queue, prio = int(parts[0]), int(parts[1])
            except ValueError:
                raise ValueError(f"{path}:{n}: expected QUEUE PRIORITY (two integers)") from None
            if prio < 0:
                raise ValueError(f"{path}:{n}: priority {prio} is negative; 0 is the highest")
            if queue in qmap:
                raise ValueError(f"{path}:{n}: queue {queue} is mapped twice")
            qmap[queue] = prio
    check_queue_map(qmap, str(path))
    return qmap


def check_queue_map(qmap: Mapping[int, int], where: str) -> None:
    if not qmap:
        raise ValueError(f"{where}: the queue map is empty")
    used = set(qmap.values())
    missing = sorted(set(range(max(used) + 1)) - used)
    if missing:
        raise ValueError(
            f"{where}: priorities must be 0..N-1 with none left out; no queue has "
            + ", ".join(map(str, missing))
        )


def queue_map_for(header: SWFHeader) -> dict[int, int] | None:
    """The built-in map for a trace its header names (SDSC Blue Horizon), else None."""
    installation = header.value("Installation") or ""
    return dict(SDSC_BLUE_MAP) if _SDSC_BLUE.search(installation) else None


def _round2(x: float) -> float:
    return round(x, 2)


def make_utility(
    rng: random.Random,
    params: UtilityParams,
    priority: int,
    n_priorities: int,
    processors: float,
    seconds: float,
    wait: float,
    runtime: float = 0,
) -> tuple[Utility, str, float]:
    """One job's function, its decay type and its start value; draws from ``rng`` in a
    fixed order (decay type, start value, times, values). ``runtime``: how much later the
    function moves with ``deadline_from="start"``."""
    w_lin, w_exp, w_step = params.weights
    pick = rng.random() * (w_lin + w_exp + w_step)
    if pick < w_lin:
        decay = DECAYS[0]
    elif pick < w_lin + w_exp or w_step == 0:
        decay = DECAYS[1] if w_exp > 0 else DECAYS[0]
    else:
        decay = DECAYS[2]
    bin_width = params.globmax / n_priorities
    sigma = bin_width / 2 if params.sigma is None else params.sigma
    bin_index = priority if params.value_order == "formula" else n_priorities - 1 - priority
    mean = (bin_index + 0.5) * bin_width
    per_minute = max(rng.gauss(mean, sigma), 0.0)
    start = _round2(per_minute * max(processors, 0) * max(seconds, 0) / 60)
    deadline = max(math.ceil(params.deadline_factor * max(wait, 0)), 10)

    points: list[tuple[float, float]]
    if decay == "step":
        t = rng.randint(1, deadline - 3)
        low = _round2(rng.uniform(0, start))
        points = [(0, start), (t, start), (t + 1, low), (deadline - 1, low), (deadline, 0)]
    else:
        k = min(params.points, deadline - 1)
        times = sorted(rng.sample(range(1, deadline), k))
        if decay == "expected-linear":
            values = sorted((_round2(rng.uniform(0, start)) for _ in times), reverse=True)
        else:
            values = []
            last = start
            for _ in times:
                last = _round2(rng.uniform(0, last))
                values.append(last)
        points = [(0, start), *zip(times, values, strict=True), (deadline, 0)]
    if params.deadline_from == "start":
        points = from_start(points, runtime)
    return Utility(points), decay, start


def from_start(points: list[tuple[float, float]], runtime: float) -> list[tuple[float, float]]:
    """``points`` (the first at time 0) moved later by ``runtime`` whole seconds: the start
    value until then, then the same decay."""
    shift = max(math.ceil(runtime), 0)
    if shift == 0:
        return points
    start = points[0][1]
    return [(0, start), (shift, start), *((t + shift, v) for t, v in points[1:])]


def augment_trace(
    src: PathLike,
    dst: PathLike,
    params: UtilityParams,
    qmap: Mapping[int, int],
    comments: Sequence[str] = (),
) -> UtilityStats:
    """Write ``src`` to ``dst`` with a utility function on every job line."""
    check_queue_map(qmap, "queue map")
    n_prio = max(qmap.values()) + 1
    rng = random.Random(params.seed)
    stats = UtilityStats(by_priority=dict.fromkeys(range(n_prio), 0))
    header = read_header(src)
    records = iter_swf_tokens(src)  # checks every line as it goes
    with open_text(src) as fin, _open_write(dst) as out:
        for line in header.lines:
            out.write(line + "\n")
        for text in comments:
            out.write(f"; {text}\n")
        numbered = enumerate(fin, 1)
        for line_no, fields, tokens in records:
            line = next(text for n, text in numbered if n == line_no).rstrip("\r\n")
            queue = round(fields[14])
            prio = qmap.get(queue)
            if prio is None:
                prio = n_prio - 1
                stats.unmapped += 1
            procs = fields[7] if fields[7] > 0 else fields[4]
            seconds = fields[8] if fields[8] > 0 else fields[3]
            util, decay, start = make_utility(
                rng, params, prio, n_prio, procs, seconds, fields[2], fields[3]
            )
            stats.jobs += 1
            stats.by_decay[decay] += 1
            stats.by_priority[prio] += 1
            stats.start_value_sum += start
            kept = [t for t in tokens if t.partition("=")[0] not in _WRITTEN]
            m = _FIELDS_RE.match(line)
            body = m.group(0) if m is not None else " ".join(line.split()[:N_FIELDS])
            new = [
                f"{UTILITY_KEY}={util.format()}",
                f"{DECAY_KEY}={decay}",
                f"{PRIORITY_CLASS_KEY}={prio}",
                *kept,
            ]
            out.write(" ".join([body, *new]) + "\n")
    return stats


def format_stats(stats: UtilityStats, qmap: Mapping[int, int], params: UtilityParams) -> str:
    """A short report of what was made."""
    n = max(qmap.values()) + 1
    lines = [
        f"{stats.jobs} jobs with a utility function (seed {params.seed}, globmax "
        f"{format_number(params.globmax)}, deadline factor "
        f"{format_number(params.deadline_factor)})",
        "by decay: " + ", ".join(f"{k} {v}" for k, v in stats.by_decay.items()),
        "by priority (0 highest): "
        + ", ".join(f"{p}: {stats.by_priority.get(p, 0)}" for p in range(n)),
    ]
    if stats.unmapped:
        lines.append(f"{stats.unmapped} jobs in queues not in the map took priority {n - 1}")
    return "\n".join(lines)
