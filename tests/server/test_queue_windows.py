"""Queue windows in the live daemon: prime/non-prime queues, weekly spans, overflow.

The test site has 8 nodes in UTC with the default calendar (weekdays prime 06:00-19:00,
weekends non-prime). T0 = 1_000_000 is Monday 1970-01-12 13:46:40 UTC, in prime time.
Offsets from T0 used below:

    18_800  Mon 19:00  prime ends, non-prime starts
    22_400  Mon 20:00
    29_600  Mon 22:00
    58_400  Tue 06:00  non-prime ends
   105_200  Tue 19:00
   368_000  Fri 20:00  the weekend span opens
   580_400  Mon 07:00  (a week after T0's Monday) the weekend span closes
"""

from __future__ import annotations

import datetime as dt
import signal
import time
import tomllib
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from prometheus_client.parser import text_string_to_metric_families
from test_ops import documented_config, flat_keys

from api_helpers import T0, Api, new_service, serve, start_api
from batchclient import jobtable
from batchclient.timefmt import ctime
from batchd.engine.clock import VirtualClock
from batchd.model.windows import make_window, next_fit
from batchd.sched.policies.gate import WindowGate
from batchd.server.admin_schemas import QueueList, ServerOut
from batchd.server.service import BatchService
from batchd.server.store import Store
from batchd.site.config import ConfigError, SiteConfig, load_site
from daemon_proc import Daemon
from paths import ROOT

H = 3600
MON_19, MON_20, MON_22 = 18_800, 22_400, 29_600
TUE_06, TUE_19 = 58_400, 105_200
FRI_20, NEXT_MON_07 = 368_000, 580_400

QUEUES: list[dict[str, Any]] = [
    {"name": "workq"},
    {"name": "day", "window": "prime", "max_nodes": 4, "max_walltime": "04:00:00"},
    {"name": "night", "window": "nonprime", "max_walltime": "10:00:00"},
    {"name": "weekend", "window": ["Fri 20:00-Mon 07:00"]},
]


def wsite(queues: list[dict[str, Any]] | None = None, **server: Any) -> SiteConfig:
    """The 8-node test site with windowed queues; ``server`` overrides [server] keys
    (alice looks at bob's jobs: query_other_jobs is on)."""
    return SiteConfig.model_validate(
        {
            "machine": [{"name": "mini", "nodes": 8}],
            "server": {
                "policy": "fcfs-easy",
                "timezone": "UTC",
                "query_other_jobs": True,
                **server,
            },
            "auth": {"operators": ["oper"], "managers": ["boss"]},
            "queue": queues if queues is not None else QUEUES,
        }
    )


