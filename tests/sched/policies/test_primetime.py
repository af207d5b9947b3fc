"""The prime/non-prime time policy (Lo and Mache's prime-time paper) on hand-made traces that cross windows.

The clock's time 0 is the epoch, Thursday 1970-01-01 00:00 UTC, with the default
calendar: prime time 06:00-19:00 on weekdays, non-prime the rest and all weekend.

    Thu 06:00 = 21,600   Thu 19:00 = 68,400   Fri 06:00 = 108,000
    Fri 19:00 = 154,800  Mon 06:00 = 367,200

A 10-node machine; prime limits 5 nodes and 2 h; always small: estimates of at
most 15 minutes (3% of 10 nodes is 0 nodes).
"""

from __future__ import annotations

import json
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batchd.engine.core import Engine
from batchd.model.calendar import PrimeCalendar
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.replay import ReplayOptions, run_replay
from batchd.sched.core.policy import BuildContext
from batchd.sched.policies.primetime import (
    NonPrimeTime,
    PrimeTime,
    PrimeTimeParams,
    parse_limit,
)
from batchd.sched.registry import PolicyError, make_policy

THU_0600, THU_1900, FRI_0600, FRI_1900, MON_0600 = 21_600, 68_400, 108_000, 154_800, 367_200
HOUR = 3600
DAY = 24 * HOUR
NODES = 10


def run(
    jobs: list[Job], nodes: int = NODES, *, kill: bool = True, **params: str
) -> tuple[Engine, PrimeTime, dict[int, Job]]:
    settings = {"prime_nodes": "5", "prime_runtime": "02:00:00", "timezone": "UTC", **params}
    policy = make_policy("primetime", settings)
    assert isinstance(policy, PrimeTime)
    engine = Engine(Grid([Machine("m", nodes)]), [policy], kill=kill)
    busy: dict[int, int] = {}

    def started(job: Job) -> None:
        for node in job.units:
            assert node not in busy
            busy[node] = job.id

    def ended(job: Job) -> None:
        for node in job.units:
            assert busy.pop(node) == job.id

    def requeued(job: Job) -> None:
        assert job.units == [] and job.start < 0
        for node in [n for n, holder in busy.items() if holder == job.id]:
            del busy[node]

    engine.on_start.append(started)
    engine.on_end.append(ended)
    engine.on_requeue.append(requeued)
    engine.load(jobs)
    engine.run()
    assert not busy
    return engine, policy, {j.id: j for j in jobs}


def job(id: int, submit: int, width: int, estimate: int, runtime: int | None = None) -> Job:
    return Job(id=id, submit=submit, width=width, estimate=estimate, runtime=runtime or estimate)


def test_large_jobs_wait_for_non_prime_and_small_ones_run_at_once() -> None:
    _, policy, jobs = run(
        [
            job(1, 10 * HOUR, 8, HOUR),  # too wide for prime: waits until 19:00
            job(2, 10 * HOUR, 8, 600),  # wide but 10 minutes: always small
            job(3, 10 * HOUR, 2, 3 * HOUR),  # too long for prime: waits until 19:00
            job(4, 10 * HOUR, 2, HOUR),  # small
        ]
    )
    assert (jobs[2].start, jobs[2].end) == (10 * HOUR, 10 * HOUR + 600)
    assert jobs[4].start == 10 * HOUR  # beside J2: 8 + 2 nodes
    assert jobs[1].start == jobs[3].start == THU_1900
    assert [policy.is_large(jobs[i]) for i in (1, 2, 3, 4)] == [True, False, True, False]
    assert all(j.result.outcome == "ok" for j in jobs.values())


def test_a_job_starts_only_if_it_ends_before_non_prime_does() -> None:
    _, _, jobs = run(
        [
            job(1, 20 * HOUR, 4, 12 * HOUR),  # Thu 20:00: 12 h does not fit before Fri 06:00
            job(2, 20 * HOUR, 4, 10 * HOUR),  # 10 h fits: starts at once
            job(3, 36 * HOUR, 6, 30 * HOUR),  # Fri 12:00, 30 h: only the weekend holds it
        ]
    )
    assert jobs[2].start == 20 * HOUR and jobs[2].end == 30 * HOUR <= FRI_0600
    assert jobs[1].start == FRI_1900
    assert jobs[3].start == FRI_1900 and jobs[3].end == FRI_1900 + 30 * HOUR <= MON_0600


def test_overflow_kill_at_the_end_of_non_prime() -> None:
    _, policy, jobs = run([job(1, 20 * HOUR, 4, 20 * HOUR)], must_fit="false")
    j = jobs[1]
    assert (j.start, j.end, j.result.outcome) == (20 * HOUR, FRI_0600, "overflow")
    assert policy.overflow_killed == 1


