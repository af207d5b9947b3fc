"""The paper's rules of thumb, each checked on one sweep (trace x machine size x discipline)."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from batchd_studies.framework.markdown import MISSING, markdown_table
from batchd_studies.primetime.tables import (
    EXTRA_COLUMN,
    Grid,
    LimitKey,
    SweepKey,
    discipline_title,
    fmt_days,
    fmt_pct,
    limit_label,
    metric_grid,
    pt_percent,
    pt_ratio,
    pt_value,
)
from batchd_studies.primetime.tables import fmt_times as _x

NEAR_BEST = 1.5  # a ratio to the best value this small counts as "near the best"
MATTERS = 2.0  # limits matter when the single queue is at least this many times the best


@dataclass
class Verdict:
    """A rule of thumb checked on one sweep: holds / partly / does not hold, and why."""

    verdict: str
    numbers: str


def _ratio(grid: Grid, key: LimitKey, cls: str, metric: str) -> float | None:
    return pt_ratio(grid, key, cls, metric) if key in grid else None


def _argbest(grid: Grid, cls: str, metric: str) -> LimitKey | None:
    """The limits with the smallest value of a metric (ties: the smaller limits)."""
    values = {k: v for k, v in metric_grid(grid, cls, metric).items() if v is not None}
    return min(values, key=lambda k: (values[k], k)) if values else None


def _lbl(key: LimitKey | None) -> str:
    return MISSING if key is None else limit_label(key)


def rule_prime(grid: Grid) -> Verdict:
    """(1) Best prime service with either cutoff around 30%."""
    best = _argbest(grid, "prime", "art")
    r30 = _ratio(grid, (30, 100), "prime", "art")
    r30b = _ratio(grid, EXTRA_COLUMN, "prime", "art")
    single = _ratio(grid, (100, 100), "prime", "art")
    on30 = [r for k in grid if 30 in k and (r := _ratio(grid, k, "prime", "art")) is not None]
    numbers = (
        f"best at {_lbl(best)}; 30-100 {_x(r30)}, 100-30 {_x(r30b)}, "
        f"worst with a cutoff at 30 {_x(max(on30, default=None))}, "
        f"100-100 {_x(single)} of the best; {critical_limits(grid)}"
    )
    if r30 is None or r30b is None or single is None:
        return Verdict("not tested (limits need 30 and 100)", numbers)
    if single < MATTERS:
        return Verdict(
            "does not apply: the limits hardly matter for small jobs (the paper saw the "
            "same on a lightly loaded machine)",
            numbers,
        )
    if max(r30, r30b) <= NEAR_BEST:
        return Verdict("holds", numbers)
    if min(r30, r30b) <= NEAR_BEST:
        which = "runtime" if r30 <= NEAR_BEST else "jobsize"
        return Verdict(f"partly: only a {which} cutoff of 30% is enough", numbers)
    return Verdict("does not hold", numbers)


def critical_limits(grid: Grid) -> str:
    """Where small jobs' response time first passes twice the best, along each axis."""
    limits = sorted({rt for rt, _ in grid})
    top = max(limits, default=None)

    def first(axis: int) -> str:
        for limit in limits:
            key = (limit, top) if axis == 0 else (top, limit)
            r = _ratio(grid, key, "prime", "art")  # type: ignore[arg-type]
            if r is not None and r > MATTERS:
                return f"{limit}%"
        return "never"

    if top is None:
        return ""
    by_runtime, by_jobsize = first(0), first(1)
    return (
        f"above {MATTERS:g}x first at runtime limit {by_runtime} (no jobsize limit) and "
        f"at jobsize limit {by_jobsize} (no runtime limit)"
    )


def rule_nonprime(grid: Grid) -> Verdict:
    """(2) Best non-prime service with both cutoffs at 40% or more."""
    values = {k: v for k, v in metric_grid(grid, "nonprime", "art").items() if v is not None}
    if not values:
        return Verdict("not tested (no large jobs)", "")
    best = min(values, key=lambda k: (values[k], k))
    high = [v / values[best] for k, v in values.items() if min(k) >= 40]
    low = [v / values[best] for k, v in values.items() if min(k) < 40]
    med_hi = statistics.median(high) if high else None
    med_lo = statistics.median(low) if low else None
    numbers = (
        f"best at {_lbl(best)} ({fmt_days(values[best])}); median ratio with both >= 40: "
        f"{_x(med_hi)}, with either < 40: {_x(med_lo)}"
    )
    if med_hi is None or med_lo is None:
        return Verdict("not tested (limits need values below and above 40)", numbers)
    if min(best) >= 40 and med_hi < med_lo:
        return Verdict("holds", numbers)
    if med_hi < med_lo:
        return Verdict("partly: higher cutoffs help large jobs, the best is elsewhere", numbers)
    return Verdict("does not hold", numbers)


