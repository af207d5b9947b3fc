"""The API's answers about jobs: ``JobOut``, ``JobList`` and the brief forms of listings."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

JOB_STATES = Literal["Q", "H", "W", "R", "E", "F", "B", "X"]
FRONT_ENDS = Literal["pbs", "slurm"]
PENDING_REASONS = Literal[
    "priority",
    "resources",
    "dependency",
    "dependency_never",
    "begin_time",
    "held_user",
    "held_admin",
    "partition_time_limit",
    "partition_node_limit",
    "node_not_avail",
    "reservation",
    "partition_down",
    "partition_inactive",
]
PENDING_DOC = (
    "why a job that has not started waits (Slurm's reason codes); null once it runs: "
    "held_user, held_admin, dependency, dependency_never, begin_time (exec_time), "
    "partition_down (queue disabled), partition_inactive (queue stopped or its window "
    "closed), partition_time_limit, partition_node_limit, node_not_avail (too few nodes "
    "in service), reservation, resources (next in line), priority (behind another job)"
)
TERM_SIGNAL_DOC = "the signal that ended the job's top process (a job that ran for real)"


class SlurmOut(BaseModel):
    """What sbatch was asked for (JobSubmit.slurm), as submitted."""

    ntasks: int
    cpus_per_task: int | None
    ntasks_per_node: int | None
    mem_per_node_mb: int | None
    mem_per_cpu_mb: int | None
    exclusive: bool
    signal: dict[str, int | bool] | None = Field(
        None, description="--signal: {number, before, script}"
    )
    open_mode: str = Field("truncate", description="--open-mode: append or truncate")
    comment: str | None = Field(None, description="--comment: the job's")


class JobOut(BaseModel):
    id: str = Field(description="SEQ.SERVER, an array's SEQ[].SERVER, a subjob's SEQ[INDEX].SERVER")
    seq: int = Field(description="the sequence number (a subjob's: its array's)")
    name: str
    owner: str
    queue: str
    state: JOB_STATES = Field(
        description="Q H W R E F; an array: B once a subjob has begun; a subjob: X once "
        "finished or deleted (F when its array has finished)"
    )
    nodes: int = Field(
        description="nodes the job runs on or asks for; on a machine of shared nodes the "
        "nodes its chunks run on, or its chunks (nodect) while it waits"
    )
    walltime: int
    runtime: int | None = Field(description="emulated runtime (BATCHD_RUNTIME), if given")
    priority: int
    hold_types: str
    depend: str | None
    ctime: int = Field(description="creation (submission) time")
    qtime: int = Field(description="time it entered its queue")
    etime: int | None = Field(description="time it became eligible to run")
    exec_time: int | None
    stime: int | None = Field(description="start time")
    end_time: int | None
    est_start: int | None = Field(description="planned start in the current full schedule")
    elapsed: int | None = Field(description="seconds run so far (or in total once ended)")
    machine: str | None = Field(
        None,
        description="the machine it runs on, ran on, or waits for; on a grid site null while "
        "it waits for any machine (a central queue, the job pool) or is held",
    )
    exec_host: list[str] = Field(
        description="node names it runs (or ran) on; on a grid site MACHINE/NODE"
    )
    exec_vnode: str | None = Field(
        None, description="its chunks on its nodes, as PBS shows them: (NODE:ncpus=C:mem=M)+..."
    )
    resource_list: dict[str, str] = Field(
        default_factory=dict,
        description="Resource_List as PBS shows it but walltime: select, place, ncpus, nodect, "
        "mem, mpiprocs, nodes (old syntax), the site's per-job resources",
    )
    exit_status: int | None = Field(
        description="Exit_status of a job that ran for real: its script's exit code, 256 + N "
        "when signal N killed it, a negative JOB_EXEC_* code when the system ended it "
        "(-29 walltime, -27 mem) or could not start it; null for an emulated job (no process "
        "ran) and while it runs"
    )
    outcome: str | None = Field(
        description="ok | failed (a non-zero exit, or it could not start) | walltime | mem | "
        "cancelled | signal | node_fail | overflow (killed at its queue window's close) | "
        "resv_end | dependency"
    )
    comment: str | None = Field(description="why it is not running, or how it ended")
    started_by: str | None = Field(description="policy in force when it started")
    variables: dict[str, str]
    utility: list[list[float]] | None = Field(
        None, description="its utility function: [seconds since submission, value] points"
    )
    utility_now: float | None = Field(
        None,
        description="what its utility function gives if it ended now (a finished job: what "
        "it earned at its end)",
    )
    nodes_min: int | None = Field(
        None, description="a moldable job's width range: its narrowest width (the requested one)"
    )
    nodes_max: int | None = Field(None, description="a moldable job's widest width")
    speedup: str | None = Field(
        None, description="a moldable job's speedup model: downey:A:SIGMA or fixed"
    )
    planned_nodes: int | None = Field(
        None,
        description="a waiting moldable job: the width the policy plans to start it with "
        "(moldable-greedy's choice, moldable-iterative's in its last plan; the requested "
        "width under other policies)",
    )
    array: bool = Field(False, description="a job array (qsub -J)")
    array_indices_submitted: str | None = Field(None, description="an array's range: X-Y[:Z]")
    array_indices_remaining: str | None = Field(
        None, description="an array's indices still queued, as PBS writes them (- when none)"
    )
    array_state_count: str | None = Field(
        None, description="an array's subjobs: Queued:N Running:N Exiting:0 Expired:N"
    )
    max_run_subjobs: int | None = Field(None, description="an array's limit of running subjobs")
    array_id: str | None = Field(None, description="a subjob's array: SEQ[].SERVER")
    array_index: int | None = Field(None, description="a subjob's index")
    executed: bool = Field(
        False, description="whether the job runs its script for real (else it is emulated)"
    )
    rerunable: bool = Field(True, description="Rerunable: whether qrerun may requeue it")
    output_path: str | None = Field(None, description="Output_Path: HOST:PATH")
    error_path: str | None = Field(None, description="Error_Path: HOST:PATH")
    join_path: str | None = Field(None, description="Join_Path: oe, eo or n")
    shell: str | None = Field(None, description="Shell_Path_List (qsub -S)")
    euser: str | None = Field(None, description="the account it runs as, once started")
    egroup: str | None = Field(None, description="its primary group, once started")
    resources_used: dict[str, float] | None = Field(
        None,
        description="what its processes used, once it ended: walltime and cput (seconds), mem "
        "and vmem (bytes, the most held at once)",
    )
    front_end: FRONT_ENDS = Field("pbs", description="the commands it was submitted with")
    workdir: str | None = Field(None, description="its working directory (sbatch -D)")
    account: str | None = Field(None, description="Account_Name (sbatch -A, qsub -A)")
    mail_points: str | None = Field(None, description="Mail_Points (qsub -m; no mail is sent)")
    mail_users: str | None = Field(None, description="Mail_Users (qsub -M; no mail is sent)")
    slurm: SlurmOut | None = Field(None, description="a job from sbatch: its request")
    pending_reason: PENDING_REASONS | None = Field(None, description=PENDING_DOC)
    term_signal: int | None = Field(None, description=TERM_SIGNAL_DOC)


class JobList(BaseModel):
    server: str
    now: int
    jobs: list[JobOut]
    next: int | None = Field(
        None, description="with limit: the after= of the next page; null on the last page"
    )


class JobBrief(BaseModel):
    """A job in a ``brief=true`` listing: the fields qstat's tables show."""

    id: str
    seq: int
    name: str
    owner: str
    queue: str
    state: JOB_STATES
    nodes: int
    walltime: int
    stime: int | None
    est_start: int | None
    elapsed: int | None
    front_end: FRONT_ENDS = "pbs"
    workdir: str | None = None
    account: str | None = None
    slurm: SlurmOut | None = None
    pending_reason: PENDING_REASONS | None = Field(None, description=PENDING_DOC)
    term_signal: int | None = Field(None, description=TERM_SIGNAL_DOC)
    resource_list: dict[str, str] = Field(
        default_factory=dict,
        description="of JobOut's resource_list, what qstat -a shows: mem, ncpus, nodect",
    )
    array: bool = Field(False, description="a job array (qsub -J)")


class JobBriefList(BaseModel):
    server: str
    now: int
    jobs: list[JobBrief]
    next: int | None


class TrialOut(BaseModel):
    """``POST /plan``: when the job would start if submitted now."""

    est_start: int | None = Field(
        description="its planned start behind the jobs already planned; null: held, or "
        "more nodes than are in service"
    )
    nodes: list[str] = Field(description="the nodes it would get when it would start now")
    now: int
    seq: int = Field(description="the number it would get if submitted now")
    queue: str = Field(description="the queue it would go to")