def test_overflow_requeue_runs_again_next_non_prime() -> None:
    engine, policy, jobs = run(
        [job(1, 20 * HOUR, 4, 20 * HOUR)], must_fit="false", overflow="requeue"
    )
    j = jobs[1]
    assert (j.start, j.end, j.result.outcome) == (FRI_1900, FRI_1900 + 20 * HOUR, "ok")
    assert policy.requeues == {1: 1} and policy.overflow_killed == 0
    assert len(engine.finished) == 1


def test_overflow_with_estimates_exceeded_and_no_kill() -> None:
    # It fits by its estimate (8 h from 20:00) but runs 12 h: killed at 06:00 as overflow.
    _, _, jobs = run([job(1, 20 * HOUR, 4, 8 * HOUR, 12 * HOUR)], kill=False)
    assert (jobs[1].end, jobs[1].result.outcome) == (FRI_0600, "overflow")


def test_a_job_no_window_can_hold_runs_and_overflows() -> None:
    # 70 h is longer than any non-prime window (the weekend is 59 h): it would wait for
    # ever, so it starts at the next non-prime time and overflows at its end.
    _, _, jobs = run([job(1, 10 * HOUR, 4, 70 * HOUR)])
    assert (jobs[1].start, jobs[1].end, jobs[1].result.outcome) == (THU_1900, FRI_0600, "overflow")


def test_a_holiday_is_non_prime_all_day(tmp_path: Path) -> None:
    holidays = tmp_path / "holidays"
    holidays.write_text(
        "YEAR 1970\nweekday 0600 1900\nsaturday none all\nsunday none all\n  2  Jan 2  Holiday\n"
    )
    _, _, jobs = run([job(1, 34 * HOUR, 8, 3 * HOUR)], calendar=str(holidays))
    assert jobs[1].start == 34 * HOUR  # Friday 10:00, a holiday: non-prime
    _, _, jobs = run([job(1, 34 * HOUR, 8, 3 * HOUR)])
    assert jobs[1].start == FRI_1900  # the same Friday without the holiday


def test_percent_limits_and_one_queue_at_100() -> None:
    policy = make_policy(
        "primetime", {"prime_nodes": "30%", "prime_runtime": "30%"}, BuildContext(nodes=128)
    )
    assert isinstance(policy, PrimeTime)
    assert policy.limits() == {
        "prime_nodes": 38,
        "prime_runtime": int(13 * HOUR * 0.3),
        "exempt_runtime": 900,
        "exempt_nodes": 3,
    }
    assert policy.is_small(job(1, 0, 3, 20 * HOUR))  # 3% of 128 nodes: always small
    assert not policy.is_small(job(2, 0, 39, HOUR))
    one = make_policy(
        "primetime", {"prime_nodes": "100%", "prime_runtime": "100%"}, BuildContext(nodes=128)
    )
    assert isinstance(one, PrimeTime)
    assert one.is_small(job(3, 0, 128, 1000 * HOUR))


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"prime_nodes": "0"}, "prime_nodes"),
        ({"prime_nodes": "120%"}, "(0, 100]"),
        ({"prime_runtime": "soon"}, "prime_runtime"),
        ({"discipline": "nosuch"}, "discipline"),
        ({"overflow": "keep"}, "overflow"),
        ({"calendar": "/no/such/holidays"}, "no such holidays file"),
        ({"timezone": "Mars/Olympus"}, "timezone"),
    ],
)
def test_bad_parameters_are_refused(params: dict[str, str], says: str) -> None:
    with pytest.raises(PolicyError, match="policy primetime") as err:
        make_policy("primetime", params)
    assert says in str(err.value)


def test_discipline_fcfs_does_not_backfill() -> None:
    # J1 and J4 (small) take 8 nodes for 1 h; J2 (small, 5 nodes) waits; J3 (1 node,
    # 10 minutes) could backfill beside them.
    def trace() -> list[Job]:
        return [
            job(1, 10 * HOUR, 5, HOUR),
            job(4, 10 * HOUR - 1, 3, HOUR),
            job(2, 10 * HOUR, 5, HOUR),
            job(3, 10 * HOUR, 1, 600),
        ]

    _, _, fcfs = run(trace(), discipline="fcfs")
    assert fcfs[3].start == 11 * HOUR
    _, _, easy = run(trace(), discipline="easy")
    assert easy[3].start == 10 * HOUR


