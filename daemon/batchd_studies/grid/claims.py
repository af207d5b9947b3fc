"""The claims of Hamscher et al.'s grid paper, sec. 5.2, checked against the study's numbers.

Each claim is a test on ART (the paper's main criterion) for one job set on one
grid configuration, with the words of the paper turned into numbers here, once:
"slightly" and "close" mean within ``CLOSE`` (10 %), "negligible" within
``NEGLIGIBLE`` (5 %), "much" and "vastly" at least ``MUCH`` (1.5 times). A cell
says whether the claim holds and the ratio it rests on; ``-`` when a run is
missing or the claim does not apply to that configuration.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from batchd_studies.framework.markdown import MISSING, markdown_table
from batchd_studies.grid.tables import Index, metric
from batchd_studies.grid.variants import (
    BACKLOG,
    BACKLOG_SENSITIVITY,
    DISCIPLINES,
    FREE_STRATEGIES,
    LOCALS,
    MEAN_PART,
    MIGRATION,
    MIN_PART_AT,
    MIN_PART_SERIES,
    MIN_PARTS,
    OVERFLOW,
    P_VALUES,
    SCHEDULERS,
    central,
    decentral,
    doubled,
    hierarchical,
    multisite,
    pool,
)

CLOSE = 1.10
NEGLIGIBLE = 1.05
MUCH = 1.5
EQUAL_CONFIG = "equal"  # the configuration whose machines are all the same size

Verdict = tuple[bool, str] | None  # holds, the figures it rests on


@dataclass(frozen=True)
class Claim:
    key: str
    text: str
    test: Callable[[Index, str, str], Verdict]


def _art(index: Index, trace: str, config: str, key: str) -> float | None:
    return metric(index, trace, config, key, "art")


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "inf"


def _pairwise(
    index: Index, trace: str, config: str, pairs: Sequence[tuple[str, str]], limit: float
) -> Verdict:
    """Holds when ART(worse) / ART(better) >= limit for every pair; the smallest ratio."""
    ratios = []
    for worse, better in pairs:
        a, b = _art(index, trace, config, worse), _art(index, trace, config, better)
        if a is None or b is None or b == 0:
            return None
        ratios.append(a / b)
    low = min(ratios)
    return low >= limit, f"min ratio {low:.2f}"


def backfill_beats_fcfs(index: Index, trace: str, config: str) -> Verdict:
    pairs = [(central("fcfs", s).key, central("easy", s).key) for s in FREE_STRATEGIES]
    return _pairwise(index, trace, config, pairs, 1.0)


def backfill_beats_random(index: Index, trace: str, config: str) -> Verdict:
    pairs = [(central("random", s).key, central("easy", s).key) for s in FREE_STRATEGIES]
    return _pairwise(index, trace, config, pairs, 1.0)


def random_slightly_worse(index: Index, trace: str, config: str) -> Verdict:
    """Random within ``CLOSE`` of Backfill either way (S2 says which is ahead)."""
    ratios = []
    for s in FREE_STRATEGIES:
        r = _art(index, trace, config, central("random", s).key)
        e = _art(index, trace, config, central("easy", s).key)
        if r is None or e is None or not e:
            return None
        ratios.append(r / e)
    close = all(1 / CLOSE <= x <= CLOSE for x in ratios)
    return close, "Random/Backfill " + ", ".join(f"{x:.2f}" for x in ratios)


def biggestfree_gain_largest(index: Index, trace: str, config: str) -> Verdict:
    gains = {}
    for s in FREE_STRATEGIES:
        f = _art(index, trace, config, central("fcfs", s).key)
        e = _art(index, trace, config, central("easy", s).key)
        if f is None or e is None or not e:
            return None
        gains[s] = f / e
    best = max(gains, key=gains.__getitem__)
    text = ", ".join(f"{s.split('-')[0]} {g:.2f}" for s, g in gains.items())
    return best == "biggestfree-free" and gains[best] >= MUCH, f"FCFS/Backfill: {text}"


def _strategy_rank(index: Index, trace: str, config: str, want: str, worst: bool) -> Verdict:
    hits = 0
    for sched in SCHEDULERS:
        arts = {s: _art(index, trace, config, central(sched, s).key) for s in FREE_STRATEGIES}
        if any(v is None for v in arts.values()):
            return None
        pick = (max if worst else min)(arts, key=lambda s: arts[s] or 0.0)
        hits += pick == want
    return hits == len(SCHEDULERS), f"{hits} of {len(SCHEDULERS)} schedulers"


def biggestfree_worst(index: Index, trace: str, config: str) -> Verdict:
    return _strategy_rank(index, trace, config, "biggestfree-free", worst=True)


def bestfit_best(index: Index, trace: str, config: str) -> Verdict:
    return _strategy_rank(index, trace, config, "bestfit-free", worst=False)


def art_grows_with_p(model: str, part_unit: str = "nodes") -> Callable[[Index, str, str], Verdict]:
    def test(index: Index, trace: str, config: str) -> Verdict:
        arts = [
            _art(index, trace, config, multisite(model, p, part_unit=part_unit).key)
            for p in P_VALUES
        ]
        if any(a is None for a in arts):
            return None
        values = [a or 0.0 for a in arts]
        rising = all(b >= a for a, b in zip(values, values[1:], strict=False))
        return rising, "ART " + ", ".join(f"{v:.3g}" for v in values)

    return test


def min_part_grows(
    model: str = MIN_PART_AT[0], p: str = MIN_PART_AT[1]
) -> Callable[[Index, str, str], Verdict]:
    def test(index: Index, trace: str, config: str) -> Verdict:
        return _min_part_grows(index, trace, config, model, p)

    return test


def _min_part_grows(index: Index, trace: str, config: str, m: str, p: str) -> Verdict:
    keys = [multisite(m, p).key, *(multisite(m, p, k).key for k in MIN_PARTS)]
    arts = [_art(index, trace, config, k) for k in keys]
    spans = [metric(index, trace, config, k, "makespan") for k in keys]
    if any(a is None for a in arts) or any(s is None for s in spans):
        return None
    a = [x or 0.0 for x in arts]
    s = [x or 0.0 for x in spans]
    rising = all(y >= x for x, y in zip(a, a[1:], strict=False)) and all(
        y >= x for x, y in zip(s, s[1:], strict=False)
    )
    return rising, "ART " + ", ".join(f"{v:,.0f}" for v in a)


def multisite_worse(index: Index, trace: str, config: str) -> Verdict:
    """Every multi-site run vs the best single-site run (Backfill BestFit_Free).

    The detail also gives the best multi-site run against single-site FCFS
    BestFit_Free, the same FCFS queue without splitting.
    """
    fcfs = _art(index, trace, config, central("fcfs", "bestfit-free").key)
    easy = _art(index, trace, config, central("easy", "bestfit-free").key)
    multi = [_art(index, trace, config, multisite(m, p).key) for m in "1234" for p in P_VALUES]
    if fcfs is None or easy is None or any(v is None for v in multi) or not fcfs or not easy:
        return None
    best = min(v or 0.0 for v in multi)
    return best > easy, (
        f"best multi-site / single-site Backfill {_ratio(best, easy)}, "
        f"/ single-site FCFS {_ratio(best, fcfs)}"
    )


def equalutil_slightly_better(index: Index, trace: str, config: str) -> Verdict:
    ratios = []
    for loc in LOCALS:
        e = _art(index, trace, config, hierarchical(loc, "equalutil-max").key)
        r = _art(index, trace, config, hierarchical(loc, "random-max").key)
        if e is None or r is None or not e:
            return None
        ratios.append(r / e)
    return all(x >= 1.0 for x in ratios), "Random/EqualUtil " + ", ".join(
        f"{x:.2f}" for x in ratios
    )


def equalutil_gap_on_equal(index: Index, trace: str, config: str) -> Verdict:
    if config != EQUAL_CONFIG:
        return None
    ratios = []
    for loc in LOCALS:
        e = _art(index, trace, config, hierarchical(loc, "equalutil-max").key)
        r = _art(index, trace, config, hierarchical(loc, "random-max").key)
        if e is None or r is None or not e:
            return None
        ratios.append(r / e)
    return all(abs(x - 1.0) <= NEGLIGIBLE - 1.0 for x in ratios), "Random/EqualUtil " + ", ".join(
        f"{x:.2f}" for x in ratios
    )


def hierarchical_backfill_much_better(index: Index, trace: str, config: str) -> Verdict:
    if config == EQUAL_CONFIG:
        return None
    pairs = [
        (hierarchical("fcfs", "equalutil-max").key, hierarchical("fcfs-easy", "equalutil-max").key)
    ]
    return _pairwise(index, trace, config, pairs, MUCH)


def migration_negligible(index: Index, trace: str, config: str) -> Verdict:
    ratios = []
    for loc in LOCALS:
        for home in ("random", "weighted"):
            a = _art(index, trace, config, decentral(loc, MIGRATION, home).key)
            b = _art(index, trace, config, decentral(loc, "1", home).key)
            if a is None or b is None or not b:
                return None
            ratios.append(a / b)
    return all(1.0 <= x <= NEGLIGIBLE for x in ratios), "with/without " + ", ".join(
        f"{x:.2f}" for x in ratios
    )


def decentral_vs_central(index: Index, trace: str, config: str) -> Verdict:
    """Decentral EASY (uniform homes, no overhead) vs central Backfill BestFit_Free."""
    d = _art(index, trace, config, decentral("fcfs-easy", "1", "random").key)
    c = _art(index, trace, config, central("easy", "bestfit-free").key)
    if d is None or c is None or not c:
        return None
    ratio = d / c
    if config == EQUAL_CONFIG:
        return ratio <= CLOSE, f"decentral/central {ratio:.2f} (claim: close)"
    return ratio >= MUCH, f"decentral/central {ratio:.2f} (claim: much worse)"


def pool_fcfs_beats_backfill(
    pushes: Sequence[str], backlogs: Sequence[str] = (BACKLOG,)
) -> Callable[[Index, str, str], Verdict]:
    def test(index: Index, trace: str, config: str) -> Verdict:
        pairs = [
            (doubled(pool("easy", push, "1", b)).key, doubled(pool("fcfs", push, "1", b)).key)
            for push in pushes
            for b in backlogs
        ]
        return _pairwise(index, trace, config, pairs, 1.0)

    return test


def pool_all_beats_overflow(index: Index, trace: str, config: str) -> Verdict:
    """Every job to the pool against the paper's rule, per discipline (no overhead)."""
    ratios = []
    for d in DISCIPLINES:
        a = _art(index, trace, config, pool(d, "all", "1").key)
        o = _art(index, trace, config, pool(d, OVERFLOW, "1").key)
        if a is None or o is None or not a:
            return None
        ratios.append(o / a)
    return all(x >= 1.0 for x in ratios), "overflow/all (FCFS, Backfill) " + ", ".join(
        f"{x:.2f}" for x in ratios
    )


