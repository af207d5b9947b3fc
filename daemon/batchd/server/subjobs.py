"""A subjob made from its array: the array's request, its own key, index and variables."""

from __future__ import annotations

from batchd.engine import transitions
from batchd.model.job import Job
from batchd.model.states import JobState
from batchd.server.arrays import EXPIRED, label, subjob_key
from batchd.server.records import JobRecord
from batchd.server.slurm_env import array_variables


def subjob_record(parent: JobRecord, index: int, server: str, now: int) -> JobRecord:
    """Subjob ``index`` of array ``parent`` as it would be made now, not yet anywhere: held
    while the array is, waiting while the array's execution time is ahead, else queued.
    Its environment holds PBS_ARRAY_INDEX, PBS_ARRAY_ID and its own PBS_JOBID (a job from
    sbatch: SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID and the range's MIN, MAX, STEP, COUNT)."""
    t = parent.job
    seq = parent.seq
    job = Job(
        id=subjob_key(seq, index),
        submit=t.submit,
        width=t.width,
        estimate=t.estimate,
        runtime=t.runtime,
        user=t.user,
        queue=t.queue,
        name=t.name,
        machine=t.machine,
        priority=t.priority,
        utility=t.utility,
        priority_class=t.priority_class,
        mold=t.mold,
        external=t.external,
    )
    variables = dict(parent.variables)
    if parent.front_end == "slurm" and parent.array is not None:
        variables.update(array_variables(parent, parent.array, index))
    else:
        variables["PBS_ARRAY_INDEX"] = str(index)
        variables["PBS_ARRAY_ID"] = f"{label(seq, True)}.{server}"
        variables["PBS_JOBID"] = f"{seq}[{index}].{server}"
    rec = JobRecord(
        job=job,
        owner=parent.owner,
        ctime=parent.ctime,
        qtime=parent.qtime,
        exec_time=parent.exec_time,
        hold_types=parent.hold_types,
        variables=variables,
        script=parent.script,
        runtime_given=parent.runtime_given,
        resources=parent.resources,
        subjob_index=index,
        output_path=parent.output_path,
        error_path=parent.error_path,
        join=parent.join,
        shell=parent.shell,
        front_end=parent.front_end,
        workdir=parent.workdir,
        account=parent.account,
        mail_points=parent.mail_points,
        mail_users=parent.mail_users,
        slurm=parent.slurm,
    )
    if rec.hold_types:
        transitions.first_state(job, JobState.HELD)
        rec.comment = parent.comment
    elif rec.exec_time is not None and rec.exec_time > now:
        transitions.first_state(job, JobState.WAITING)
    return rec


def shown_subjob(parent: JobRecord, index: int, server: str, now: int) -> JobRecord:
    """A subjob that is not in memory nor in the history, as qstat shows it: queued (held,
    waiting) until its turn, or expired (deleted before it was made, or purged)."""
    spec = parent.array
    assert spec is not None
    position = spec.position(index)
    rec = subjob_record(parent, index, server, now)
    if position is not None and spec.letter(position) == EXPIRED:
        transitions.shown_expired(rec.job, parent.job.end if parent.job.end >= 0 else now)
    return rec
