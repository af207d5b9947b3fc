"""sacct's fields, table, parsable lines and JSON for tiny jobs, against Slurm's forms
(src/sacct/sacct.c widths, src/common/print_fields.c layouts), computed by hand."""

from __future__ import annotations

import calendar
import json
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from batchclient.slurm import acct_fields, acct_output, sacct
from batchclient.slurm.acct_fields import Row
from batchclient.slurm.command import SlurmError


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.delenv("TZ")
    time.tzset()


def at(h: int, mi: int = 0, s: int = 0) -> int:
    return calendar.timegm((2026, 11, 19, h, mi, s, 0, 0, 0))


NOW = at(10)
DONE = {
    "id": "12.hpcline", "seq": 12, "name": "lu_factorization", "owner": "root",
    "queue": "workq", "state": "F", "nodes": 2, "walltime": 3600, "ctime": at(9),
    "etime": at(9), "stime": at(9, 10), "end_time": at(9, 20), "elapsed": 600,
    "exec_host": ["node001", "node002"], "resource_list": {"ncpus": "4", "mem": "1gb"},
    "exit_status": None, "outcome": "ok", "executed": False, "priority": 0,
}  # fmt: skip
RAN = dict(DONE, id="13.hpcline", seq=13, name="real", executed=True, exit_status=3,
           outcome="failed", resources_used={"mem": 5 * 2**20, "cput": 61.5})  # fmt: skip
WAITING = dict(DONE, id="14.hpcline", seq=14, name="w", state="Q", stime=None,
               end_time=None, elapsed=None, exec_host=[], outcome=None)  # fmt: skip


def line(fields: str, row: Row, parsable: str | None = None) -> str:
    printer = acct_output.Printer(acct_fields.parse_format(fields), parsable, "|")
    return printer.line(row)


def test_default_table_has_slurms_widths_header_and_dashes() -> None:
    fields = acct_fields.parse_format(sacct.DEFAULT_FIELDS)
    printer = acct_output.Printer(fields, None, "|")
    assert printer.header() == (
        "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n"
        "------------ ---------- ---------- ---------- ---------- ---------- -------- \n"
    )
    # JobID %-12s, the others right-justified in 10 (ExitCode 8), each and a blank;
    # a value longer than its field keeps width-1 characters and a '+'.
    assert printer.line(Row(DONE, None, "hpcline")) == (
        "12           lu_factor+      workq                     4  COMPLETED      0:0 \n"
    )
    assert printer.line(Row(RAN, "batch", "hpcline")) == (
        "13.batch          batch                                4     FAILED      3:0 \n"
    )
    assert printer.line(Row(WAITING, None, "hpcline")).split() == [
        "14", "w", "workq", "0", "PENDING", "0:0"
    ]  # fmt: skip


def test_parsable_endings_and_widths_given_in_the_format() -> None:
    row = Row(DONE, None, "hpcline")
    assert line("JobID,State,NodeList", row, "plain") == "12|COMPLETED|node[001-002]\n"
    assert line("JobID,State,NodeList", row, "ending") == "12|COMPLETED|node[001-002]|\n"
    assert line("jobid%5,state%-12", row) == "   12 COMPLETED    \n"
    assert line("nodelist%4", row) == "nod+ \n"
    assert line("JobName", row, "plain") == "lu_factorization\n"  # never cut


def test_field_names_match_as_slurm_matches_them() -> None:
    # case-insensitive, the first field of Slurm's table the name begins
    assert [f.name for f in acct_fields.parse_format("jobidraw,JOBID,nodel,start,user")] == [
        "JobIDRaw", "JobID", "NodeList", "Start", "User"
    ]  # fmt: skip
    with pytest.raises(ValueError, match='Invalid field requested: "Bogus"'):
        acct_fields.parse_format("JobID,Bogus")
    with pytest.raises(ValueError, match="Invalid field width"):
        acct_fields.parse_format("JobID%x")


def test_times_sizes_and_the_fields_batchd_does_not_keep() -> None:
    row = Row(DONE, None, "hpcline")
    fields = "Start,End,Submit,Elapsed,ElapsedRaw,Timelimit,TimelimitRaw,CPUTime,ReqMem,NNodes"
    assert line(fields, row, "plain") == (
        "2026-11-19T09:10:00|2026-11-19T09:20:00|2026-11-19T09:00:00|00:10:00|600|01:00:00|"
        "60|00:40:00|1G|2\n"
    )
    wait = Row(WAITING, None, "hpcline")
    assert line("Start,End,NodeList,AllocCPUS", wait, "plain") == (
        "Unknown|Unknown|None assigned|0\n"
    )
    assert line("QOS,AssocID,MaxRSS,TotalCPU,Cluster", row, "plain") == "||||hpcline\n"
    step = Row(RAN, "batch", "hpcline")
    assert line("JobID,MaxRSS,TotalCPU,Partition,ExitCode", step, "plain") == (
        "13.batch|5M|01:01.500||3:0\n"
    )
    assert line("Account", row) == "           \n"  # no value: blanks


