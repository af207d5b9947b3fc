"""How a job that ran for real goes on when its processes have ended (run_rules)."""

from __future__ import annotations

from batchd.execution.codes import JOB_EXEC_FAIL2
from batchd.execution.spec import EXITED, STOPPED, EndReport
from batchd.model.job import Job
from batchd.server.records import JobRecord
from batchd.server.service.run_rules import ended_outcome


def record(stopping: str = "", rerunable: bool = True) -> JobRecord:
    job = Job(id=1, submit=0, width=1, estimate=60, runtime=60, external=True)
    job.result.stopping = stopping
    return JobRecord(job=job, owner="alice", ctime=0, qtime=0, rerunable=rerunable)


def report(status: int = 0, reason: str = EXITED) -> EndReport:
    return EndReport(status, reason, start=100.0, end=112.5, cput=3.0, mem=4096, vmem=8192)


def test_a_script_that_ended_on_its_own_finishes_with_its_status_and_usage() -> None:
    rec = record()
    assert ended_outcome(rec, report(0), "", "requeue") == ("ok", None, None)
    assert rec.exit_status == 0 and rec.job.runtime == 12
    assert rec.used == {"walltime": 12.5, "cput": 3.0, "mem": 4096.0, "vmem": 8192.0}
    rec = record()
    outcome, back, comment = ended_outcome(rec, report(42), "", "requeue")
    assert (outcome, back, rec.exit_status) == ("failed", None, 42)
    assert comment == "Job run and finished with exit status 42"


def test_a_job_stopped_to_requeue_goes_back_with_the_first_reason() -> None:
    rec = record(stopping="requeue")
    rec.requeue_why = ("rerun", "rerun by alice")
    outcome, back, _ = ended_outcome(rec, report(271, STOPPED), "", "kill")
    assert back == ("rerun", "rerun by alice")
    assert rec.exit_status is None and rec.used is None and rec.requeue_why is None
    rec = record(stopping="requeue")
    rec.requeue_why = ("rerun", "rerun by alice")  # its supervisor was lost meanwhile
    assert ended_outcome(rec, None, "killed", "requeue")[1] == ("rerun", "rerun by alice")


def test_a_lost_supervisor_follows_node_fail() -> None:
    rec = record()
    outcome, back, _ = ended_outcome(rec, None, "no end record", "requeue")
    assert back == ("node_fail", "its supervisor was lost (no end record)")
    assert rec.exit_status is None
    rec = record(rerunable=False)  # qsub -r n: never requeued
    outcome, back, comment = ended_outcome(rec, None, "no end record", "requeue")
    assert (outcome, back, rec.exit_status) == ("node_fail", None, JOB_EXEC_FAIL2)
    assert comment == "Job killed: its supervisor was lost (no end record)"
    rec = record()
    assert ended_outcome(rec, None, "gone", "kill")[1] is None


def test_a_job_being_deleted_ends_even_when_its_supervisor_was_lost() -> None:
    rec = record(stopping="end")
    rec.job.result.outcome = "cancelled"
    outcome, back, comment = ended_outcome(rec, None, "gone", "requeue")
    assert back is None and rec.exit_status == JOB_EXEC_FAIL2
    assert comment == "Job killed: its supervisor was lost (gone)"