def pool_push_all_close(index: Index, trace: str, config: str) -> Verdict:
    ratios = []
    for d in DISCIPLINES:
        a = _art(index, trace, config, pool(d, "all", "1").key)
        c = _art(index, trace, config, central(d if d == "fcfs" else "easy", "bestfit-free").key)
        if a is None or c is None or not c:
            return None
        ratios.append(a / c)
    return all(
        1 / CLOSE <= x <= CLOSE for x in ratios
    ), "pool all / central (FCFS, Backfill) " + ", ".join(f"{x:.2f}" for x in ratios)


def pool_overhead_worse(pushes: Sequence[str]) -> Callable[[Index, str, str], Verdict]:
    def test(index: Index, trace: str, config: str) -> Verdict:
        ratios = []
        for d in DISCIPLINES:
            for push in pushes:
                a = _art(index, trace, config, pool(d, push, MIGRATION).key)
                b = _art(index, trace, config, pool(d, push, "1").key)
                if a is None or b is None or not b:
                    return None
                ratios.append(a / b)
        return all(x >= 1.0 for x in ratios), "with/without " + ", ".join(
            f"{x:.2f}" for x in ratios
        )

    return test


AS_WRITTEN = {
    "2": " (as written, (1+p)^r_i: 12.8 for a 256-node part at p = 0.01, so it holds by "
    "construction)",
    "4": " (as written, (1+p) * r_i: about the largest part's nodes at any p, so the trend "
    "is lost in the size factor)",
}


