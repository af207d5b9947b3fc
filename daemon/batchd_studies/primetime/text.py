"""The fixed text of the prime-time report: the setup and the differences from the paper."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MUST_FIT_SETUP = (
    "**must_fit = true** (batchd's default): a large job starts only if its estimate ends "
    "before non-prime time does, so a large job overflows only if no non-prime window "
    "can hold it (longer than the weekend)"
)
NO_FIT_SETUP = (
    "**must_fit = false** (the paper's setting): a large job may start at any moment "
    "of non-prime time and is killed when prime time begins"
)
MUST_FIT_DIFFERENCE = (
    "- **must_fit.** Here a large job starts only if its estimate ends before non-prime "
    "time does. The paper's large jobs started at any time of non-prime time and were "
    "killed (or checkpointed) at its end, which is its overflow (10-18% for most limits). "
    "With must_fit the only overflow is a job that no non-prime window can hold, so the "
    "overflow rows are near zero and the price is paid as waiting instead: a large job "
    "waits for a window long enough for its request. Rerun with `--must-fit false` for "
    "the paper's behaviour."
)
NO_FIT_DIFFERENCE = (
    "- **must_fit = false** as in the paper: large jobs start at any time of "
    "non-prime time and are killed when it ends (overflow)."
)


def setup_section(
    must_fit: bool, facts: Mapping[str, Mapping[int, Mapping[str, Any]]]
) -> list[str]:
    """The calendar, the classes, the column names and the metrics, as replayed."""
    any_facts = next((f for by_size in facts.values() for f in by_size.values()), None)
    slot = any_facts["slot"] if any_facts else 13 * 3600
    fit = MUST_FIT_SETUP if must_fit else NO_FIT_SETUP
    return [
        "## Setup",
        "",
        "- Calendar: the NAS SP/2 slots of the paper (Table 1): weekdays prime 06:00-19:00 "
        f"({slot / 3600:g} h), weekday nights and weekends non-prime, no holidays; local time "
        "from the trace header (UnixStartTime, TimeZoneString).",
        "- Small jobs (the prime queue) are within both limits, or ask for at most 15 minutes, "
        "or for at most 3% of the nodes; they run at any time. Large jobs run in non-prime "
        "time only. A runtime limit of R% is R% of the weekday prime slot "
        f"({slot / 3600 / 10:g} h per 10%); 100% means no runtime limit, so 100-100 is one "
        "queue. A jobsize limit of J% is J% of the machine's nodes.",
        "- Column names like `30-100` are **runtime limit - jobsize limit**: `30-100` is a "
        "runtime limit of 30% with no jobsize limit. The paper's rule says \"fix one of them "
        'at around 30% and set the other at 100%"; `100-30` (jobsize 30%, no runtime limit) '
        "is the other reading and is shown as an extra column.",
        f"- Overflow: {fit}; overflow jobs are killed and not rerun (`overflow=kill`).",
        "- Estimates are the users' requested times from the trace (SWF field 9); jobs "
        "running past them are killed at the request, as batchd does by default. Classes and "
        "the must-fit rule use the request.",
        "- Response time, wait and slowdown (response / run time, plain as in the paper) are "
        "per class: prime = small jobs, non = large jobs, all = every job. Utilization is "
        "node-time used during prime hours, during non-prime hours and overall, from the "
        "first submission to the last end. Success-prime: share of the small jobs submitted "
        "in prime time that end before that prime slot does. Overflow: overflow jobs in % "
        "of all jobs.",
        "",
    ]


def differences_section(must_fit: bool) -> list[str]:
    """Where this setup departs from the paper's, and why."""
    return [
        "## Differences from the paper's setup",
        "",
        "- **Workload.** No NAS SP/2 trace is public; these are other machines' logs, whose "
        "users were not working under prime-time limits. Their requests are up to 18 h or "
        "more, while the NAS non-prime queue allowed 10 h (Table 1), so many large jobs fit "
        "only in the weekend window and the non-prime queue can fall behind.",
        MUST_FIT_DIFFERENCE if must_fit else NO_FIT_DIFFERENCE,
        "- **Overflow jobs.** Killed jobs are not rerun (`overflow=kill`); they count in the "
        "response times with their end at the kill.",
        "- **Estimates.** Classes and the fit rule use the users' requested times; the paper "
        "does not say whether it used requests or actual run times.",
        "- **Time.** The calendar is applied in the trace's own time zone from its header; "
        "no holidays.",
        "- **Measuring window.** Metrics cover the whole schedule, from the first submission to "
        "the last end, including the drain of a backlog after the last submission; the "
        "context tables give utilization over the submission span only, the backlog and the "
        "drain.",
        "- **Machine sizes.** The paper varied 80..160 nodes for a 144-node machine; here the "
        "sizes are those of `--nodes` for the trace's own machine.",
        "",
    ]