def stamp(offset: int) -> str:
    return dt.datetime.fromtimestamp(T0 + offset, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def closed(queue: str, window: str, opens: int) -> str:
    return f"Not Running: queue {queue} is closed ({window}), opens at {stamp(opens)}"


def unfit(walltime: str, queue: str, close: int) -> str:
    return (
        f"Not Running: walltime {walltime} does not fit before queue {queue} "
        f"closes at {stamp(close)}"
    )


async def metrics(api: Api) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    status, text = await api.raw(None, "GET", "/metrics")
    assert status == 200
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def restart(path: Path, site: SiteConfig, now: int) -> BatchService:
    svc = BatchService(site, VirtualClock(now), Store(path), daemon_user="batchd")
    svc.restore(Store(path).load())
    return svc


# --------------------------------------------------------------------------------------------
# prime / non-prime queues on the daemon's clock


async def test_nonprime_job_waits_for_its_window_and_starts_at_19(tmp_path: Path) -> None:
    async with serve(tmp_path, wsite()) as api:
        body = await api.submit("alice", queue="night", nodes=4, walltime="02:00:00")
        assert (body["state"], body["est_start"]) == ("Q", T0 + MON_19)
        assert body["comment"] == closed("night", "nonprime", MON_19)
        assert body["comment"].endswith("opens at 1970-01-12 19:00:00")
        # Other queues are not held up: an anytime job and a prime job run at once.
        assert (await api.submit("bob", nodes=2, walltime=100))["state"] == "R"
        assert (await api.submit("bob", queue="day", nodes=2, walltime=100))["state"] == "R"
        # The daemon's loop sleeps until the window opens: it is the engine's next event.
        api.at(200)
        await api.job(1)
        assert api.svc.next_event_time() == T0 + MON_19
        api.at(MON_19 - 1)
        assert (await api.job(1))["state"] == "Q"
        api.at(MON_19)
        job = await api.job(1)
        assert (job["state"], job["stime"]) == ("R", T0 + MON_19)
        assert job["comment"].startswith("Job run at")
        # A prime job submitted now waits for Tuesday 06:00.
        body = await api.submit("bob", queue="day", nodes=1, walltime=60)
        assert body["comment"] == closed("day", "prime", TUE_06)
        api.at(TUE_06)
        assert (await api.job(body["seq"]))["stime"] == T0 + TUE_06


async def test_jobs_that_wait_start_in_submit_order_at_the_opening(tmp_path: Path) -> None:
    async with serve(tmp_path, wsite()) as api:
        await api.submit("alice", queue="night", nodes=6, walltime="01:00:00")
        api.at(10)
        await api.submit("bob", queue="night", nodes=4, walltime="00:30:00")
        api.at(20)
        await api.submit("bob", queue="night", nodes=2, walltime="00:30:00")
        api.at(MON_19)
        jobs = {j["seq"]: j for j in await api.jobs()}
        # 1 (6 nodes) first, then 3 (2 nodes) backfills; 2 (4 nodes) waits for 1's end.
        assert [jobs[i]["state"] for i in (1, 2, 3)] == ["R", "Q", "R"]
        assert jobs[2]["est_start"] == T0 + MON_19 + H
        assert jobs[2]["comment"] == "Not Running: Insufficient amount of resource: nodes"


async def test_job_that_does_not_fit_before_the_close_waits_for_the_next_night(
    tmp_path: Path,
) -> None:
    async with serve(tmp_path, wsite()) as api:
        api.at(MON_19 + 2 * H)  # 21:00: 10 hours would end at 07:00, after 06:00
        body = await api.submit("alice", queue="night", nodes=8, walltime="10:00:00")
        assert body["state"] == "Q"
        assert body["comment"] == unfit("10:00:00", "night", TUE_06)
        # A shorter job of the same queue fits and runs.
        assert (await api.submit("bob", queue="night", nodes=2, walltime="01:00:00"))[
            "state"
        ] == "R"
        api.at(TUE_06)
        assert (await api.job(1))["comment"] == closed("night", "nonprime", TUE_19)
        api.at(TUE_19)
        job = await api.job(1)
        assert (job["state"], job["stime"]) == ("R", T0 + TUE_19)
        api.at(TUE_19 + 10 * H)
        assert (await api.job(1))["outcome"] == "ok"


@pytest.mark.parametrize("first", [3600, 3601])
async def test_a_queued_job_is_taken_back_once_it_cannot_fit(tmp_path: Path, first: int) -> None:
    """At 19:00 job 1 takes all 8 nodes for ``first`` seconds; job 2 (10 h) waits for them.

    Job 2 fits until 20:00 (20:00 + 10 h = 06:00). With first = 3600 it starts at 20:00
    and ends right at the close; with 3601 it is taken back at 20:00:01.
    """
    async with serve(tmp_path, wsite()) as api:
        api.at(MON_19)
        assert (await api.submit("alice", queue="night", nodes=8, walltime=first))["state"] == "R"
        body = await api.submit("bob", queue="night", nodes=8, walltime="10:00:00")
        assert (body["state"], body["est_start"]) == ("Q", T0 + MON_19 + first)
        api.at(MON_19 + first)
        job = await api.job(2)
        if first == 3600:
            assert (job["state"], job["stime"]) == ("R", T0 + MON_20)
            api.at(TUE_06)
            job = await api.job(2)
            assert (job["state"], job["end_time"], job["outcome"]) == ("F", T0 + TUE_06, "ok")
        else:
            assert (job["state"], job["est_start"]) == ("Q", T0 + TUE_19)
            assert job["comment"] == unfit("10:00:00", "night", TUE_06)
            api.at(TUE_19)
            assert (await api.job(2))["stime"] == T0 + TUE_19


async def test_overflow_kill_at_the_close(tmp_path: Path) -> None:
    async with serve(tmp_path, wsite(window_must_fit=False)) as api:
        api.at(MON_22)
        body = await api.submit("alice", queue="night", nodes=4, walltime="10:00:00")
        assert body["state"] == "R"  # it does not fit, but window_must_fit is off
        await api.submit("bob", nodes=4, walltime="20:00:00")  # workq: not windowed
        api.at(TUE_06 - 1)
        assert (await api.job(1))["state"] == "R"
        api.at(TUE_06)
        job = await api.job(1)
        assert (job["state"], job["end_time"], job["outcome"]) == ("F", T0 + TUE_06, "overflow")
        assert job["exit_status"] is None  # emulated: no process ran, no exit status
        assert job["comment"] == (
            "Job killed: queue night closed at 1970-01-13 06:00:00 while it ran (overflow) "
            "(no process ran: the job was emulated)"
        )
        assert (await api.job(2))["state"] == "R"
        m = await metrics(api)
        done = "batchd_jobs_completed_total"
        assert m[(done, (("outcome", "overflow"), ("queue", "night")))] == 1
        assert m[(done, (("outcome", "overflow"), ("queue", "workq")))] == 0


async def test_overflow_requeue_at_the_close(tmp_path: Path) -> None:
    async with serve(tmp_path, wsite(window_must_fit=False, overflow="requeue")) as api:
        api.at(MON_22)
        await api.submit("alice", queue="night", nodes=4, walltime="10:00:00")
        api.at(TUE_06)
        job = await api.job(1)
        assert (job["state"], job["stime"], job["outcome"]) == ("Q", None, None)
        assert job["comment"] == closed("night", "nonprime", TUE_19)
        m = await metrics(api)
        assert m[("batchd_jobs_requeued_total", (("queue", "night"), ("reason", "overflow")))] == 1
        server = ServerOut.model_validate(await api.call("alice", "GET", "/server"))
        assert server.overflow == "requeue"
        # It runs again from the start when the window opens; 10 hours fit from 19:00.
        api.at(TUE_19)
        job = await api.job(1)
        assert (job["state"], job["stime"]) == ("R", T0 + TUE_19)
        api.at(TUE_19 + 10 * H)
        assert (await api.job(1))["outcome"] == "ok"


async def test_reload_moves_the_close_and_rearms_the_timers(tmp_path: Path) -> None:
    async with serve(tmp_path, wsite()) as api:
        api.at(MON_19)
        assert (await api.submit("alice", queue="night", nodes=4, walltime="10:00:00"))[
            "state"
        ] == "R"
        # SIGHUP with a shorter night: 19:00-23:00 on weekdays. The running job overflows
        # at the new close; a 5-hour job can never fit and is refused.
        short = [dict(q) for q in QUEUES]
        short[2] = {"name": "night", "window": ["Mon-Fri 19:00-23:00"], "max_walltime": "10:00:00"}
        api.svc.reload(wsite(short))
        await api.error(
            "bob",
            "POST",
            "/jobs",
            {"queue": "night", "walltime": "05:00:00"},
            status=400,
            code="bad_request",
            says="(the longest is 04:00:00)",
        )
        queues = {q["name"]: q for q in (await api.call("alice", "GET", "/queues"))["queues"]}
        assert queues["night"]["window"] == "Mon-Fri 19:00-23:00"
        assert queues["night"]["window_next_change"] == T0 + MON_19 + 4 * H
        # At 21:00 a 3-hour job no longer fits before 23:00: it waits.
        api.at(MON_19 + 2 * H)
        body = await api.submit("bob", queue="night", nodes=2, walltime="03:00:00")
        assert body["comment"] == unfit("03:00:00", "night", MON_19 + 4 * H)
        api.at(MON_19 + 4 * H)
        job = await api.job(1)
        assert (job["state"], job["outcome"], job["end_time"]) == (
            "F", "overflow", T0 + MON_19 + 4 * H,
        )  # fmt: skip
        assert (await api.job(2))["comment"] == closed("night", "Mon-Fri 19:00-23:00", TUE_19)
        # Back to the calendar's nights: the waiting job fits from 23:00 and starts.
        api.svc.reload(wsite())
        job = await api.job(2)
        assert (job["state"], job["stime"]) == ("R", T0 + MON_19 + 4 * H)
        assert api.svc.next_event_time() == T0 + MON_19 + 7 * H  # its end; then 06:00


async def test_stopped_queue_wins_over_its_window(tmp_path: Path) -> None:
    stopped = [dict(q) for q in QUEUES]
    stopped[2] = dict(stopped[2], started=False)
    async with serve(tmp_path, wsite(stopped)) as api:
        await api.submit("alice", queue="night", nodes=2, walltime=60)
        api.at(MON_19)
        job = await api.job(1)
        assert (job["state"], job["comment"]) == ("Q", "Not Running: queue night is stopped")
        api.svc.reload(wsite())
        assert (await api.job(1))["state"] == "R"


async def test_hold_release_and_alter_of_a_waiting_job(tmp_path: Path) -> None:
    async with serve(tmp_path, wsite()) as api:
        await api.submit("alice", queue="night", nodes=2, walltime=60)
        await api.call("alice", "POST", "/jobs/1/hold", {"types": "u"})
        assert (await api.job(1))["state"] == "H"
        await api.call("alice", "POST", "/jobs/1/release", {"types": "u"})
        job = await api.job(1)
        assert (job["state"], job["comment"]) == ("Q", closed("night", "nonprime", MON_19))
        # qalter to an anytime queue: it runs at once.
        body = await api.call("alice", "PATCH", "/jobs/1", {"queue": "workq"})
        assert body["state"] == "R"
        # and a deleted waiting job is gone from the window's list
        await api.submit("alice", queue="night", nodes=2, walltime=60)
        await api.call("alice", "DELETE", "/jobs/2")
        api.at(MON_19)
        assert (await api.job(2))["outcome"] == "cancelled"


# --------------------------------------------------------------------------------------------
# spans and holidays


async def test_weekend_span(tmp_path: Path) -> None:
    async with serve(tmp_path, wsite()) as api:
        # Friday 20:00 to Monday 07:00 is 59 hours: a 59-hour job fits exactly.
        body = await api.submit("alice", queue="weekend", nodes=8, walltime="59:00:00")
        assert body["comment"] == closed("weekend", "Fri 20:00-Mon 07:00", FRI_20)
        assert body["comment"].endswith("opens at 1970-01-16 20:00:00")
        await api.error(
            "alice",
            "POST",
            "/jobs",
            {"queue": "weekend", "walltime": "59:00:01"},
            status=400,
            code="bad_request",
            says=(
                "walltime: 59:00:01 does not fit in any opening of queue weekend's window "
                "(Fri 20:00-Mon 07:00) in the next 14 days (the longest is 59:00:00)",
                "use another queue; queues that take it: workq",
            ),
        )
        api.at(FRI_20)
        job = await api.job(1)
        assert (job["state"], job["stime"]) == ("R", T0 + FRI_20)
        api.at(NEXT_MON_07)
        job = await api.job(1)
        assert (job["state"], job["end_time"], job["outcome"]) == ("F", T0 + NEXT_MON_07, "ok")


HOLIDAYS = """\
YEAR 1970
  weekday    0600  1900
  saturday   none  all
  sunday     none  all
* Tuesday 13 January 1970 is a holiday: non-prime all day.
   13        Jan 13     Test Day
"""


async def test_holiday_is_non_prime(tmp_path: Path) -> None:
    cal = tmp_path / "holidays"
    cal.write_text(HOLIDAYS, encoding="utf-8")
    async with serve(tmp_path, wsite(calendar=str(cal))) as api:
        api.at(MON_19)
        # The night runs through the holiday to Wednesday 06:00.
        queues = {q["name"]: q for q in (await api.call("alice", "GET", "/queues"))["queues"]}
        wed_06 = TUE_06 + 86_400
        assert (queues["night"]["window_open"], queues["night"]["window_next_change"]) == (
            True, T0 + wed_06,
        )  # fmt: skip
        assert (queues["day"]["window_open"], queues["day"]["window_next_change"]) == (
            False, T0 + wed_06,
        )  # fmt: skip
        body = await api.submit("alice", queue="day", nodes=1, walltime=60)
        assert body["comment"] == closed("day", "prime", wed_06)
        # A 10-hour night job submitted on the holiday at noon runs at once.
        api.at(80_000)  # Tue 12:00
        assert (await api.submit("bob", queue="night", nodes=4, walltime="10:00:00"))[
            "state"
        ] == "R"
        api.at(wed_06)
        assert (await api.job(1))["stime"] == T0 + wed_06


# --------------------------------------------------------------------------------------------
# restart


async def test_restart_parks_again_and_rearms_the_timers(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    site = wsite()
    async with start_api(new_service(path, site)) as api:
        await api.submit("alice", queue="night", nodes=4, walltime="02:00:00")  # 1 waits
        await api.submit("alice", queue="day", nodes=4, walltime="04:00:00")  # 2 runs
        api.at(10_000)  # 16:33:20: 4 hours end after 19:00
        body = await api.submit("bob", queue="day", nodes=2, walltime="04:00:00")  # 3 waits
        assert body["comment"] == unfit("04:00:00", "day", MON_19)
    svc = restart(path, site, T0 + 12_000)
    gate = svc.engine.machines[0].policy
    assert isinstance(gate, WindowGate) and set(gate.held) == {1, 3}
    async with start_api(svc) as api:
        jobs = {j["seq"]: j for j in await api.jobs()}
        assert [jobs[i]["state"] for i in (1, 2, 3)] == ["Q", "R", "Q"]
        assert jobs[1]["comment"] == closed("night", "nonprime", MON_19)
        assert jobs[3]["comment"] == unfit("04:00:00", "day", MON_19)
        assert svc.next_event_time() == T0 + 14_400  # job 2's end, then 19:00
        api.at(MON_19)
        one = await api.job(1)
        assert (one["state"], one["stime"]) == ("R", T0 + MON_19)
        assert (await api.job(3))["comment"] == closed("day", "prime", TUE_06)
        api.at(TUE_06)
        assert (await api.job(3))["stime"] == T0 + TUE_06


@pytest.mark.parametrize("overflow", ["kill", "requeue"])
async def test_restart_after_a_close_the_daemon_missed(tmp_path: Path, overflow: str) -> None:
    """The window closed at 06:00 while the daemon was down; it restarts at 07:00."""
    path = tmp_path / "state.db"
    site = wsite(window_must_fit=False, overflow=overflow)
    async with start_api(new_service(path, site)) as api:
        api.at(MON_22)
        assert (await api.submit("alice", queue="night", nodes=4, walltime="10:00:00"))[
            "state"
        ] == "R"
    svc = restart(path, site, T0 + TUE_06 + H)
    async with start_api(svc) as api:
        job = await api.job(1)
        if overflow == "kill":
            assert (job["state"], job["outcome"], job["end_time"]) == (
                "F", "overflow", T0 + TUE_06,
            )  # fmt: skip
            assert job["exit_status"] is None  # emulated: no process ran, no exit status
            assert job["comment"] == (
                "Job killed: queue night closed at 1970-01-13 06:00:00 while it ran "
                "(overflow) (no process ran: the job was emulated)"
            )
        else:
            assert (job["state"], job["stime"]) == ("Q", None)
            assert job["comment"] == closed("night", "nonprime", TUE_19)
            api.at(TUE_19)
            assert (await api.job(1))["stime"] == T0 + TUE_19


# --------------------------------------------------------------------------------------------
# limits, views, the client's tables


async def test_qsub_over_a_queue_limit_names_the_limit(tmp_path: Path) -> None:
    async with serve(tmp_path, wsite()) as api:
        await api.error(
            "alice",
            "POST",
            "/jobs",
            {"queue": "day", "nodes": 6},
            status=400,
            code="bad_request",
            says=(
                "nodes: 6 nodes exceed the limit of queue day (resources_max.nodect = 4)",
                "queues that take it: workq, night, weekend",
            ),
        )
        await api.error(
            "alice",
            "POST",
            "/jobs",
            {"queue": "night", "walltime": "11:00:00"},
            status=400,
            code="bad_request",
            says=(
                "walltime: 11:00:00 exceeds the limit of queue night "
                "(resources_max.walltime = 10:00:00)",
                "queues that take it: workq, weekend",
            ),
        )
        assert api.svc.seq == 0


async def test_queues_show_window_and_open(tmp_path: Path) -> None:
    async with serve(tmp_path, wsite()) as api:
        await api.submit("alice", queue="night", nodes=2, walltime=60)
        body = await api.call("alice", "GET", "/queues")
        listing = QueueList.model_validate(body)
        got = {q.name: (q.window, q.window_open, q.window_next_change) for q in listing.queues}
        assert got == {
            "workq": ("any", True, None),
            "day": ("prime", True, T0 + MON_19),
            "night": ("nonprime", False, T0 + MON_19),
            "weekend": ("Fri 20:00-Mon 07:00", False, T0 + FRI_20),
        }
        assert listing.queues[2].counts["Q"] == 1
        one = await api.call("alice", "GET", "/queues/night")
        assert one == body["queues"][2]
        # qstat -Q: PBS's columns, then Open and Window.
        table = jobtable.queue_table(body["queues"])
        assert table[0].endswith("Type Open Window")
        assert [line[73:] for line in table[2:]] == [
            "Exe*  yes any",
            "Exe*  yes prime",
            "Exe*   no nonprime",
            "Exe*   no Fri 20:00-Mon 07:00",
        ]
        # qstat -Qf
        full = jobtable.full_queues([body["queues"][2]])
        assert full[-4:] == [
            "    window = nonprime",
            "    window_open = False",
            f"    window_next_change = {ctime(T0 + MON_19)}",
            "",
        ]
        api.at(MON_19)
        body = await api.call("alice", "GET", "/queues")
        got = {q["name"]: (q["window_open"], q["window_next_change"]) for q in body["queues"]}
        assert got["day"] == (False, T0 + TUE_06) and got["night"] == (True, T0 + TUE_06)


# --------------------------------------------------------------------------------------------
# the config


def test_config_errors_name_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "site.toml"
    base = '[[machine]]\nname = "m"\nnodes = 4\n[[queue]]\nname = "a"\n'
    path.write_text(base + 'window = ["Mon-Fri 07:00-19:30", "Fryday 1:00-2:00"]\n')
    with pytest.raises(ConfigError) as err:
        load_site(path)
    assert str(err.value).startswith(f"{path}: queue[0].window: bad day 'Fryday'")
    path.write_text(base + 'window = "weekends"\n')
    with pytest.raises(ConfigError, match=r"queue\[0\]\.window: cannot read the span 'weekends'"):
        load_site(path)
    path.write_text(base + '[server]\noverflow = "drop"\n')
    with pytest.raises(ConfigError, match=r"server\.overflow: Input should be 'kill' or 'requeue'"):
        load_site(path)
    path.write_text(base + 'window = "mon-fri 7:00-19:30"\n[server]\noverflow = "requeue"\n')
    site = load_site(path)
    assert site.queues()[0].window == ["Mon-Fri 07:00-19:30"]
    assert (site.server.overflow, site.server.window_must_fit) == ("requeue", True)
    assert (
        site.queues()[0].windowed
        and not SiteConfig.model_validate({"machine": [{"name": "m", "nodes": 1}]})
        .queues()[0]
        .windowed
    )


# --------------------------------------------------------------------------------------------
# the shipped configs: Tables 1 and 2 of Lo and Mache's prime-time paper


def _limits(site: SiteConfig) -> dict[str, tuple[int | None, int | None, str]]:
    return {q.name: (q.max_nodes, q.max_walltime, q.window_text()) for q in site.queues()}


@pytest.mark.parametrize("name", ["nas-sp2.toml", "t3e512.toml"])
def test_shipped_configs_document_every_key(name: str) -> None:
    text = (ROOT / "conf" / name).read_text(encoding="utf-8")
    found, missing, _ = documented_config(text)
    assert found == flat_keys(tomllib.loads(text))
    assert not missing, missing
    assert all(len(q.name) <= 15 for q in load_site(ROOT / "conf" / name).queues())


def test_nas_sp2_is_table_1() -> None:
    site = load_site(ROOT / "conf" / "nas-sp2.toml")
    assert site.machine[0].nodes == 144
    assert _limits(site) == {
        "p_16_15m": (16, 900, "prime"),
        "p_32_4h": (32, 4 * H, "prime"),
        "p_144_15m": (144, 900, "prime"),
        "np_100_10h": (100, 10 * H, "nonprime"),
        "np_8_15m": (8, 900, "nonprime"),
    }
    cal = site.calendar()
    assert cal.describe().startswith("prime Mon-Fri 06:00-19:00")
    assert getattr(cal.tz, "key", None) == "America/Los_Angeles"
    assert site.server.overflow == "kill"


def test_t3e_is_table_2() -> None:
    site = load_site(ROOT / "conf" / "t3e512.toml")
    assert site.machine[0].nodes == 512
    prime = "Mon-Fri 07:00-19:30"
    assert _limits(site) == {
        "p_32_15m": (32, 900, prime),
        "p_64_20m": (64, 1200, prime),
        "p_128_20m": (128, 1200, prime),
        "p_512_15m": (512, 900, prime),
        "p_256_20m": (256, 1200, prime),
        "p_512_1h": (512, H, "Mon-Fri 06:00-19:00"),
        "np_512_4h": (512, 15_984, "Mon-Thu 20:00-06:00, Fri 20:00-Mon 06:00"),
        "np_64_6h": (64, 6 * H, "Mon-Thu 23:00-04:00, Fri 23:00-Mon 06:00"),
        "np_512_1h": (512, H, "Mon-Thu 20:00-08:00, Fri 20:00-Mon 08:00"),
        "we_512_1h": (512, H, "Fri 20:00-Mon 07:00"),
        "resv_512_4h": (512, 15_984, "any"),
    }
    # A 6-hour job of np_64_6h fits only at the weekend: Friday 23:00 to Monday 06:00.
    la = ZoneInfo("America/Los_Angeles")
    win = make_window(
        next(q for q in site.queues() if q.name == "np_64_6h").window, site.calendar()
    )
    monday = int(dt.datetime(2026, 11, 23, 12, 0, tzinfo=la).timestamp())
    at = next_fit(win, monday, 6 * H)
    assert at is not None
    assert dt.datetime.fromtimestamp(at, la) == dt.datetime(2026, 11, 27, 23, 0, tzinfo=la)
    assert next_fit(win, monday, 5 * H) == int(
        dt.datetime(2026, 11, 23, 23, 0, tzinfo=la).timestamp()
    )


# --------------------------------------------------------------------------------------------
# the daemon process on an accelerated clock

LIVE_SITE = """
[[machine]]
name = "live"
nodes = 4
[server]
timezone = "UTC"
window_must_fit = false
[[queue]]
name = "workq"
"""


def _span(start: int, end: int) -> str:
    a, b = (dt.datetime.fromtimestamp(t, dt.UTC) for t in (start, end))
    return f"{a:%a %H:%M}-{b:%a %H:%M}"


def test_live_daemon_switches_windows_at_speed(tmp_path: Path) -> None:
    """At --speed 600 a window opened by SIGHUP 10 emulated minutes ahead opens and closes
    on the emulated second: the job starts at the opening and overflows at the close."""
    conf = tmp_path / "site.toml"
    conf.write_text(LIVE_SITE)
    with Daemon(tmp_path, "--speed", "600", config=str(conf)) as d:
        now = d.call("GET", "/server")[1]["now"]
        opens = (now // 60 + 11) * 60  # 10 to 11 emulated minutes ahead: about a second
        closes = opens + 1200
        conf.write_text(
            LIVE_SITE + f'\n[[queue]]\nname = "win"\nwindow = "{_span(opens, closes)}"\n'
        )
        assert d.proc is not None
        d.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        queues: dict[str, Any] = {}
        while time.monotonic() < deadline and "win" not in queues:
            queues = {q["name"]: q for q in d.call("GET", "/queues")[1]["queues"]}
            time.sleep(0.05)
        assert (queues["win"]["window_open"], queues["win"]["window_next_change"]) == (
            False, opens,
        )  # fmt: skip
        status, job = d.call("POST", "/jobs", {"queue": "win", "nodes": 2, "walltime": 3600})
        assert status == 201 and job["state"] == "Q", job
        assert job["comment"].endswith(f"opens at {_utc(opens)}")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and job["state"] != "F":
            time.sleep(0.1)
            job = d.call("GET", "/jobs/1")[1]
        assert (job["stime"], job["end_time"], job["outcome"]) == (opens, closes, "overflow")
        assert d.stop() == 0


def _utc(t: int) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
