"""The formats and parsers of qstat -w/-1, qselect, qsub -W block, tracejob, pbs_rsub,
pbs_rstat and qmgr's queue commands, against expected text (OpenPBS's printf formats)."""

from __future__ import annotations

import calendar
import time
from typing import Any

import pytest

from batchclient import blocking, jobtable, qmgr_queue, qselect, rstat, rsub, tracejob, widetable
from batchclient.cli import UsageError


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.delenv("TZ")
    time.tzset()


def utc_epoch(y: int, mo: int, d: int, h: int = 0, mi: int = 0, s: int = 0) -> int:
    return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))


NOW = utc_epoch(2026, 11, 19, 10, 0, 0)  # a Thursday

JOB = {
    "id": "12.hpcline", "seq": 12, "name": "lu_factorization", "owner": "alice",
    "queue": "workq", "state": "R", "nodes": 2, "walltime": 3600, "stime": NOW - 600,
    "est_start": None, "elapsed": 600, "exec_host": ["node001", "node002"],
    "comment": "Job run at 2026-11-19 09:50:00 on 2 nodes", "priority": 0,
}  # fmt: skip


# -- qstat -w and -1 -------------------------------------------------------------------


def test_wide_default_table_has_pbs_widths() -> None:
    assert widetable.WIDE_DEFAULT_HEADER[0] == (
        "Job id                         Name            User             Time Use S Queue"
    )
    row = widetable.wide_default_row(JOB)
    # %-30s %-15s %-15s  %8s %1s %-15s; a name of 15 characters or more ends in '*'
    assert row == (
        "12.hpcline                     lu_factorizati* alice            00:10:00 R workq          "
    )
    assert len(row) == 30 + 1 + 15 + 1 + 15 + 2 + 8 + 1 + 1 + 1 + 15


def test_wide_alternate_format() -> None:
    head = widetable.wide_alt_header("hpcline")
    assert head[:2] == ["", "hpcline: "]
    assert head[2] == " " * 99 + "Req'd  Req'd   Elap"  # seven blank fields, each and a blank
    assert head[3] == (
        "Job ID                         Username        Queue           Jobname         "
        "SessID   NDS  TSK   Memory Time  S Time"
    )
    assert head[4] == " ".join("-" * w for w in (30, 15, 15, 15, 8, 4, 5)) + " ------ ----- - -----"
    # %-30s %-15s %-15s %-15s %8s %4s %5s %6s %5s %1s %5s; the blank field is " -- ".
    fields = ["12.hpcline".ljust(30), "alice".ljust(15), "workq".ljust(15),
              "lu_factorizati*", " -- ".rjust(8), "2".rjust(4), "2".rjust(5), " -- ".rjust(6),
              "01:00", "R", "00:10"]  # fmt: skip
    assert widetable.wide_alt_row(JOB, NOW) == " ".join(fields)
    est = widetable.wide_alt_header("hpcline", est=True)
    assert est[2] == " " * 99 + "               Est"
    assert est[3].endswith("Req'd  Req'd   Start")


def test_one_line_puts_hosts_or_comment_on_the_jobs_line() -> None:
    n1 = widetable.rows([JOB], NOW, nodes=True, one_line=True)
    assert n1 == [jobtable.alt_row(JOB, NOW) + " node001/0+node002/0"]
    assert n1[0].startswith("12.hpcline      alice    workq    lu_factor*    -- ")
    ns1 = widetable.rows([JOB], NOW, nodes=True, comments=True, one_line=True)
    assert ns1[1] == "   Job run at 2026-11-19 09:50:00 on 2 nodes"
    s1 = widetable.rows([JOB], NOW, comments=True, one_line=True)
    assert s1 == [n1[0].split(" node001")[0] + "    Job run at 2026-11-19 09:50:00 on 2 nodes"]
    queued = dict(JOB, state="Q", exec_host=[], stime=None, elapsed=None)
    # No hosts: the row, the blank PBS prints before them, nothing after.
    row = widetable.rows([queued], NOW, nodes=True, one_line=True)[0]
    assert row == jobtable.alt_row(queued, NOW) + " "
    # Without -1 the hosts go on the next line, as before.
    assert widetable.rows([JOB], NOW, nodes=True, wide=True)[1] == "   node001/0+node002/0"


