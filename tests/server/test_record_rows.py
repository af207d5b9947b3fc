"""A job's row in the state file: what became of it is saved under the row's own keys."""

from __future__ import annotations

from batchd.model.job import Job, JobResult
from batchd.model.states import JobState
from batchd.server.records import JobRecord

RESULT_KEYS = ("killed", "outcome", "submit_plan", "started_by")


def finished_record() -> JobRecord:
    job = Job(id=7, submit=10, width=2, estimate=60, runtime=90, user="alice", queue="workq")
    job.state, job.start, job.end, job.units = JobState.FINISHED, 20, 80, [0, 1]
    job.result = JobResult(killed=True, outcome="walltime", submit_plan=15, started_by="SJF")
    return JobRecord(job=job, owner="alice", ctime=10, qtime=10)


def test_the_result_is_saved_under_the_rows_keys() -> None:
    row = finished_record().to_row()
    assert {k: row[k] for k in RESULT_KEYS} == {
        "killed": True,
        "outcome": "walltime",
        "submit_plan": 15,
        "started_by": "SJF",
    }
    assert "result" not in row


def test_a_saved_row_loads_its_result_back() -> None:
    row = finished_record().to_row()
    job = JobRecord.from_row(row).job
    assert job.result == JobResult(True, "walltime", 15, "SJF", "")


def test_a_job_that_runs_for_real_keeps_what_follows_its_stop() -> None:
    rec = finished_record()
    rec.job.state, rec.job.external = JobState.EXITING, True
    rec.job.result.stopping = "requeue"
    row = rec.to_row()
    assert row["stopping"] == "requeue"
    assert JobRecord.from_row(row).job.result.stopping == "requeue"


def test_each_job_has_a_result_of_its_own() -> None:
    a = Job(id=1, submit=0, width=1, estimate=10, runtime=10)
    b = Job(id=2, submit=0, width=1, estimate=10, runtime=10)
    a.result.outcome = "ok"
    assert b.result.outcome == "" and a.result is not b.result