def rule_utilization(grid: Grid) -> Verdict:
    """(3) Maximum utilization and minimum overflow with both cutoffs as large as possible."""
    util = {k: pt_percent(s, "utilization-all") for k, s in grid.items()}
    over = {k: pt_percent(s, "overflow") for k, s in grid.items()}
    util_v = {k: v for k, v in util.items() if v is not None}
    over_v = {k: v for k, v in over.items() if v is not None}
    if (100, 100) not in util_v or not over_v:
        return Verdict("not tested (limits need 100)", "")
    top = max(util_v, key=lambda k: (util_v[k], k))
    low, high = min(over_v.values()), max(over_v.values())
    numbers = (
        f"utilization-all highest at {_lbl(top)} ({fmt_pct(util_v[top])}), 100-100 "
        f"{fmt_pct(util_v[(100, 100)])}, 30-100 {fmt_pct(util.get((30, 100)))}; overflow "
        f"{fmt_pct(low)}..{fmt_pct(high)}, 100-100 {fmt_pct(over_v.get((100, 100)))}"
    )
    util_ok = util_v[(100, 100)] >= util_v[top] - 0.005
    over_ok = over_v.get((100, 100), 1.0) <= low + 1e-12
    if util_ok and over_ok:
        return Verdict("holds" if high - low > 0 else "holds (no overflow anywhere)", numbers)
    if util_ok or over_ok:
        return Verdict("partly", numbers)
    return Verdict("does not hold", numbers)


def rule_thumb(grid: Grid) -> Verdict:
    """The Prime Time Rule of Thumb: runtime 30%, jobsize 100%."""
    keys = ((30, 100), (80, 100), (100, 100))
    if any(k not in grid for k in (keys[0], keys[2])):
        return Verdict("not tested (limits need 30 and 100)", "")
    art = [_ratio(grid, k, "all", "art") for k in keys]
    sld = [_ratio(grid, k, "all", "slowdown") for k in keys]
    prime = _ratio(grid, keys[0], "prime", "art")
    numbers = (
        f"resptime-all ratio 30-100 {_x(art[0])}, 80-100 {_x(art[1])}, 100-100 "
        f"{_x(art[2])} (paper 1.81, 5.17, 6.37); slowdown-all {_x(sld[0])}, {_x(sld[1])}, "
        f"{_x(sld[2])} (paper 1.24, 12.80, 16.09); resptime-prime at 30-100 "
        f"{_x(prime)} (paper 1.73)"
    )
    if art[0] is None or art[2] is None or sld[0] is None or sld[2] is None or prime is None:
        return Verdict("not tested", numbers)
    better = [art[0] < art[2], sld[0] < sld[2]]
    if all(better) and prime <= MATTERS:
        return Verdict("holds", numbers)
    if any(better):
        return Verdict("partly", numbers)
    return Verdict("does not hold: the single queue is better for all jobs", numbers)


def rule_gap(fcfs: Grid | None, easy: Grid | None) -> Verdict:
    """FCFS vs EASY: EASY ~10x better without queues; two queues help FCFS (~100x) more."""
    if not fcfs or not easy or (100, 100) not in fcfs or (100, 100) not in easy:
        return Verdict("not tested (needs fcfs and easy with limits 100)", "")
    f1 = pt_value(fcfs[(100, 100)], "all", "slowdown")
    e1 = pt_value(easy[(100, 100)], "all", "slowdown")
    bf = _ratio(fcfs, (100, 100), "all", "slowdown")
    be = _ratio(easy, (100, 100), "all", "slowdown")
    if f1 is None or e1 is None or bf is None or be is None:
        return Verdict("not tested", "")
    gap = f1 / e1 if e1 else float("inf")
    numbers = (
        f"slowdown-all with one queue: FCFS {f1:,.1f}, EASY {e1:,.1f} (EASY {gap:,.1f}x "
        f"better; paper ~10x); one queue vs the best two-queue limits: FCFS {_x(bf)}, "
        f"EASY {_x(be)} (paper ~100x and ~10x)"
    )
    easy_wins = gap >= 3
    fcfs_gains_more = bf > be and bf >= MATTERS
    if easy_wins and fcfs_gains_more:
        return Verdict("holds", numbers)
    if easy_wins or fcfs_gains_more:
        return Verdict("partly", numbers)
    return Verdict("does not hold", numbers)


def rule_util_range(grid: Grid) -> Verdict:
    """Prime-time utilization is far more sensitive (15-80%) than non-prime (72-91%)."""
    prime = [v for s in grid.values() if (v := pt_percent(s, "utilization-prime")) is not None]
    non = [
        v
        for k, s in grid.items()
        if k != (100, 100) and (v := pt_percent(s, "utilization-non")) is not None
    ]
    if not prime or not non:
        return Verdict("not tested", "")
    numbers = (
        f"prime {fmt_pct(min(prime))}..{fmt_pct(max(prime))} (paper 15..80 %), non-prime "
        f"{fmt_pct(min(non))}..{fmt_pct(max(non))} (paper 72..91 %)"
    )
    if max(prime) - min(prime) > max(non) - min(non):
        return Verdict("holds (prime is the sensitive one)", numbers)
    return Verdict("does not hold", numbers)


