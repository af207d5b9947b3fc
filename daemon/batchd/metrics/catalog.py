"""Every metric the daemon exports: name, type, labels and help text, in one place.

The exporter takes its help texts from here, docs/monitoring.md lists the same
set, and the tests check the dashboard and the alerting rules against it.
Labels are bounded sets: pools, queues, states, policies, outcomes, Table 1
cases; never job ids, and user names only behind the opt-in of ``[metrics]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["gauge", "counter", "histogram", "info"]


@dataclass(frozen=True)
class MetricDef:
    name: str
    kind: Kind
    labels: tuple[str, ...]
    help: str
    optional: bool = False  # only with a machine or config that has it


# Batch jobs wait and run from seconds to days.
TIME_BUCKETS = (
    10.0, 60.0, 300.0, 900.0, 1800.0, 3600.0, 7200.0, 14400.0, 28800.0,
    43200.0, 86400.0, 172800.0, 345600.0, 604800.0,
)  # fmt: skip
SLOWDOWN_BUCKETS = (1.0, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0, 1000.0)
CYCLE_BUCKETS = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
)  # fmt: skip
SEARCH_BUCKETS = (
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip
SEARCH_STOPS = ("generations", "budget")
# Moldable jobs (Sabin et al.'s moldable paper): chosen widths in nodes, and chosen / requested width.
WIDTH_BUCKETS = tuple(float(2**k) for k in range(17))  # 1 .. 65,536 nodes
WIDTH_RATIO_BUCKETS = tuple(2.0**k for k in range(-3, 11))  # 1/8 .. 1024
SLOWDOWN_BOUND = 60  # seconds: short jobs do not blow up the slowdown (as SLDwW60)

JOB_STATES = ("queued", "held", "waiting", "running")
NODE_STATES = ("idle", "allocated", "reserved", "offline", "down")
# How a job left the system (batchd_jobs_completed_total's outcomes), with what each means.
OUTCOME_MEANINGS = {
    "ok": "ran to its end",
    "walltime": "killed at its walltime",
    "cancelled": "deleted",
    "overflow": "killed at the end of its window",
    "node_fail": "killed by a node failure, or its supervisor was lost",
    "dependency": "its dependency could never be met",
    "signal": "an emulated job ended by qsig -s KILL or TERM",
    "resv_end": "killed, or deleted unrun, when its reservation ended",
    "failed": "its script exited non-zero, or it could not start",
    "mem": "killed over its mem",
}
OUTCOMES = tuple(OUTCOME_MEANINGS)
# Why a running job went back to its queue (batchd_jobs_requeued_total's reasons).
REQUEUE_MEANINGS = {
    "node_fail": "a node it ran on failed",
    "overflow": "its window closed",
    "rerun": "qrerun",
    "restart": "its process had not started when the daemon stopped",
}
REQUEUE_REASONS = tuple(REQUEUE_MEANINGS)


def listed(meanings: dict[str, str]) -> str:
    """``a (what a means), b (...)``: every label value a HELP text names."""
    return ", ".join(f"{value} ({meaning})" for value, meaning in meanings.items())


PERIODS = ("prime", "nonprime")

METRICS: tuple[MetricDef, ...] = (
    # -- the machine --------------------------------------------------------------
    MetricDef("batchd_nodes", "gauge", ("pool", "state"), "Nodes by pool and state"),
    MetricDef(
        "batchd_cores",
        "gauge",
        ("pool", "state"),
        "Cores by pool and state (machines configured with cores_per_node)",
        optional=True,
    ),
    MetricDef(
        "batchd_utilization_ratio",
        "gauge",
        ("pool",),
        "Share of the pool's nodes allocated to jobs now",
    ),
    MetricDef(
        "batchd_utilization_window_ratio",
        "gauge",
        ("pool",),
        "Share of the pool's node-seconds allocated to jobs over the last "
        "batchd_utilization_window_seconds of emulated time",
    ),
    MetricDef(
        "batchd_utilization_window_seconds",
        "gauge",
        (),
        "Length of the sliding emulated window of batchd_utilization_window_ratio",
    ),
    MetricDef(
        "batchd_allocated_node_seconds_total",
        "counter",
        ("pool",),
        "Emulated node-seconds allocated to jobs (rate over batchd_emulated_timestamp_seconds "
        "gives utilization over any window)",
    ),
    # -- the queues ---------------------------------------------------------------
    MetricDef("batchd_jobs", "gauge", ("queue", "state"), "Unfinished jobs by queue and state"),
    MetricDef("batchd_jobs_submitted_total", "counter", ("queue",), "Jobs accepted by queue"),
    MetricDef(
        "batchd_jobs_started_total",
        "counter",
        ("queue", "policy"),
        "Job starts by queue and by the policy (or dynP order) in force",
    ),
    MetricDef(
        "batchd_grid_jobs_started_total",
        "counter",
        ("pool", "structure"),
        "Job starts on each machine of a grid site, where the grid layer placed them, by the "
        "grid structure in force (sites without [grid] do not export it)",
    ),
    MetricDef(
        "batchd_utility_earned_total",
        "counter",
        ("queue",),
        "Utility earned by jobs with a utility function (Lee's utility paper) as they ended: the "
        "function's value at their response time",
    ),
    MetricDef(
        "batchd_utility_lost_total",
        "counter",
        ("queue",),
        "Utility lost by jobs with a utility function as they ended: their start value "
        "minus what they earned",
    ),
    MetricDef(
        "batchd_jobs_completed_total",
        "counter",
        ("queue", "outcome"),
        f"Jobs that left the system by queue and outcome: {listed(OUTCOME_MEANINGS)}",
    ),
    MetricDef(
        "batchd_jobs_requeued_total",
        "counter",
        ("queue", "reason"),
        f"Running jobs put back in the queue, by reason: {listed(REQUEUE_MEANINGS)}",
    ),
    MetricDef(
        "batchd_job_wait_seconds",
        "histogram",
        ("queue",),
        "Emulated time from eligible to start, observed at start",
    ),
    MetricDef(
        "batchd_job_response_seconds",
        "histogram",
        ("queue",),
        "Emulated time from eligible to end, observed when a job that ran ends",
    ),
    MetricDef(
        "batchd_job_slowdown",
        "histogram",
        ("queue",),
        "Bounded slowdown max(response, 60 s) / max(run, 60 s), observed when a job ends",
    ),
    MetricDef(
        "batchd_backlog_node_seconds",
        "gauge",
        ("queue",),
        "Requested node-seconds (nodes x walltime) of the queued jobs",
    ),
    MetricDef(
        "batchd_queue_head_planned_start_timestamp_seconds",
        "gauge",
        ("pool",),
        "Planned start of the first job in the policy's order, emulated seconds since the "
        "epoch (NaN with an empty queue or a head that cannot start)",
    ),
    MetricDef(
        "batchd_queue_head_wait_seconds",
        "gauge",
        ("pool",),
        "How long the first job in the policy's order has waited so far (0 with an empty queue)",
    ),
    MetricDef(
        "batchd_plan_makespan_seconds",
        "gauge",
        ("pool",),
        "Emulated seconds from now until the current plan (running and queued jobs) ends",
    ),
    MetricDef(
        "batchd_plan_age_seconds",
        "gauge",
        (),
        "Wall seconds since the planned-schedule gauges were last computed",
    ),
    # -- the scheduler ------------------------------------------------------------
    MetricDef(
        "batchd_scheduler_policy",
        "gauge",
        ("pool", "policy"),
        "1 for the scheduling policy a pool runs, 0 for every other registered policy",
    ),
    MetricDef(
        "batchd_scheduler_order",
        "gauge",
        ("pool", "order"),
        "1 for the queue order in force in a pool (FCFS, SJF or LJF; dynP switches it), "
        "0 otherwise",
    ),
    MetricDef(
        "batchd_policy_switches_total",
        "counter",
        ("pool", "from", "to"),
        "Policy switches: by a manager (policy names) and by dynP's self-tuning (orders)",
    ),
    MetricDef(
        "batchd_dynp_decider_calls_total",
        "counter",
        ("pool", "case"),
        "Self-tuning dynP decider calls by the case of Table 1 (Streit's dynP paper)",
    ),
    MetricDef(
        "batchd_dynp_tuning_seconds",
        "histogram",
        (),
        "Wall time of one self-tuning step (three plans and the decider)",
    ),
    MetricDef(
        "batchd_ga_search_seconds",
        "histogram",
        ("stop",),
        "Wall time of one ga search (a step's generations, off the event loop), by what "
        "stopped it: generations (all ran) or budget (the time budget ran out first)",
    ),
    MetricDef(
        "batchd_moldable_width_nodes",
        "histogram",
        ("pool",),
        "Width a moldable job (a range of widths) started with, chosen by the policy",
    ),
    MetricDef(
        "batchd_moldable_width_ratio",
        "histogram",
        ("pool",),
        "Chosen width / requested width of a moldable job, observed when it starts",
    ),
    MetricDef(
        "batchd_scheduler_cycle_seconds",
        "histogram",
        (),
        "Wall time of one scheduling cycle: the events up to now and the passes they cause",
    ),
    MetricDef(
        "batchd_build_info",
        "gauge",
        ("version", "python"),
        "Always 1: the daemon's version and the Python it runs on, as labels",
    ),
    # -- the clock ----------------------------------------------------------------
    MetricDef(
        "batchd_emulated_timestamp_seconds", "gauge", (), "Emulated clock, seconds since the epoch"
    ),
    MetricDef("batchd_clock_speed", "gauge", (), "Emulated seconds per wall second"),
    MetricDef(
        "batchd_state_save_failing",
        "gauge",
        (),
        "1 while the state file takes no writes (a full disk, an I/O error): changes are "
        "refused and the daemon retries saving; 0 when saving works",
    ),
    MetricDef(
        "batchd_prime_time_window",
        "gauge",
        ("window",),
        "1 for the calendar window in force now (prime or nonprime), 0 for the other",
    ),
    MetricDef(
        "batchd_window_allocated_node_seconds_total",
        "counter",
        ("pool", "window"),
        "Emulated node-seconds allocated to jobs during prime and during non-prime time",
    ),
    MetricDef(
        "batchd_window_seconds_total",
        "counter",
        ("window",),
        "Emulated seconds spent in prime and in non-prime time since the daemon started "
        "(utilization by window: the node-seconds rate over this rate over the nodes)",
    ),
    MetricDef(
        "batchd_prime_time_next_change_timestamp_seconds",
        "gauge",
        (),
        "When the calendar window changes next, emulated seconds since the epoch",
    ),
    # -- the listeners --------------------------------------------------------------
    MetricDef(
        "batchd_connections_open",
        "gauge",
        (),
        "Connections open now on the Unix socket and the TCP listener",
    ),
    MetricDef(
        "batchd_connections_refused_total",
        "counter",
        ("reason",),
        "Connections refused or dropped, by reason: peer_limit (the caller's cap), "
        "total_limit (the cap for all), header_timeout (no complete request head in time), "
        "accept_failed (the daemon could not take a connection: no file descriptor left)",
    ),
    # -- per user, opt-in ---------------------------------------------------------
    MetricDef(
        "batchd_user_jobs",
        "gauge",
        ("user", "state"),
        "Unfinished jobs by user and state (opt-in; users beyond the cap count as _other)",
        optional=True,
    ),
    MetricDef(
        "batchd_user_jobs_submitted_total",
        "counter",
        ("user",),
        "Jobs accepted by user (opt-in; users beyond the cap count as _other)",
        optional=True,
    ),
)

BY_NAME = {m.name: m for m in METRICS}
# prometheus-client's default collectors, registered beside the service's metrics.
PROCESS_METRICS = (
    "process_cpu_seconds_total",
    "process_resident_memory_bytes",
    "process_open_fds",
    "process_start_time_seconds",
    "python_gc_collections_total",
    "python_info",
)


def series_names(m: MetricDef) -> tuple[str, ...]:
    """The sample names a metric appears under in the exposition format."""
    if m.kind == "histogram":
        return (f"{m.name}_bucket", f"{m.name}_sum", f"{m.name}_count")
    if m.kind == "info":
        return (f"{m.name}_info",)
    return (m.name,)


def all_series_names() -> set[str]:
    names = {s for m in METRICS for s in series_names(m)}
    names.update(PROCESS_METRICS)
    return names
