"""The JSON bodies of the HTTP API's job requests (qsub, qalter, qhold), as pydantic
models; the answers are in ``jobout_schemas``, the other requests in ``admin_schemas``,
``cmd_schemas``, ``node_schemas`` and ``plan_schemas``.

These are the API's edge: requests are validated here, and the OpenAPI
document is generated from them. Times are integer seconds on the emulated
clock (seconds since the epoch); durations are integer seconds. The rules every
body follows are in ``schema_types``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    Field,
    field_validator,
)

from batchd.server.arrays import RangeError, parse_indices
from batchd.server.jobout_schemas import JobBrief as JobBrief  # the answers, re-exported
from batchd.server.jobout_schemas import JobBriefList as JobBriefList
from batchd.server.jobout_schemas import JobList as JobList
from batchd.server.jobout_schemas import JobOut as JobOut
from batchd.server.jobout_schemas import TrialOut as TrialOut
from batchd.server.resource_schemas import (
    NODES_SPEC_DOC,
    PLACE_DOC,
    RESOURCES_DOC,
    SELECT_DOC,
    ChunkIn,
    ResourceMap,
)
from batchd.server.schema_types import (
    ARRAY_RANGE_PATTERN,
    JOB_NAME_DOC_PATTERN,
    JOB_NAME_PATTERN,
    MAIL_POINTS,
    MAIL_USERS,
    MAIL_USERS_DOC,
    NODES_MAX_DOC,
    SPEEDUP_DOC,
    UTILITY_DOC,
    Duration,
    SpeedupText,
    Strict,
    Text,
    TextMap,
    Time,
    UtilityPoints,
    api_duration,
)

HoldType = Literal["u", "o", "s"]


SLURM_DOC = (
    "a job from sbatch: the request as Slurm sees it, for the job's SLURM_* variables and "
    "views (the placement itself is nodes, select and place)"
)
WORKDIR_DOC = (
    "the job's working directory, an absolute path (sbatch -D/--chdir, else the directory "
    "sbatch ran in): a slurm job runs there, and relative output paths are taken there"
)


class SlurmSignal(Strict):
    """--signal=[B:]SIG@SECONDS: SIG SECONDS before the time limit."""

    number: int = Field(ge=1, le=64, description="the signal's number")
    before: int = Field(60, ge=0, le=65535, description="seconds before the time limit")
    script: bool = Field(False, description="B: the batch script alone, else its steps")


class SlurmRequest(Strict):
    """What sbatch was asked for, beside the placement the client made of it."""

    ntasks: int = Field(1, ge=1, le=1_000_000, description="-n: tasks")
    cpus_per_task: int | None = Field(
        None, ge=1, le=100_000, description="-c: CPUs per task; null when not given"
    )
    ntasks_per_node: int | None = Field(None, ge=1, le=1_000_000, description="--ntasks-per-node")
    mem_per_node_mb: int | None = Field(None, ge=1, description="--mem: MB per node")
    mem_per_cpu_mb: int | None = Field(None, ge=1, description="--mem-per-cpu: MB per CPU")
    exclusive: bool = Field(False, description="--exclusive")
    signal: SlurmSignal | None = Field(None, description="--signal: a warning before the limit")
    open_mode: Literal["append", "truncate"] = Field(
        "truncate", description="--open-mode: whether output files are appended to"
    )
    comment: Text | None = Field(None, max_length=1000, description="--comment: the job's")


class JobSubmit(Strict):
    """``qsub`` or ``sbatch``: one job."""

    name: Text = Field(
        "STDIN",
        min_length=1,
        max_length=236,
        pattern=JOB_NAME_PATTERN,
        json_schema_extra={"pattern": JOB_NAME_DOC_PATTERN},
    )
    queue: Text | None = Field(None, description="destination queue; the default queue if unset")
    nodes: int = Field(
        1,
        ge=1,
        description="number of nodes (-l nodes=N or -l select=N); with nodes_max, the "
        "narrowest width of a moldable job",
    )
    walltime: Duration | None = Field(
        None, description="requested walltime: seconds or HH:MM:SS; the queue default if unset"
    )
    priority: int = Field(0, ge=-1024, le=1023)
    exec_time: Time | None = Field(
        None, description="-a: not eligible before this time (state W); years 1970 to 9999"
    )
    hold: bool = Field(False, description="-h: submit with a user hold")
    depend: Text | None = Field(
        None,
        description="afterok|afternotok|afterany|after:ID[:ID...][,type:ID...], and "
        "singleton (no id: after every earlier job of the same owner and name has ended)",
    )
    variables: TextMap = Field(
        default_factory=dict,
        description="-v; BATCHD_RUNTIME=SECONDS sets the emulated runtime",
    )
    script: str = Field("", max_length=1_000_000)
    user: Text | None = Field(
        None, description="owner: only a manager may submit for another user (trace injection)"
    )
    utility: UtilityPoints | None = Field(None, description=UTILITY_DOC)
    nodes_max: int | None = Field(None, ge=1, description=NODES_MAX_DOC)
    speedup: SpeedupText | None = Field(None, description=SPEEDUP_DOC)
    select: list[ChunkIn] | None = Field(None, min_length=1, max_length=64, description=SELECT_DOC)
    place: Text | None = Field(None, max_length=200, description=PLACE_DOC)
    nodes_spec: Text | None = Field(None, max_length=1000, description=NODES_SPEC_DOC)
    resources: ResourceMap = Field(default_factory=dict, description=RESOURCES_DOC)
    rerunable: bool = Field(True, description="-r y|n: whether qrerun may requeue the job")
    array_indices: str | None = Field(
        None,
        max_length=20_000,
        json_schema_extra={"pattern": ARRAY_RANGE_PATTERN},
        description="qsub -J X-Y[:Z]: a job array, one subjob per index (X < Y, indices "
        "0 to 1048575, step Z >= 1; at most the server's max_array_size subjobs); or a "
        "list of indices and ranges, as sbatch --array takes it (1,3,5-7; a single 4)",
    )
    max_run_subjobs: int | None = Field(
        None, ge=1, description="qsub -J ...%N: at most N subjobs of the array run at once"
    )
    output_path: Text | None = Field(
        None,
        min_length=1,
        max_length=4096,
        description="qsub -o [HOST:]PATH: the job's standard output (a job that runs for real; "
        "default NAME.oSEQ in PBS_O_WORKDIR, a directory takes that name inside it)",
    )
    error_path: Text | None = Field(
        None,
        min_length=1,
        max_length=4096,
        description="qsub -e [HOST:]PATH: the job's standard error (default NAME.eSEQ)",
    )
    join_path: Literal["oe", "eo", "n"] | None = Field(
        None, description="qsub -j: oe (error into output), eo (output into error) or n"
    )
    shell: Text | None = Field(
        None,
        min_length=1,
        max_length=4096,
        description="qsub -S PATH[@HOST][,...]: the shell or interpreter of the script "
        "(default the owner's login shell)",
    )
    front_end: Literal["pbs", "slurm"] = Field(
        "pbs",
        description="the commands it came from: a slurm job runs in workdir with SLURM_* "
        "variables, and its output and error paths are Slurm filename patterns",
    )
    workdir: Text | None = Field(None, min_length=1, max_length=4096, description=WORKDIR_DOC)
    account: Text | None = Field(
        None, min_length=1, max_length=256, description="sbatch -A, qsub -A: Account_Name"
    )
    mail_points: str | None = Field(
        None,
        pattern=MAIL_POINTS,
        description="qsub -m: Mail_Points, n or letters of abej (kept and shown; no mail is sent)",
    )
    mail_users: Text | None = Field(
        None,
        max_length=1024,
        pattern=MAIL_USERS,
        json_schema_extra={"pattern": MAIL_USERS_DOC},
        description="qsub -M: Mail_Users, user[@host][,...] (kept and shown; no mail is sent)",
    )
    slurm: SlurmRequest | None = Field(None, description=SLURM_DOC)

    @field_validator("walltime", mode="before")
    @classmethod
    def _walltime(cls, value: Any) -> Any:
        return api_duration(value, "walltime")

    @field_validator("workdir")
    @classmethod
    def _workdir(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("/"):
            raise ValueError(f"{value!r}: give an absolute path")
        return value

    @field_validator("variables")
    @classmethod
    def _names(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            if not name or "=" in name:
                raise ValueError(f"{name!r} is not a variable name (no '=', not empty)")
        return value

    @field_validator("array_indices")
    @classmethod
    def _array_indices(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                parse_indices(value, expand=False)  # made, within the server's limit, later
            except RangeError as exc:
                raise ValueError(f"illegal -J value: {exc}") from None
        return value


class JobAlter(Strict):
    """``qalter``: attributes of a queued or held job."""

    name: Text | None = Field(
        None,
        min_length=1,
        max_length=236,
        pattern=JOB_NAME_PATTERN,
        json_schema_extra={"pattern": JOB_NAME_DOC_PATTERN},
    )
    queue: Text | None = None
    walltime: Duration | None = None
    priority: int | None = Field(None, ge=-1024, le=1023)
    nodes: int | None = Field(
        None,
        ge=1,
        description="number of nodes; without nodes_max a moldable job becomes rigid on it",
    )
    utility: UtilityPoints | None = Field(None, description=UTILITY_DOC)
    nodes_max: int | None = Field(None, ge=1, description=NODES_MAX_DOC)
    speedup: SpeedupText | None = Field(None, description=SPEEDUP_DOC)

    @field_validator("walltime", mode="before")
    @classmethod
    def _walltime(cls, value: Any) -> Any:
        return api_duration(value, "walltime")


class HoldRequest(Strict):
    types: str = Field("u", pattern=r"^[uos]+$", description="hold types: u, o and/or s")