def test_full_wide_never_breaks_a_line() -> None:
    long = dict(JOB, variables={f"V{i}": "x" * 20 for i in range(8)})
    lines = widetable.full_wide([long])
    assert lines[0] == "Job Id: 12.hpcline"
    var = next(line for line in lines if line.startswith("    Variable_List = "))
    assert len(var) > 200 and "\n" not in var and lines[-1] == ""


# -- qselect ---------------------------------------------------------------------------


def _ns(**kw: Any) -> Any:
    return qselect.build_parser().parse_args([a for k, v in kw.items() for a in (k, v)])


def test_qselect_compares_resources_and_names() -> None:
    q, tests = qselect.query(_ns(**{"-l": "walltime.gt.01:00:00,nodect.ge.2", "-N": "lu"}))
    assert q == {"brief": "true"}
    match = {"walltime": 3601, "nodes": 2, "name": "lu"}
    assert all(t(match) for t in tests)
    assert not all(t(dict(match, walltime=3600)) for t in tests)
    assert not all(t(dict(match, nodes=1)) for t in tests)
    assert not all(t(dict(match, name="lu2")) for t in tests)


def test_qselect_sends_what_the_daemon_filters() -> None:
    q, _ = qselect.query(_ns(**{"-u": "alice@host,bob", "-s": "QR", "-q": "short@hpcline"}))
    assert q == {"brief": "true", "user": "alice,bob", "state": "QR", "queue": "short"}
    q, _ = qselect.query(_ns(**{"-s": "F"}))
    assert (q["state"], q["history"]) == ("F", "true")
    q, _ = qselect.query(_ns(**{"-s": "S"}))  # a PBS state batchd's jobs are never in
    assert q["state"] == "-"
    q, _ = qselect.query(_ns(**{"-q": "@hpcline"}))
    assert "queue" not in q


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("-l", "walltime.gt", "resource.op.value"),
        ("-l", "walltime.bigger.5", "resource.op.value"),
        ("-l", "mem.gt.4gb", "batchd compares walltime"),
        ("-l", "nodect.ge.two", "whole number"),
        ("-l", "walltime.lt.1:99:00", "minutes and seconds"),
        ("-s", "QZ", "illegal -s value"),
    ],
)
def test_qselect_refuses_bad_selections(option: str, value: str, says: str) -> None:
    with pytest.raises(UsageError, match=says):
        qselect.query(_ns(**{option: value}))


# -- qsub -W block=true ------------------------------------------------------------------


def test_block_is_taken_out_of_the_w_values() -> None:
    assert blocking.split_block(["depend=afterok:1", "block=true"]) == (["depend=afterok:1"], True)
    assert blocking.split_block(["block=false"]) == ([], False)
    with pytest.raises(UsageError, match="block=true or block=false"):
        blocking.split_block(["block=maybe"])


def test_block_exit_codes_are_the_jobs_exit_status() -> None:
    ran = {"stime": NOW, "state": "F"}
    assert blocking.exit_code(dict(ran, exit_status=0)) == 0
    assert blocking.exit_code(dict(ran, exit_status=271)) == 15  # deleted while running
    assert blocking.exit_code(dict(ran, exit_status=265)) == 9  # qsig -s KILL
    assert blocking.exit_code(dict(ran, exit_status=-29)) == 227  # killed at its walltime
    assert blocking.exit_code({"stime": None, "exit_status": None, "state": "F"}) == 3


def test_block_waits_with_growing_pauses() -> None:
    answers = iter(["Q", "R", "R", "R", "R", "R", "F"])
    asked: list[str] = []

    class Fake:
        def get(self, path: str) -> dict[str, Any]:
            asked.append(path)
            return {"state": next(answers), "stime": NOW, "exit_status": 0}

    pauses: list[float] = []
    assert blocking.wait_for(Fake(), "7.mini", pauses.append) == 0  # type: ignore[arg-type]
    assert asked == ["/jobs/7.mini"] * 7
    assert pauses == [0.2, 0.4, 0.8, 1.6, 2.0, 2.0]


# -- tracejob -------------------------------------------------------------------------------