def test_replay_uses_the_trace_clock_and_reports(tmp_path: Path) -> None:
    # UnixStartTime 1998-04-24 18:11:04 PDT (a Friday); US/Pacific. A large job submitted
    # at time 0 waits for 19:00 PDT, 2,936 s later.
    lines = [
        "; UnixStartTime: 893466664",
        "; TimeZoneString: US/Pacific",
        "; MaxNodes: 10",
        "1 0 -1 3600 8 -1 -1 8 3600 -1 1 1 1 -1 1 -1 -1 -1",
        "2 0 -1 600 8 -1 -1 8 600 -1 1 1 1 -1 1 -1 -1 -1",
        "3 10 -1 1200 2 -1 -1 2 1800 -1 1 1 1 -1 1 -1 -1 -1",
    ]
    trace = tmp_path / "t.swf"
    trace.write_text("\n".join(lines) + "\n")
    opts = ReplayOptions(
        trace=str(trace),
        policy="primetime",
        params={"prime_nodes": "5", "prime_runtime": "01:00:00"},
    )
    result = run_replay(opts)
    starts = {j.id: j.start for j in result.jobs}
    assert starts == {1: 2936, 2: 0, 3: 10}
    pt = result.summary["primetime"]
    assert pt["jobs"] == {"prime": 2, "nonprime": 1}
    assert pt["nonprime"]["awt"] == 2936 and pt["nonprime"]["art"] == 2936 + 3600
    assert pt["prime"]["awt"] == 0
    assert pt["success_rate"] == {"prime": 1.0, "nonprime": 1.0, "all": 1.0}
    assert pt["overflow_rate"] == 0.0
    # Utilization by window: prime hours [0, 2936) held 8*600 + 2*1200 node-seconds.
    assert pt["prime"]["utilization"] == pytest.approx((8 * 600 + 2 * 1200) / (10 * 2936))
    assert pt["nonprime"]["utilization"] == pytest.approx(8 * 3600 / (10 * 3600))
    json.dumps(result.summary)  # the summary stays JSON


@settings(max_examples=60, deadline=None, database=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 3 * 86400),
            st.integers(1, 6),
            st.integers(60, 30 * HOUR),
            st.integers(0, 30 * HOUR),
        ),
        min_size=1,
        max_size=25,
    ),
    st.sampled_from(["fcfs", "easy", "fcfs-cons"]),
    st.sampled_from(["kill", "requeue"]),
)
def test_invariants(spec: list[tuple[int, int, int, int]], discipline: str, overflow: str) -> None:
    jobs = [job(i + 1, s, w, e, r) for i, (s, w, e, r) in enumerate(spec)]
    engine, policy, by_id = run(jobs, 6, discipline=discipline, overflow=overflow)
    assert sorted(j.id for j in engine.finished) == sorted(by_id)
    for j in by_id.values():
        assert j.submit <= j.start <= j.end
        if policy.is_large(j):
            win, end = policy.period(j.start)
            assert win == "nonprime", j
            if j.duration <= policy.longest(policy.large, j.start):
                assert end is not None and j.start + j.duration <= end, j
    timed = [j for j in by_id.values() if j.end > j.start]
    for a in timed:
        for b in timed:
            if a.id < b.id and a.start < b.end and b.start < a.end:
                assert not set(a.units) & set(b.units)


def test_a_held_large_job_is_told_when_non_prime_opens_or_ends() -> None:
    policy = make_policy("primetime", {"prime_nodes": "5", "prime_runtime": "02:00:00"})
    assert isinstance(policy, PrimeTime)
    engine = Engine(Grid([Machine("m", NODES)]), [policy])
    wide = job(1, 10 * HOUR, 8, HOUR)  # Thu 10:00, too wide for prime time
    late = job(2, 20 * HOUR, 4, 12 * HOUR)  # Thu 20:00, 12 h: past Fri 06:00
    engine.load([wide, late])
    engine.advance_to(10 * HOUR)
    assert policy.explain(wide, 10 * HOUR) == (
        "it runs in nonprime time, which opens at 1970-01-01 19:00:00 UTC"
    )
    engine.advance_to(20 * HOUR)
    assert policy.explain(late, 20 * HOUR) == (
        "its walltime does not fit before nonprime time ends at 1970-01-02 06:00:00 UTC"
    )


def test_non_prime_stamps_are_local_times_on_the_shifted_clock() -> None:
    pacific = PrimeCalendar.default(ZoneInfo("US/Pacific"))
    large = NonPrimeTime(pacific, DAY)  # the clock's 0 is 1970-01-02 00:00 UTC
    assert large.closed(0) == "it runs in nonprime time, which opens at 1970-01-01 16:00:00 PST"
    assert large.closed(None) == "it runs in nonprime time, which opens never"
    assert large.unfit(job(1, 0, 1, 60), HOUR) == (
        "its walltime does not fit before nonprime time ends at 1970-01-01 17:00:00 PST"
    )