CLAIMS: tuple[Claim, ...] = (
    Claim("S1", "single-site: Backfill better than FCFS (every strategy)", backfill_beats_fcfs),
    Claim("S2", "single-site: Backfill better than Random (every strategy)", backfill_beats_random),
    Claim(
        "S3",
        "single-site: Random only slightly worse than Backfill (within 10 % either way)",
        random_slightly_worse,
    ),
    Claim(
        "S4",
        "single-site: Backfill's gain over FCFS largest, and vast (>= 1.5x), with BiggestFree",
        biggestfree_gain_largest,
    ),
    Claim("S5", "single-site: BiggestFree worst strategy (every scheduler)", biggestfree_worst),
    Claim("S6", "single-site: BestFit_Free best strategy (every scheduler)", bestfit_best),
    *(
        Claim(
            f"M{m}",
            f"multi-site: ART grows with p, model {m}{AS_WRITTEN.get(m, '')}",
            art_grows_with_p(m),
        )
        for m in "1234"
    ),
    *(
        Claim(
            f"M{m}n",
            f"multi-site: ART grows with p, model {m} normalized (r_i in mean parts, "
            "sensitivity run)",
            art_grows_with_p(m, MEAN_PART),
        )
        for m in ("2", "4")
    ),
    Claim(
        "M5",
        "multi-site: larger min_part, larger ART and makespan (the paper's expectation, "
        "which it did not observe); model 1, p = 0.01",
        min_part_grows(),
    ),
    *(
        Claim(
            f"M5{suffix}",
            f"multi-site: the same, model {m}, p = {p}",
            min_part_grows(m, p),
        )
        for suffix, (m, p) in zip("bcd", MIN_PART_SERIES[1:], strict=True)
    ),
    Claim(
        "M6",
        "multi-site worse than single-site (every multi-site run vs single-site Backfill "
        "BestFit_Free)",
        multisite_worse,
    ),
    Claim(
        "H1",
        "hierarchical: EqualUtil_Max better than Random_Max (FCFS and Backfill)",
        equalutil_slightly_better,
    ),
    Claim(
        "H2",
        "hierarchical: on equal, EqualUtil_Max vs Random_Max negligible (<= 5 %)",
        equalutil_gap_on_equal,
    ),
    Claim(
        "H3",
        "hierarchical, unequal sizes: Backfill much better (>= 1.5x) than FCFS with EqualUtil_Max",
        hierarchical_backfill_much_better,
    ),
    Claim(
        "D1",
        "decentral: migration overhead x1.1 costs little (ART up by 0-5 %)",
        migration_negligible,
    ),
    Claim(
        "D2",
        "decentral vs central (Backfill): close on equal (<= 10 %), much worse (>= 1.5x) "
        "on unequal sizes",
        decentral_vs_central,
    ),
    Claim(
        "P1",
        "job pool as the paper's (local backlogs, overflow to the pool), doubled set "
        "(backlog): FCFS better than Backfill",
        pool_fcfs_beats_backfill((OVERFLOW,)),
    ),
    Claim(
        "P1c",
        "the same at backlog "
        + " and ".join(BACKLOG_SENSITIVITY)
        + " (machine-fulls kept at home, sensitivity run)",
        pool_fcfs_beats_backfill((OVERFLOW,), BACKLOG_SENSITIVITY),
    ),
    Claim(
        "P1b",
        "job pool, push blocked or all (no local backlog), doubled set: FCFS better than Backfill",
        pool_fcfs_beats_backfill(("blocked", "all")),
    ),
    Claim(
        "P2",
        "job pool, every job pushed: comparable to central (within 10 % either way)",
        pool_push_all_close,
    ),
    Claim(
        "P2b",
        "job pool: sending every job to the pool beats the paper's rule (FCFS and Backfill)",
        pool_all_beats_overflow,
    ),
    Claim(
        "P3",
        "job pool as the paper's: migration overhead x1.1 worsens ART",
        pool_overhead_worse((OVERFLOW,)),
    ),
    Claim(
        "P3b",
        "job pool, push blocked or all: migration overhead x1.1 worsens ART",
        pool_overhead_worse(("blocked", "all")),
    ),
)


def verdict_cell(verdict: Verdict) -> str:
    if verdict is None:
        return MISSING
    holds, detail = verdict
    return f"{'**holds**' if holds else 'no'} ({detail})"


def claims_table(index: Index, trace: str, configs: Sequence[str]) -> str:
    rows = []
    for claim in CLAIMS:
        verdicts = [claim.test(index, trace, c) for c in configs]
        known = [v for v in verdicts if v is not None]
        tally = f"{sum(v[0] for v in known)}/{len(known)}" if known else MISSING
        rows.append([claim.key, claim.text, tally, *(verdict_cell(v) for v in verdicts)])
    return markdown_table(["", "claim (sec. 5.2)", "holds", *configs], rows, left=2)


def claim_verdicts(
    index: Index, traces: Sequence[str], configs: Sequence[str]
) -> dict[str, dict[str, dict[str, bool | None]]]:
    """claim -> trace -> config -> holds (None: not applicable or missing)."""
    out: dict[str, dict[str, dict[str, bool | None]]] = {}
    for claim in CLAIMS:
        out[claim.key] = {}
        for t in traces:
            out[claim.key][t] = {}
            for c in configs:
                v = claim.test(index, t, c)
                out[claim.key][t][c] = None if v is None else v[0]
    return out
