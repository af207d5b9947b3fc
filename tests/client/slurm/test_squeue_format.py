"""squeue's layouts computed by hand for tiny job views: Slurm's widths, justification,
cutting, the -o letters and -O names, folded arrays and the JSON document."""

from __future__ import annotations

from typing import Any

import pytest

from batchclient.slurm import squeue_fields as sf
from batchclient.slurm.joblist import Listing, Row, ranges, rows
from batchclient.slurm.squeue_json import document


def job(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "7.tiny", "seq": 7, "name": "simulation", "owner": "root", "queue": "workq",
        "state": "R", "nodes": 2, "walltime": 3600, "priority": 0, "ctime": 0, "stime": 0,
        "est_start": None, "end_time": None, "elapsed": 75, "exec_host": ["node001", "node002"],
        "outcome": None, "depend": None, "comment": None, "resource_list": {},
    }  # fmt: skip
    base.update(over)
    return base


def line(fmt: str, view: dict[str, Any], folded: list[int] | None = None) -> str:
    fields, unknown = sf.parse_format(fmt)
    assert unknown == []
    return sf.render(fields, Row(view, folded), 0)


def test_the_default_layout_of_a_running_and_a_pending_job() -> None:
    fields, _ = sf.parse_format(sf.DEFAULT_FORMAT)
    assert sf.render(fields, None, 0) == (
        "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)"
    )
    assert sf.render(fields, Row(job()), 0) == (
        "                 7     workq simulati     root  R       1:15      2 node[001-002]"
    )
    pending = job(state="Q", elapsed=None, exec_host=[], pending_reason="resources")
    assert sf.render(fields, Row(pending), 0) == (
        "                 7     workq simulati     root PD       0:00      2 (Resources)"
    )


def test_the_long_layout_cuts_its_header_as_slurm_does() -> None:
    fields, _ = sf.parse_format(sf.LONG_FORMAT)
    assert sf.render(fields, None, 0) == (
        "             JOBID PARTITION     NAME     USER    STATE       TIME TIME_LIMI  NODES "
        "NODELIST(REASON)"
    )
    assert sf.render(fields, Row(job()), 0).split() == [
        "7", "workq", "simulati", "root", "RUNNING", "1:15", "1:00:00", "2", "node[001-002]",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        ("%i %t", "7 R"),
        ("%.5i|", "    7|"),
        ("%-5i|", "7    |"),  # '-' is not Slurm's: the letter is '-'... see the next test
        ("%5j|", "simul|"),  # left-justified values are cut to their width
        ("%.5j|", "simul|"),  # so are right-justified ones
        ("%.3M|", "1:15|"),  # times are not cut
        ("%.3N|", "node[001-002]|"),  # nor node lists
        ("%T %D %C %u %P", "RUNNING 2 2 root workq"),
        ("%l %L %M", "1:00:00 58:45 1:15"),
        ("%F %K %A", "7 N/A 7"),
        ("%r|%R", "None|node[001-002]"),
        ("%S", "1970-01-01T00:00:00"),
        ("id=%i", "id=7"),  # the text before the first field is printed as is
        ("%a %E %Z %Y %b", "(null) (null) (null) (null) N/A"),
    ],
)
def test_format_letters(fmt: str, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    import time

    time.tzset()
    if fmt.startswith("%-"):
        fields, unknown = sf.parse_format(fmt)
        assert unknown == ["-"]  # Slurm takes no '-': the field is printed as written
        assert sf.render(fields, Row(job()), 0) == "%-5i|"
        return
    assert line(fmt, job()) == expected


def test_an_unknown_letter_is_named_and_printed_as_written() -> None:
    fields, unknown = sf.parse_format("%i %q %t")
    assert unknown == ["q"]
    assert sf.render(fields, Row(job()), 0) == "7 %q R"


def test_long_names_with_widths_and_suffixes() -> None:
    fields, unknown = sf.parse_format("%i")
    fields, unknown = sf.parse_long_format("JobID,Name:.12,State:8 ,ReasonList,Nonsense")
    assert unknown == ["Nonsense"]
    assert sf.render(fields, None, 0) == (
        "JOBID" + " " * 15 + "        NAME" + "STATE    " + "NODELIST(REASON)    "
    )
    assert sf.render(fields, Row(job()), 0) == (
        "7" + " " * 19 + "  simulation" + "RUNNING  " + "node[001-002]       "
    )


def test_states_and_reasons_of_ended_and_held_jobs() -> None:
    assert line("%t %T %R", job(state="F", outcome="walltime")) == "TO TIMEOUT (TimeLimit)"
    assert line("%t %R", job(state="F", outcome="failed")) == "F (NonZeroExitCode)"
    assert line("%t %R", job(state="F", outcome="ok")) == "CD node[001-002]"
    assert line("%t %R", job(state="H", exec_host=[])) == "PD (JobHeldUser)"
    assert line("%t %R", job(state="E")) == "CG node[001-002]"


def test_pending_array_tasks_fold_into_one_row_unless_one_per_task() -> None:
    tasks = [job(id=f"12[{i}].tiny", seq=12, array_index=i, state="Q") for i in (4, 5, 6, 9)]
    running = job(id="12[1].tiny", seq=12, array_index=1)
    folded = rows([running, *tasks], one_per_task=False)
    assert [line("%i %K %F", r.job, r.folded) for r in folded] == [
        "12_1 1 12", "12_[4-6,9] 4-6,9 12",
    ]  # fmt: skip
    assert len(rows([running, *tasks], one_per_task=True)) == 5
    assert ranges([3, 1, 2, 7]) == "1-3,7"


def test_json_is_slurms_document() -> None:
    listing = Listing(now=100, server="tiny")
    tasks = [job(seq=12, array_index=i, state="Q", exec_host=[]) for i in (2, 3)]
    doc = document(listing, [Row(job()), *rows(tasks, one_per_task=False)])
    assert set(doc) == {"jobs", "last_backfill", "last_update", "meta", "errors", "warnings"}
    assert doc["meta"]["plugin"]["data_parser"] == "data_parser/v0.0.41"
    first, array = doc["jobs"]
    assert first["job_id"] == 7 and first["job_state"] == ["RUNNING"]
    assert first["nodes"] == "node[001-002]" and first["user_name"] == "root"
    assert first["time_limit"] == {"set": True, "infinite": False, "number": 60}
    assert first["array_task_id"]["set"] is False and first["state_reason"] == "None"
    assert array["array_job_id"]["number"] == 12 and array["array_task_string"] == "2-3"
    assert array["job_state"] == ["PENDING"] and array["state_reason"] == "Priority"
    unlimited = document(listing, [Row(job(walltime=None))])["jobs"][0]["time_limit"]
    assert unlimited == {"set": False, "infinite": True, "number": 0}