@pytest.mark.parametrize(
    ("job", "step", "shown"),
    [
        ({"state": "F", "outcome": "walltime"}, None, "TIMEOUT"),
        ({"state": "F", "outcome": "walltime"}, "batch", "CANCELLED"),
        ({"state": "F", "outcome": "cancelled"}, None, "CANCELLED"),
        ({"state": "F", "outcome": "node_fail"}, None, "NODE_FAIL"),
        ({"state": "F", "outcome": "mem"}, None, "OUT_OF_MEMORY"),
        ({"state": "R"}, None, "RUNNING"),
        ({"state": "H"}, None, "PENDING"),
    ],
)
def test_states(job: dict[str, Any], step: str | None, shown: str) -> None:
    assert acct_fields.state(Row(dict(DONE, **job), step, "c")) == shown


def ns(**kw: Any) -> SimpleNamespace:
    base = dict(jobs=None, allocations=False, users=None, allusers=True, starttime=None,
                endtime=None, states=None, name=None, partition=None, accounts=None,
                clusters=None, qos=None)  # fmt: skip
    return SimpleNamespace(**dict(base, **kw))


def test_default_window_is_since_midnight_and_jobs_lift_it() -> None:
    q = sacct.Query(ns(), NOW, "hpcline")
    assert (q.start, q.end) == (at(0), NOW)
    yesterday = dict(DONE, ctime=at(0) - 7200, end_time=at(0) - 60)
    assert not q.wants(yesterday) and q.wants(DONE) and q.wants(WAITING)
    assert sacct.Query(ns(jobs=["12"]), NOW, "hpcline").wants(yesterday)
    # a bare clock time is the last one past, not tomorrow's
    assert sacct.Query(ns(starttime="11:00"), NOW, "hpcline").start == at(11) - 86400
    assert sacct.Query(ns(starttime="2026-11-19T09:15"), NOW, "hpcline").start == at(9, 15)


def test_steps_only_for_scripts_that_ran() -> None:
    q = sacct.Query(ns(), NOW, "c")
    assert q.steps(DONE) == [None]  # emulated: no process, no step
    assert q.steps(RAN) == [None, "batch"]
    assert sacct.Query(ns(allocations=True), NOW, "c").steps(RAN) == [None]
    assert sacct.Query(ns(jobs=["13.batch"]), NOW, "c").steps(RAN) == ["batch"]
    assert sacct.Query(ns(jobs=["12.batch"]), NOW, "c").steps(DONE) == []


def test_filters_and_refusals() -> None:
    assert not sacct.Query(ns(states=["R,PD"]), NOW, "c").wants(DONE)
    assert sacct.Query(ns(states=["cd"]), NOW, "c").wants(DONE)
    assert sacct.Query(ns(name=["x,lu_factorization"]), NOW, "c").wants(DONE)
    assert not sacct.Query(ns(partition=["debug"]), NOW, "c").wants(DONE)
    assert sacct.Query(ns(jobs=["12_[1-3],13"]), NOW, "c").wants(RAN)
    for bad, words in [
        (ns(jobs=["12x"]), "Invalid job id: 12x"),
        (ns(states=["bogus"]), "Invalid job state specified: bogus"),
        (ns(starttime="yesterdayish"), "Invalid time specification: yesterdayish"),
        (ns(clusters="other"), "cluster other is not known"),
        (ns(qos="high"), "batchd keeps no QOS"),
    ]:
        with pytest.raises(SlurmError, match=words):
            sacct.Query(bad, NOW, "c")


def test_json_has_data_parsers_shape(capsys: pytest.CaptureFixture[str]) -> None:
    acct_output.write_json([Row(RAN, None, "c"), Row(RAN, "batch", "c")], NOW)
    doc = json.loads(capsys.readouterr().out)
    (job,) = doc["jobs"]
    assert job["job_id"] == 13 and job["name"] == "real"
    assert job["state"] == {"current": ["FAILED"], "reason": "None"}
    assert job["exit_code"]["status"] == ["ERROR"]
    assert job["exit_code"]["return_code"] == {"set": True, "infinite": False, "number": 3}
    assert job["time"]["start"] == at(9, 10) and job["time"]["elapsed"] == 600
    assert job["time"]["limit"] == {"set": True, "infinite": False, "number": 60}
    assert [s["step"]["id"] for s in job["steps"]] == ["13.batch"]
    assert doc["errors"] == [] and doc["warnings"] == []


def test_signal_exit_codes_in_json() -> None:
    killed = dict(RAN, exit_status=256 + 9)
    doc = acct_output.job_document(Row(killed, None, "c"), [])
    assert doc["exit_code"]["status"] == ["SIGNALED"]
    assert doc["exit_code"]["signal"] == {
        "id": {"set": True, "infinite": False, "number": 9}, "name": "KILL"
    }  # fmt: skip