def rule_success(grid: Grid) -> Verdict:
    """Success in prime time: 30/30 far above the single queue (FCFS 80-90 vs 3, EASY 98 vs 69)."""
    a = pt_percent(grid.get((30, 30)), "success-prime") if (30, 30) in grid else None
    b = pt_percent(grid.get((100, 100)), "success-prime") if (100, 100) in grid else None
    rates = [v for s in grid.values() if (v := pt_percent(s, "success-prime")) is not None]
    numbers = f"30-30 {fmt_pct(a)}, 100-100 {fmt_pct(b)}, best {fmt_pct(max(rates, default=None))}"
    if a is None or b is None:
        return Verdict("not tested (limits need 30 and 100)", numbers)
    return Verdict("holds" if a > b + 0.05 else "does not hold", numbers)


@dataclass(frozen=True)
class Rule:
    title: str
    claim: str
    check: Callable[[Grid], Verdict]


RULES = (
    Rule(
        "(1) prime service",
        "Best prime-time service (response time of small jobs) with a cutoff around 30% for "
        "either runtime or jobsize.",
        rule_prime,
    ),
    Rule(
        "(2) non-prime service",
        "Best non-prime service (response time of large jobs) with both cutoffs at 40% or more.",
        rule_nonprime,
    ),
    Rule(
        "(3) utilization and overflow",
        "Maximum utilization and minimum overflow with both cutoffs as large as possible.",
        rule_utilization,
    ),
    Rule(
        "Prime Time Rule of Thumb",
        "Runtime 30% and jobsize 100% is the best compromise: better than one queue (100-100) "
        "for all jobs, near the best for small jobs.",
        rule_thumb,
    ),
    Rule(
        "utilization ranges",
        "Prime-time utilization depends much more on the limits than non-prime utilization.",
        rule_util_range,
    ),
    Rule(
        "success rate",
        "Two queues raise the prime-time success rate far above one queue's.",
        rule_success,
    ),
)


def _count(verdicts: Sequence[Verdict]) -> str:
    tested = [v for v in verdicts if not v.verdict.startswith("not tested")]
    held = sum(v.verdict.startswith("holds") for v in tested)
    part = sum(v.verdict.startswith("partly") for v in tested)
    if not tested:
        return "not tested"
    return f"holds in {held} of {len(tested)} sweeps, partly in {part}"


def rules_section(
    traces: Sequence[str],
    nodes: Mapping[str, Sequence[int]],
    disciplines: Sequence[str],
    gridmap: Mapping[SweepKey, Grid],
) -> list[str]:
    lines = [
        "## The paper's rules of thumb on these traces",
        "",
        "Checked on every sweep (trace x machine size x discipline) by the criteria given "
        f'under each rule; "near the best" means within {NEAR_BEST:g}x of the best value '
        f'of the sweep, "the limits matter" means one queue is at least {MATTERS:g}x worse '
        "than the best. Response times of large jobs include the drain after the last "
        "submission (see the context tables).",
        "",
    ]
    header = ["trace", "nodes", "discipline", "verdict", "numbers"]
    for rule in RULES:
        rows, verdicts = [], []
        for t in traces:
            for n in nodes[t]:
                for d in disciplines:
                    grid = gridmap.get((t, n, d))
                    if not grid:
                        continue
                    v = rule.check(grid)
                    verdicts.append(v)
                    rows.append([t, str(n), discipline_title(d), v.verdict, v.numbers])
        lines += [f"### {rule.title}: {_count(verdicts)}", "", rule.claim, ""]
        lines += [markdown_table(header, rows, left=5), ""]
    rows, verdicts = [], []
    for t in traces:
        for n in nodes[t]:
            v = rule_gap(gridmap.get((t, n, "fcfs")), gridmap.get((t, n, "easy")))
            verdicts.append(v)
            rows.append([t, str(n), v.verdict, v.numbers])
    lines += [
        f"### FCFS vs EASY: {_count(verdicts)}",
        "",
        "Without the two queues EASY's slowdown is about 10x better than FCFS's, and the two "
        "queues help FCFS (about 100x) more than EASY (about 10x). Criteria: EASY at least 3x "
        "better with one queue; one queue is worse than the best limits by more for FCFS than "
        f"for EASY, and by at least {MATTERS:g}x.",
        "",
        markdown_table(["trace", "nodes", "verdict", "numbers"], rows, left=4),
        "",
    ]
    return lines
