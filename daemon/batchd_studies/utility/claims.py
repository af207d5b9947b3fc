"""The seed's statements about its tables and figures, checked against batchd's means.

The seed's figures print no numbers, so what it says of them (sec. 7-8) is turned
into a test here, once: "nearly equal" means within ``CLOSE`` (5 %). A claim that
needs a scheduler or scenario the study did not run is ``-``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from batchd_studies.framework.markdown import MISSING, markdown_table
from batchd_studies.utility.charts import DECAY_TYPES
from batchd_studies.utility.index import (
    Index,
    aggregate,
    by_decay,
    by_decay_share,
    gain,
    utilization,
)
from batchd_studies.utility.options import BASE_DEADLINE, BASE_FACTOR, GA
from batchd_studies.utility.plan import BASE, EXACT, USERS, Scenario
from batchd_studies.utility.tables import NAMES, fmt_gain

CLOSE = 0.05
CONS, EASY, PRIO = "fcfs-cons", "fcfs-easy", "prio-fifo"
SEED_FOUR = (CONS, EASY, PRIO, GA)

Verdict = tuple[bool, str] | None


@dataclass(frozen=True)
class Setting:
    """What the checks need beyond the results: the sweeps the study ran."""

    factors: Sequence[float]
    deadlines: Sequence[float]
    heavy: float


@dataclass(frozen=True)
class Claim:
    key: str
    text: str
    test: Callable[[Index, Setting], Verdict]


def _agg(index: Index, scenario: Scenario, policy: str) -> float | None:
    return index.mean(scenario, policy, aggregate)


def ranking(index: Index, _: Setting) -> Verdict:
    values = {p: _agg(index, BASE, p) for p in SEED_FOUR}
    if any(v is None for v in values.values()):
        return None
    order = sorted(SEED_FOUR, key=lambda p: values[p] or 0.0, reverse=True)
    gains = ", ".join(f"{NAMES[p]} {fmt_gain(gain(values[GA], values[p]))}" for p in SEED_FOUR[:3])
    return order == [
        GA,
        PRIO,
        EASY,
        CONS,
    ], f"{' > '.join(NAMES[p] for p in order)}; GA over {gains}"


def utilization_unchanged(index: Index, _: Setting) -> Verdict:
    values = [index.mean(BASE, p, utilization) for p in SEED_FOUR]
    if any(v is None for v in values):
        return None
    low, high = min(v or 0.0 for v in values), max(v or 0.0 for v in values)
    return high - low <= 0.01, f"{low:.3f} to {high:.3f}"


def exponential_lowest(index: Index, _: Setting) -> Verdict:
    misses = []
    for p in SEED_FOUR:
        by_kind = {k: index.mean(BASE, p, by_decay_share(k)) for k in DECAY_TYPES}
        if any(v is None for v in by_kind.values()):
            return None
        if min(by_kind, key=lambda k: by_kind[k] or 0.0) != "expected-exponential":
            misses.append(NAMES[p])
    return not misses, "every scheduler" if not misses else "not for " + ", ".join(misses)


def ga_lead_on_exponential(index: Index, _: Setting) -> Verdict:
    leads = {}
    for kind in DECAY_TYPES:
        ga = index.mean(BASE, GA, by_decay(kind))
        others = [index.mean(BASE, p, by_decay(kind)) for p in (CONS, EASY, PRIO)]
        if ga is None or any(v is None for v in others):
            return None
        mean = sum(v or 0.0 for v in others) / len(others)
        leads[kind] = (gain(ga, mean), gain(ga, others[2]))
    best = max(leads, key=lambda k: leads[k][0] or 0.0)
    lead, over_prio = leads["expected-exponential"]
    detail = f"exponential: {fmt_gain(lead)} over the others' mean, {fmt_gain(over_prio)} over Prio"
    return best == "expected-exponential", f"{detail}; largest on {best}"


def gap_grows_with_load(index: Index, s: Setting) -> Verdict:
    ratios = []
    for f in sorted({BASE_FACTOR, *s.factors}, reverse=True):
        scen = Scenario(USERS, f, BASE_DEADLINE)
        aware = [_agg(index, scen, p) for p in (PRIO, GA)]
        blind = [_agg(index, scen, p) for p in (EASY, CONS)]
        if any(v is None for v in (*aware, *blind)):
            return None
        ratios.append((f, min(v or 0.0 for v in aware) / max(v or 1.0 for v in blind)))
    rising = all(b >= a for (_, a), (_, b) in zip(ratios, ratios[1:], strict=False))
    text = ", ".join(f"{f:g}: {r:.2f}" for f, r in ratios)
    return rising, f"min(Prio, GA) / max(EASY, Cons) by factor {text}"


def more_time_more_utility(index: Index, s: Setting) -> Verdict:
    misses = []
    for p in SEED_FOUR:
        series = [
            _agg(index, Scenario(USERS, BASE_FACTOR, d), p)
            for d in sorted({BASE_DEADLINE, *s.deadlines})
        ]
        if any(v is None for v in series) or len(series) < 2:
            return None
        values = [v or 0.0 for v in series]
        if not all(b > a for a, b in zip(values, values[1:], strict=False)):
            misses.append(NAMES[p])
    return not misses, "every scheduler" if not misses else "not for " + ", ".join(misses)


def easy_resilient_to_deadline(index: Index, s: Setting) -> Verdict:
    """EASY / Prio at deadline factor 1 against EASY / Prio at the heaviest load."""
    urgent = Scenario(USERS, BASE_FACTOR, min(s.deadlines))
    heavy = Scenario(USERS, min(s.factors), BASE_DEADLINE)
    a = [_agg(index, urgent, p) for p in (EASY, PRIO)]
    b = [_agg(index, heavy, p) for p in (EASY, PRIO)]
    if any(v is None or v == 0 for v in (*a, *b)) or urgent == heavy:
        return None
    ra, rb = (a[0] or 0.0) / (a[1] or 1.0), (b[0] or 0.0) / (b[1] or 1.0)
    return (
        ra > rb,
        f"EASY / Prio {ra:.2f} at deadline factor {urgent.deadline:g}, {rb:.2f} at factor {heavy.factor:g}",
    )


def _accuracy(index: Index, factor: float, p: str) -> float | None:
    users = _agg(index, Scenario(USERS, factor, BASE_DEADLINE), p)
    exact = _agg(index, Scenario(EXACT, factor, BASE_DEADLINE), p)
    return gain(exact, users)


def accuracy_helps_but_easy(index: Index, _: Setting) -> Verdict:
    changes = {p: _accuracy(index, BASE_FACTOR, p) for p in SEED_FOUR}
    if any(v is None for v in changes.values()):
        return None
    holds = all((changes[p] or 0.0) > 0 for p in (CONS, PRIO, GA)) and (changes[EASY] or 0.0) < 0
    return holds, ", ".join(f"{NAMES[p]} {fmt_gain(changes[p])}" for p in SEED_FOUR)


def heavy_accuracy(index: Index, s: Setting) -> Verdict:
    users = Scenario(USERS, s.heavy, BASE_DEADLINE)
    prio, ga = _agg(index, users, PRIO), _agg(index, users, GA)
    up_prio, up_ga = _accuracy(index, s.heavy, PRIO), _accuracy(index, s.heavy, GA)
    if prio is None or ga is None or up_prio is None or up_ga is None:
        return None
    close = abs(gain(ga, prio) or 0.0) <= CLOSE
    holds = close and up_prio > 0 and up_ga > up_prio
    return holds, (
        f"users' runtimes: GA over Prio {fmt_gain(gain(ga, prio))}; exact runtimes: Prio "
        f"{fmt_gain(up_prio)}, GA {fmt_gain(up_ga)}"
    )


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "T1",
        "Table 1: GA > Prio > EASY > Cons in aggregate utility (GA +53 %, +14 %, +6 %)",
        ranking,
    ),
    Claim(
        "T1u",
        "Table 1: utilization unchanged by the scheduler (within 0.01)",
        utilization_unchanged,
    ),
    Claim(
        "F5a",
        "Fig. 5: expected-exponential decay earns least, for every scheduler (as a share of "
        "the start values of its jobs)",
        exponential_lowest,
    ),
    Claim(
        "F5b",
        "Fig. 5: GA's lead is largest on expected-exponential (seed: +40 % over the others' "
        "mean, +20 % over Prio)",
        ga_lead_on_exponential,
    ),
    Claim(
        "F7",
        "Fig. 7: the heavier the load, the larger the lead of Prio and GA over EASY and Cons",
        gap_grows_with_load,
    ),
    Claim(
        "F8a",
        "Fig. 8: every scheduler earns more with a larger deadline factor",
        more_time_more_utility,
    ),
    Claim(
        "F8b",
        "Fig. 8: at deadline factor 1 EASY holds up better (against Prio) than under the heaviest load",
        easy_resilient_to_deadline,
    ),
    Claim(
        "F9",
        "Fig. 9: exact runtimes help Cons, Prio and GA; EASY loses slightly",
        accuracy_helps_but_easy,
    ),
    Claim(
        "F10",
        "Fig. 10: heavy load, users' runtimes: Prio nearly equal to GA (within 5 %); exact "
        "runtimes help both, GA more",
        heavy_accuracy,
    ),
)


def claims_count(index: Index, setting: Setting) -> str:
    """How many of the claims hold, of those the runs test."""
    verdicts = [claim.test(index, setting) for claim in CLAIMS]
    tested = [v for v in verdicts if v is not None]
    held = [k.key for k, v in zip(CLAIMS, verdicts, strict=True) if v is not None and v[0]]
    failed = [k.key for k, v in zip(CLAIMS, verdicts, strict=True) if v is not None and not v[0]]
    line = f"Claims that hold: {len(held)} of the {len(tested)} tested"
    if failed:
        line += f"; those that do not: {', '.join(failed)}"
    return line + "."


def claims_table(index: Index, setting: Setting) -> str:
    rows = []
    for claim in CLAIMS:
        verdict = claim.test(index, setting)
        if verdict is None:
            cell = MISSING
        else:
            cell = f"{'**holds**' if verdict[0] else 'no'} ({verdict[1]})"
        rows.append([claim.key, claim.text, cell])
    return markdown_table(["", "the seed's claim", "batchd"], rows, left=3)