def test_the_timezone_parameter_wins_over_the_site_and_the_calendar_file(tmp_path: Path) -> None:
    holidays = tmp_path / "holidays"
    holidays.write_text("YEAR 1970\nweekday 0600 1900\nsaturday none all\nsunday none all\n")
    site = PrimeCalendar.default(ZoneInfo("UTC"))
    for calendar in ("default", str(holidays)):
        params = PrimeTimeParams(calendar=calendar, timezone="US/Pacific")
        assert str(params.make_calendar(site).tz) == "US/Pacific"
        assert str(PrimeTimeParams(calendar=calendar).make_calendar(site).tz) == "UTC"


def test_a_calendar_without_prime_time_never_changes_period(tmp_path: Path) -> None:
    holidays = tmp_path / "holidays"
    holidays.write_text("YEAR 1970\nweekday none all\nsaturday none all\nsunday none all\n")
    policy = make_policy("primetime", {"calendar": str(holidays), "timezone": "UTC"})
    assert isinstance(policy, PrimeTime)
    assert policy.period(10 * HOUR) == ("nonprime", None)
    assert run([job(1, 10 * HOUR, 8, 3 * HOUR)], calendar=str(holidays))[2][1].start == 10 * HOUR


@pytest.mark.parametrize(
    ("text", "what", "limit"),
    [
        ("1%", "prime_nodes", (1.0, True)),
        ("0.5%", "prime_runtime", (0.5, True)),
        ("100%", "prime_nodes", (100.0, True)),
        ("1", "prime_nodes", (1.0, False)),
        ("04:00:00", "prime_runtime", (14400.0, False)),
        ("1", "prime_runtime", (1.0, False)),  # the shortest limit there is
    ],
)
def test_limits_at_their_bounds(text: str, what: str, limit: tuple[float, bool]) -> None:
    assert parse_limit(text, what) == limit


@pytest.mark.parametrize(
    ("text", "what", "says"),
    [
        ("0%", "prime_nodes", "prime_nodes: a percentage must be in (0, 100], got '0%'"),
        ("100.5%", "prime_runtime", "prime_runtime: a percentage must be in (0, 100], got"),
        ("0", "prime_nodes", "prime_nodes: expected a node count or a percentage, got '0'"),
        ("04:00:00", "prime_nodes", "prime_nodes: expected a node count or a percentage"),
        ("soon", "prime_runtime", "prime_runtime: expected seconds, HH:MM:SS or a percentage, "),
        ("0", "prime_runtime", "prime_runtime: must be positive, got '0'"),
    ],
)
def test_limits_refused_with_their_names(text: str, what: str, says: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_limit(text, what)
    assert str(err.value).startswith(says)


def test_limits_of_a_policy_built_without_a_machine_and_for_one() -> None:
    policy = make_policy("primetime", {"prime_nodes": "5", "prime_runtime": "02:00:00"})
    assert isinstance(policy, PrimeTime) and policy.name == "primetime"
    assert policy.limits() == {
        "prime_nodes": 0,
        "prime_runtime": None,
        "exempt_runtime": 900,
        "exempt_nodes": 0,
    }
    # Built for 100 nodes: 3% is 3 nodes exactly. Percentages are of those 100 nodes,
    # also on a machine that turns out smaller.
    built = make_policy(
        "primetime", {"prime_nodes": "30%", "prime_runtime": "02:00:00"}, BuildContext(nodes=100)
    )
    assert isinstance(built, PrimeTime)
    engine = Engine(Grid([Machine("m", NODES)]), [built])
    engine.load([job(1, 0, 1, 60)])
    engine.run()
    assert built.limits() == {
        "prime_nodes": 30,
        "prime_runtime": 2 * HOUR,
        "exempt_runtime": 900,
        "exempt_nodes": 3,
    }


def test_small_at_the_limits_themselves() -> None:
    policy = make_policy(
        "primetime", {"prime_nodes": "5", "prime_runtime": "02:00:00"}, BuildContext(nodes=NODES)
    )
    assert isinstance(policy, PrimeTime)
    assert policy.is_small(job(1, 0, 8, 900))  # 15 minutes: always small
    assert not policy.is_small(job(2, 0, 8, 901))
    assert policy.is_small(job(3, 0, 5, 2 * HOUR))  # at both limits
    assert not policy.is_small(job(4, 0, 5, 2 * HOUR + 1))
    assert not policy.is_small(job(5, 0, 6, 2 * HOUR))
