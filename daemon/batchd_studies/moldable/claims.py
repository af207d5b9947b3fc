"""The seed's statements (sec. 5.2 and 6.2, Figs. 2-5 and 7-10) checked against batchd.

The seed's figures print no numbers, so each statement becomes a test here: "best" is
the lowest mean over the loads of the average turnaround; "beats" compares the same
means and says at how many loads it holds; "does not pay" allows ``CLOSE`` (5 %).
A claim that needs a scheduler or scenario the study did not run is ``-``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from batchd_studies.framework.markdown import MISSING, markdown_table
from batchd_studies.moldable.index import LARGEST_CATEGORY, SMALL_CATEGORIES, Index
from batchd_studies.moldable.plan import ITERATIVE, Scheduler
from batchd_studies.moldable.tables import fmt_hours

CLOSE = 0.05

Verdict = tuple[bool, str] | None


@dataclass(frozen=True)
class Setting:
    loads: Sequence[float]
    grid: Sequence[Scheduler]  # the fair-share settings the study ran


@dataclass(frozen=True)
class Claim:
    key: str
    text: str
    test: Callable[[Index, Setting], Verdict]


def _find(grid: Sequence[Scheduler], obf: float, ef: float) -> Scheduler | None:
    return next((s for s in grid if s.obf == obf and s.ef == ef), None)


def _mean(index: Index, a: str, s: Setting, key: str) -> float | None:
    return index.mean_turnaround(a, s.loads, key)


def _best_is(
    a: str, pick: Callable[[Setting], Scheduler | None]
) -> Callable[[Index, Setting], Verdict]:
    def test(index: Index, s: Setting) -> Verdict:
        want = pick(s)
        best = index.best(a, s.loads, s.grid)
        if want is None or best is None:
            return None
        text = (
            f"best {best.label} ({fmt_hours(_mean(index, a, s, best.key))} h); "
            f"{want.label}: {fmt_hours(_mean(index, a, s, want.key))} h"
        )
        return best.key == want.key, text

    return test


def _high_obf_ef1(s: Setting) -> Scheduler | None:
    obfs = [g.obf for g in s.grid if g.obf is not None]
    return _find(s.grid, max(obfs), 1.0) if obfs else None


def _no_obf_ef0(s: Setting) -> Scheduler | None:
    return _find(s.grid, 1.0, 0.0)


def _low_obf_more_ef_hurts(index: Index, s: Setting) -> Verdict:
    obfs = [g.obf for g in s.grid if g.obf is not None]
    if not obfs:
        return None
    low = min(obfs)
    plain, eff = _find(s.grid, low, 0.0), _find(s.grid, low, 1.0)
    if plain is None or eff is None:
        return None
    tp, te = _mean(index, "system", s, plain.key), _mean(index, "system", s, eff.key)
    if tp is None or te is None:
        return None
    return te > tp, f"{eff.label} {fmt_hours(te)} h against {plain.label} {fmt_hours(tp)} h"


def _overbooking_hurts(index: Index, s: Setting) -> Verdict:
    obfs = sorted({g.obf for g in s.grid if g.obf is not None})
    efs = sorted({g.ef for g in s.grid if g.ef is not None})
    if len(obfs) < 2:
        return None
    parts, holds = [], True
    for ef in efs:
        low, high = _find(s.grid, obfs[0], ef), _find(s.grid, obfs[-1], ef)
        if low is None or high is None:
            continue
        tl, th = _mean(index, "random", s, low.key), _mean(index, "random", s, high.key)
        if tl is None or th is None:
            return None
        holds = holds and th > tl
        parts.append(f"EF {ef:g}: {fmt_hours(tl)} -> {fmt_hours(th)} h")
    return (holds, "; ".join(parts)) if parts else None


def _iterative_beats(a: str, every: bool) -> Callable[[Index, Setting], Verdict]:
    def test(index: Index, s: Setting) -> Verdict:
        mine = _mean(index, a, s, ITERATIVE)
        best = index.best(a, s.loads, s.grid)
        if mine is None or best is None:
            return None
        rivals = s.grid if every else [best]
        wins = sum(
            1
            for load in s.loads
            if all(
                (index.turnaround(a, load, ITERATIVE) or 0.0)
                < (index.turnaround(a, load, r.key) or 0.0)
                for r in rivals
            )
        )
        other = _mean(index, a, s, best.key)
        assert other is not None
        text = (
            f"iterative {fmt_hours(mine)} h, best fair-share ({best.label}) {fmt_hours(other)} h "
            f"({100 * (mine - other) / other:+.1f} %); lowest at {wins} of {len(s.loads)} loads"
        )
        return mine < other, text

    return test


def _small_jobs_do_not_pay(index: Index, s: Setting) -> Verdict:
    parts, holds, cells = [], True, 0
    for a in ("system", "random"):
        best = index.best(a, s.loads, s.grid)
        if best is None:
            continue
        worse = []
        for load in s.loads:
            for cat in SMALL_CATEGORIES:
                mine = index.turnaround(a, load, ITERATIVE, cat)
                theirs = index.turnaround(a, load, best.key, cat)
                if mine is None or theirs is None:
                    continue
                cells += 1
                if mine > theirs * (1 + CLOSE):
                    worse.append(f"{cat} at {load:g}")
        holds = holds and not worse
        parts.append(
            f"A {a} against {best.label}: "
            + (f"worse in {', '.join(worse)}" if worse else "never worse")
        )
    return (holds, "; ".join(parts)) if cells else None


def _largest_jobs_do_not_pay(index: Index, s: Setting) -> Verdict:
    best = index.best("system", s.loads, s.grid)
    if best is None:
        return None
    worse, cells = [], 0
    for load in s.loads:
        mine = index.turnaround("system", load, ITERATIVE, LARGEST_CATEGORY)
        theirs = index.turnaround("system", load, best.key, LARGEST_CATEGORY)
        if mine is None or theirs is None:
            continue
        cells += 1
        if mine > theirs * (1 + CLOSE):
            worse.append(f"{load:g} ({fmt_hours(mine)} h against {fmt_hours(theirs)} h)")
    if not cells:
        return None
    text = f"against {best.label}: " + (f"worse at {', '.join(worse)}" if worse else "never worse")
    return not worse, text


CLAIMS = (
    Claim(
        "fig2-best",
        "A = system size: a high overbooking factor with EF 1 is the best fair-share setting (Fig. 2)",
        _best_is("system", _high_obf_ef1),
    ),
    Claim(
        "fig2-low-obf",
        "A = system size: with low overbooking, raising the efficiency factor hurts (Fig. 2)",
        _low_obf_more_ef_hurts,
    ),
    Claim(
        "fig4-best",
        "A random: ObF 1 with EF 0 (plain fair share) is the best fair-share setting (Fig. 4)",
        _best_is("random", _no_obf_ef0),
    ),
    Claim(
        "fig5-overbooking",
        "A random: overbooking hurts at every efficiency factor (Figs. 4 and 5)",
        _overbooking_hurts,
    ),
    Claim(
        "fig7-iterative",
        "A = system size: the iterative scheme beats the best fair-share setting (Fig. 7)",
        _iterative_beats("system", every=False),
    ),
    Claim(
        "fig9-iterative",
        "A random: the iterative scheme beats every tuned fair-share setting (Fig. 9)",
        _iterative_beats("random", every=True),
    ),
    Claim(
        "fig8-10-small",
        f"Small jobs do not pay for it: in the 200-3,200 and 3,200-100,000 processor-second "
        f"categories the iterative scheme is within {CLOSE:.0%} of the best fair-share "
        "setting or better, at every load (Figs. 8 and 10)",
        _small_jobs_do_not_pay,
    ),
    Claim(
        "fig8-large",
        f"A = system size: the largest jobs (above 2,000,000 processor-seconds) do not pay "
        f"for it either: within {CLOSE:.0%} of the best fair-share setting or better, at every "
        "load (Fig. 8)",
        _largest_jobs_do_not_pay,
    ),
)


def check_claims(index: Index, setting: Setting) -> list[tuple[Claim, Verdict]]:
    return [(claim, claim.test(index, setting)) for claim in CLAIMS]


def claims_count(checked: Sequence[tuple[Claim, Verdict]]) -> str:
    """How many of the claims the runs test hold."""
    tested = [v for _, v in checked if v is not None]
    held = sum(1 for v in tested if v[0])
    untested = len(checked) - len(tested)
    tail = f" ({untested} not tested: their schedulers did not run)" if untested else ""
    return f"Claims that hold: {held} of the {len(tested)} tested{tail}."


def claims_table(checked: Sequence[tuple[Claim, Verdict]]) -> str:
    rows = []
    for claim, verdict in checked:
        if verdict is None:
            rows.append([claim.text, MISSING, "not run"])
        else:
            rows.append([claim.text, "holds" if verdict[0] else "does not hold", verdict[1]])
    return markdown_table(["the seed says", "on batchd", "numbers"], rows, left=3)