EVENTS = {
    "id": "3.mini",
    "now": NOW,
    "events": [
        {"time": NOW - 86_400, "source": "S", "message": "enqueuing into workq, state 1 hop 1"},
        {"time": NOW - 60, "source": "L", "message": "Job run"},
        {"time": NOW - 60, "source": "S",
         "message": "Job Run at request of Scheduler@mini on exec_vnode (node001:ncpus=1)"},
        {"time": NOW, "source": "A", "message": "user=alice queue=workq Exit_status=0"},
    ],
}  # fmt: skip


def test_tracejob_lines_as_pbs_prints_them() -> None:
    assert tracejob.render(EVENTS, 1, 0, "") == [
        "",
        "Job: 3.mini",
        "",
        "11/19/2026 09:59:00  L    Job run",
        "11/19/2026 09:59:00  S    Job Run at request of Scheduler@mini on exec_vnode "
        "(node001:ncpus=1)",
        "11/19/2026 10:00:00  A    user=alice queue=workq Exit_status=0",
    ]
    two_days = tracejob.render(EVENTS, 2, 0, "AL")
    assert two_days[3] == "11/18/2026 10:00:00  S    enqueuing into workq, state 1 hop 1"
    assert len(two_days) == 5
    assert tracejob.render(EVENTS, 1, 0, "SLA") == []


def test_tracejob_wraps_at_blanks_and_indents() -> None:
    text = "Job Run at request of Scheduler@mini on exec_vnode (node001:ncpus=1)"
    # 60 columns leave 34 for the message: cut at the last blank within them.
    assert tracejob.wrap(text, 60) == [
        "Job Run at request of",
        " " * 26 + "Scheduler@mini on exec_vnode",
        " " * 26 + "(node001:ncpus=1)",
    ]
    assert tracejob.wrap("a" * 40 + " b", 60) == ["a" * 40, " " * 26 + "b"]
    assert tracejob.wrap(text, 0) == [text]


# -- pbs_rsub and pbs_rstat -------------------------------------------------------------------


def _rsub(*argv: str) -> dict[str, Any]:
    return rsub.build_request(rsub.build_parser().parse_args(list(argv)), NOW)


def test_rsub_requests() -> None:
    assert _rsub("-D", "01:00:00", "-l", "select=4:ncpus=2") == {
        "start": "now", "duration": 3600, "nodes": 4, "select": [{"count": 4, "ncpus": 2}],
    }  # fmt: skip
    assert _rsub("-D", "60", "-l", "nodes=4") == {"start": "now", "duration": 60, "nodes": 4}
    assert _rsub("-R", "1400", "-E", "1530", "-N", "maint") == {
        "start": utc_epoch(2026, 11, 19, 14, 0), "duration": 5400, "nodes": 1, "name": "maint",
    }  # fmt: skip
    assert _rsub("-R", "1400", "-l", "nodes=2,walltime=30:00")["duration"] == 1800
    assert _rsub("-E", "1200", "-D", "600")["start"] == utc_epoch(2026, 11, 19, 11, 50)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (("-R", "1400"), "give the end"),
        (("-R", "1400", "-E", "1300"), "end after it starts"),
        (("-R", "1400", "-E", "1500", "-D", "60"), "disagree"),
        (("-R", "2599", "-D", "60"), "illegal -R time value"),
        (("-D", "1:99:00"), "illegal -D value"),
        (("-D", "60", "-l", "nodes=2-4"), "fixed number of nodes"),
        (("-D", "60", "-r", "FREQ=WEEKLY"), "standing reservations"),
    ],
)
def test_rsub_refusals(argv: tuple[str, ...], says: str) -> None:
    with pytest.raises(UsageError, match=says):
        _rsub(*argv)


RESV = {
    "id": "R12.mini", "name": "NULL", "owner": "boss", "state": "CO", "queue": "R12",
    "start": utc_epoch(2026, 11, 19, 14, 0), "end": utc_epoch(2026, 11, 19, 15, 0),
    "duration": 3600, "nodes": 2, "machine": "mini", "node_list": [],
}  # fmt: skip


