"""The seed's own numbers (Tables 4-6, quality ARTwW, shrinking factor 1.00; ``paper``)
beside batchd's.

Only for CTC_syn and KTH_syn, which batchd generates from the same archive traces
(its SDSC_syn comes from another log of the SDSC machine, and PC2's trace is not
public). One column per FCFS candidate that was run, and the seed's last.

The seed's Table 6 totals leave out case 10b (CTC_syn: its rows add up to 16,983
against a total of 16,946, the 37 of case 10b); shares of the seed's cases are of
its printed total, as the paper's own derived rows are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from batchd_studies.dynp.configs import CANDIDATES, POLICIES, dynp_label
from batchd_studies.dynp.paper import SEED_CASES, SEED_RUNS
from batchd_studies.dynp.tables import (
    CASE_GROUPS,
    Result,
    Summary,
    dynp_stats,
    fmt_share,
    index_results,
)
from batchd_studies.framework.markdown import (
    MISSING,
    fmt_float,
    fmt_int,
    fmt_percent,
    fmt_seconds,
    markdown_table,
)


def seed_traces(traces: Sequence[str]) -> list[str]:
    """The job sets of the study that the seed reports on."""
    return [t for t in traces if t in SEED_RUNS]


def _candidates(
    index: Mapping[tuple[str, float, str], Summary], trace: str, at: float
) -> list[str]:
    return [c for c in CANDIDATES if (trace, at, dynp_label("advanced", "artww", c)) in index]


def summary_rows(simple: Summary | None, advanced: Summary | None) -> list[str]:
    """One column of the Tables 4/5 comparison from batchd's two runs."""
    stats = dynp_stats(advanced)
    calls = stats.get("decider_calls")
    a, s = (None if x is None else x.get("artww") for x in (advanced, simple))
    started = stats.get("jobs_started", {})
    switches = stats.get("switches", {})
    return [
        fmt_seconds(s),
        fmt_seconds(a),
        MISSING if a is None or not s else f"{float(a) / float(s):.3f}",
        fmt_percent(None if advanced is None else advanced.get("utilization")),
        *(fmt_int(started.get(p)) for p in POLICIES),
        fmt_int(calls),
        *(fmt_percent(_share(switches.get(p), calls)) for p in POLICIES),
        fmt_percent(stats.get("kept_share")),
        fmt_float(stats.get("avg_backlog")),
    ]


def _seed_summary(trace: str) -> list[str]:
    seed = SEED_RUNS[trace]
    simple, advanced = seed["artww"]
    return [
        fmt_seconds(simple),
        fmt_seconds(advanced),
        f"{advanced / simple:.3f}",
        fmt_percent(seed["utilization"][1]),
        *(fmt_int(seed["jobs_started"][1][p]) for p in POLICIES),
        fmt_int(seed["decider_calls"]),
        *(fmt_percent(seed["switches"][p]) for p in POLICIES),
        fmt_percent(seed["kept_share"]),
        fmt_float(seed["avg_backlog"]),
    ]


def _share(count: int | None, calls: int | None) -> float | None:
    return None if count is None or not calls else count / calls


SUMMARY_ROWS = (
    "ARTwW simple",
    "ARTwW advanced",
    "advanced / simple",
    "UTIL (advanced)",
    *(f"jobs started with {p} (advanced)" for p in POLICIES),
    "decider calls (advanced)",
    *(f"switches to {p}" for p in POLICIES),
    "same policy",
    "average backlog at start of self-tuning",
)


def seed_summary_table(results: Sequence[Result], trace: str, shrink: float) -> str:
    """Tables 4 and 5 (quality ARTwW) of one job set: batchd per FCFS candidate, the seed."""
    index = index_results(results)
    at = round(float(shrink), 6)
    columns = [
        summary_rows(
            index.get((trace, at, dynp_label("simple", "artww", c))),
            index.get((trace, at, dynp_label("advanced", "artww", c))),
        )
        for c in _candidates(index, trace, at)
    ]
    columns.append(_seed_summary(trace))
    rows = [[name, *(col[i] for col in columns)] for i, name in enumerate(SUMMARY_ROWS)]
    return markdown_table(["", *_candidates(index, trace, at), "seed"], rows)


def seed_case_table(results: Sequence[Result], trace: str, shrink: float) -> str:
    """Table 6 of one job set, counts and shares of all calls: batchd per candidate, the seed."""
    index = index_results(results)
    at = round(float(shrink), 6)
    candidates = _candidates(index, trace, at)
    columns: list[list[str]] = []
    for c in candidates:
        cases = dynp_stats(index.get((trace, at, dynp_label("advanced", "artww", c)))).get(
            "cases", {}
        )
        total = sum(int(v) for v in cases.values())
        counts = [sum(int(cases.get(k, 0)) for k in group) for _, group in CASE_GROUPS]
        columns.append([*(fmt_share(n, total) for n in counts), fmt_int(total)])
    *seed, seed_total = SEED_CASES[trace]
    columns.append([*(fmt_share(n, seed_total) for n in seed), fmt_int(seed_total)])
    labels = [*(label for label, _ in CASE_GROUPS), "total"]
    rows = [[label, *(col[i] for col in columns)] for i, label in enumerate(labels)]
    return markdown_table(["", *candidates, "seed"], rows)