def test_rstat_short_format() -> None:
    lines = rstat.render([RESV], "mini", NOW, brief=False, full=False)
    assert lines == [
        "Resv ID    Queue    User     State             Start / Duration / End              ",
        "---------------------------------------------------------------------",
        "R12.mini   R12      boss     CO          Today 14:00 / 3600 / Today 15:00      ",
    ]
    assert rstat.render([RESV], "mini", NOW, brief=True, full=False) == ["Resv ID: R12.mini"]
    assert rstat.render([], "mini", NOW, brief=False, full=False) == []


def test_rstat_short_times_as_convert_time() -> None:
    assert rstat.short_time(utc_epoch(2026, 11, 21, 8, 5), NOW) == "Sat 08:05"  # this week
    assert rstat.short_time(utc_epoch(2026, 11, 23, 8, 5), NOW) == "Mon Nov 23 08:05"
    assert rstat.short_time(utc_epoch(2027, 1, 2, 8, 5), NOW) == "Sat Jan 02 2027 08:05"


def test_rstat_full_format() -> None:
    running = dict(RESV, state="RN", node_list=["node001", "node002"])
    assert rstat.full_block(running, "mini") == [
        "Resv ID: R12.mini",
        "Reserve_Name = NULL",
        "Reserve_Owner = boss@mini",
        "reserve_state = RESV_RUNNING",
        "reserve_substate = 5",
        "reserve_start = Thu Nov 19 14:00:00 2026",
        "reserve_end = Thu Nov 19 15:00:00 2026",
        "reserve_duration = 3600",
        "queue = R12",
        "Resource_List.ncpus = 2",
        "Resource_List.nodect = 2",
        "Resource_List.select = 2:ncpus=1",
        "Resource_List.place = free",
        "Resource_List.walltime = 01:00:00",
        "resv_nodes = (node001:ncpus=1)+(node002:ncpus=1)",
        "Authorized_Users = boss@mini",
        "server = mini",
        "machine = mini",
        "",
    ]


def test_rstat_shows_the_select_as_asked() -> None:
    chunked = dict(
        RESV, state="RN", nodes=3, select="2:ncpus=4+1:ncpus=2:mem=1gb",
        node_list=["node001", "node002", "node003"],
    )  # fmt: skip
    block = rstat.full_block(chunked, "mini")
    assert block[9:12] == [
        "Resource_List.ncpus = 10",
        "Resource_List.nodect = 3",
        "Resource_List.select = 2:ncpus=4+1:ncpus=2:mem=1gb",
    ]
    assert "resv_nodes = (node001:ncpus=4)+(node002:ncpus=4)+(node003:ncpus=2)" in block


# -- qmgr queues ----------------------------------------------------------------------------


def test_qmgr_queue_attributes_map_to_the_api() -> None:
    attrs = [
        ("queue_type", "=", "Execution"),
        ("enabled", "=", "True"),
        ("started", "=", "f"),
        ("resources_max.nodect", "=", "4"),
        ("resources_max.walltime", "=", "02:00:00"),
        ("resources_default.walltime", "=", "30:00"),
        ("window", "=", "Mon-Fri 08:00-18:00"),
    ]
    assert qmgr_queue.queue_fields("q", attrs) == {
        "enabled": True, "started": False, "max_nodes": 4, "max_walltime": 7200,
        "default_walltime": 1800, "window": "Mon-Fri 08:00-18:00",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("attr", "value", "first", "errno"),
    [
        ("color", "red", "qmgr obj=q svr=default: Undefined attribute color", 15002),
        (
            "enabled",
            "perhaps",
            "qmgr obj=q svr=default: Illegal attribute or resource value",
            15014,
        ),
        ("queue_type", "route", "qmgr obj=q svr=default: queue_type = route", 15014),
        ("resources_max.nodect", "0", "qmgr obj=q svr=default: Illegal attribute", 15014),
    ],
)
def test_qmgr_queue_refusals_as_pbs_prints_them(
    attr: str, value: str, first: str, errno: int
) -> None:
    with pytest.raises(qmgr_queue.QmgrServerError) as err:
        qmgr_queue.queue_fields("q", [(attr, "=", value)])
    lines = err.value.lines()
    assert lines[0].startswith(first)
    assert lines[1] == f"qmgr: Error ({errno}) returned from server"
