"""The JSON bodies of the HTTP API, as pydantic models.

These are the API's edge: requests are validated here, and the OpenAPI
document is generated from them. Times are integer seconds on the emulated
clock (seconds since the epoch); durations are integer seconds.

Request bodies are strict: a JSON number where an integer is due must be a
whole number (``4`` or ``4.0``, as JSON Schema counts integers; not ``true``,
``"4"`` or ``4.5``), a flag must be ``true`` or
``false``; only walltimes and durations also take ``HH:MM:SS`` strings. Text
fields refuse control characters (batchd.model.text), times lie in years
1970 to 9999, durations are at most 3650 days.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    WithJsonSchema,
    field_validator,
)

from batchd.model.moldable import MoldError, Speedup
from batchd.model.text import REFUSED_CLASS, TEXT_PATTERN, check_text
from batchd.model.times import MAX_DURATION, TIME_MAX, TIME_MIN, plausible_time, positive_duration
from batchd.model.utility import Utility, UtilityError
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

HoldType = Literal["u", "o", "s"]


def _text(value: Any) -> Any:
    return check_text(value) if isinstance(value, str) else value


# Any text a request stores: refused if it holds a control character (checked first,
# so that the message says so even where a pattern would refuse the text too). The
# document shows the same rule as a pattern.
Text = Annotated[str, BeforeValidator(_text), Field(json_schema_extra={"pattern": TEXT_PATTERN})]

# -v variables and policy parameters: text keys to text values.
TextMap = Annotated[
    dict[Text, Text],
    WithJsonSchema(
        {
            "type": "object",
            "propertyNames": {"pattern": TEXT_PATTERN},
            "additionalProperties": {"type": "string", "pattern": TEXT_PATTERN},
        }
    ),
]

# A job name: no white space, '@' or ':' (PBS), and no control character.
JOB_NAME_PATTERN = r"^[^\s@:]+$"
ITEM = r"[0-9]{1,7}(-[0-9]{1,7}(:[0-9]{1,7})?)?"
ARRAY_RANGE_PATTERN = rf"^{ITEM}(,{ITEM})*$"
JOB_NAME_DOC_PATTERN = rf"^[^\s@:{REFUSED_CLASS}]+$"

# A time (seconds since the epoch) in years 1970 to 9999.
Time = Annotated[
    int,
    AfterValidator(plausible_time),
    Field(json_schema_extra={"minimum": TIME_MIN, "maximum": TIME_MAX}),
]

# A duration: positive integer seconds up to 3650 days, or [[HH:]MM:]SS text with at
# most four digits of hours or minutes (so that every such text is in range).
DURATION_PATTERN = r"^([0-9]{1,4}:[0-5][0-9]:[0-5][0-9]|[0-9]{1,4}:[0-5][0-9]|[0-9]{1,8})$"
_DURATION = re.compile(DURATION_PATTERN)
Duration = Annotated[
    int,
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer", "minimum": 1, "maximum": MAX_DURATION},
                {"type": "string", "pattern": DURATION_PATTERN, "not": {"pattern": "^[0:]*$"}},
            ]
        }
    ),
]


# A utility function (seed 003): [seconds since submission, value] points. The document
# says the shape; the rules between points (first time 0, times strictly increasing,
# values never increasing) are a 400 naming the rule and the point.
UTILITY_MAX_POINTS = 1000
UTILITY_DOC = (
    "utility function: [seconds since submission, value] points, at least two; the "
    "first time 0, times strictly increasing, values never increasing and never "
    "negative, linear in between, 0 after the last point (a 400 names a point that "
    "breaks a rule)"
)


def _utility(value: Any) -> list[list[float]]:
    if not isinstance(value, list) or not all(
        isinstance(p, list)
        and len(p) == 2
        and all(isinstance(x, int | float) and not isinstance(x, bool) for x in p)
        for p in value
    ):
        raise ValueError("give a list of [seconds, value] pairs of numbers")
    if len(value) > UTILITY_MAX_POINTS:
        raise ValueError(f"at most {UTILITY_MAX_POINTS} points")
    try:
        points = [(float(t), float(v)) for t, v in value]
    except OverflowError:
        raise ValueError("a time or value is too large") from None
    try:
        util = Utility(points)
    except UtilityError as exc:
        raise ValueError(str(exc)) from None
    return [[t, v] for t, v in util.points]


UtilityPoints = Annotated[
    list[list[float]],
    PlainValidator(_utility),
    WithJsonSchema(
        {
            "type": "array",
            "minItems": 2,
            "maxItems": UTILITY_MAX_POINTS,
            "items": {
                "type": "array",
                "minItems": 2,
                "maxItems": 2,
                "items": {"type": "number", "minimum": 0},
            },
        }
    ),
]


# A moldable job's speedup model (seed 004): the model's own rules first (a 400 naming
# the rule: A below 1), then the pattern, which says them too (A has no leading zero).
_DECIMAL = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
SPEEDUP_PATTERN = rf"^(?:fixed|downey:[1-9][0-9]*(?:\.[0-9]*)?:{_DECIMAL})$"
SPEEDUP_MAX_LENGTH = 64
_SPEEDUP = re.compile(SPEEDUP_PATTERN)
SPEEDUP_DOC = (
    "-W speedup=: how a moldable job's runtime depends on its width: downey:A:SIGMA "
    "(Downey's speedup, A >= 1 the average parallelism, SIGMA >= 0 its variance) or fixed "
    "(the same runtime at every width); fixed if unset"
)


def _speedup(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("give downey:A:SIGMA or fixed")
    if len(value) > SPEEDUP_MAX_LENGTH:
        raise ValueError(f"{value[:20]!r}...: at most {SPEEDUP_MAX_LENGTH} characters")
    try:
        model = Speedup.parse(value)
    except MoldError as exc:
        raise ValueError(str(exc)) from None
    if not _SPEEDUP.match(value):
        raise ValueError(
            f"{value!r}: give downey:A:SIGMA (decimal numbers, A without a leading zero, "
            "nothing around it) or fixed"
        )
    return model.format()


SpeedupText = Annotated[
    str,
    PlainValidator(_speedup),
    WithJsonSchema({"type": "string", "pattern": SPEEDUP_PATTERN, "maxLength": SPEEDUP_MAX_LENGTH}),
]
NODES_MAX_DOC = (
    "-l nodes=MIN-MAX: a moldable job's widest width (nodes is then the narrowest, the "
    "width its walltime and BATCHD_RUNTIME are for); the scheduler chooses its width"
)


def api_duration(value: Any, what: str) -> int | None:
    """A duration as the document describes it; the text form only as its pattern says."""
    seconds = positive_duration(value, what)
    if isinstance(value, str) and not _DURATION.fullmatch(value):
        raise ValueError(
            f"{value!r} is not a duration as the API takes it: seconds (at most 8 digits) "
            "or [[HH:]MM:]SS with at most 4 digits of hours or minutes, nothing around it"
        )
    return seconds


def _start(value: Any) -> int | str:
    if value in ("now", "asap") and isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return plausible_time(value)
    raise ValueError("expected a time (seconds since the epoch), 'now' or 'asap'")


# A reservation's start: one validator, so that a refusal names the field alone.
Start = Annotated[
    int | str,
    PlainValidator(
        _start,
        json_schema_input_type=Annotated[int, Field(ge=TIME_MIN, le=TIME_MAX)]
        | Literal["now", "asap"],
    ),
]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ErrorOut(Strict):
    error: str = Field(description="machine-readable code, e.g. bad_request, forbidden")
    message: str = Field(description="what was wrong and how to fix it")


# -- jobs ----------------------------------------------------------------------


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


# -- queues --------------------------------------------------------------------


class QueueOut(BaseModel):
    name: str
    machine: str = Field(description="the machine its jobs run on")
    queue_type: str = "Execution"
    enabled: bool
    started: bool
    default: bool
    max_nodes: int | None
    max_walltime: int | None
    default_walltime: int
    max_run: int | None = Field(None, description="jobs running at once (null: no limit)")
    max_user_run: int | None = Field(None, description="jobs of one user running at once")
    max_queued: int | None = Field(None, description="unfinished jobs the queue holds")
    max_user_queued: int | None = Field(None, description="unfinished jobs of one user in it")
    total: int
    counts: dict[str, int] = Field(description="jobs by state letter: Q R H W E")
    window: str = Field(
        "any",
        description='when the queue runs jobs: "any", "prime", "nonprime", or weekly spans '
        'in local time such as "Mon-Fri 07:00-19:30, Fri 20:00-Mon 07:00"',
    )
    window_open: bool = Field(True, description="whether the window is open now")
    window_next_change: int | None = Field(
        None, description="when the window next opens or closes; null: never (or no window)"
    )


class QueueList(BaseModel):
    server: str
    now: int
    queues: list[QueueOut]


# -- reservations --------------------------------------------------------------


class ReservationCreate(Strict):
    start: Start = Field(description="time, 'now' or 'asap'")
    duration: Duration = Field(description="seconds or HH:MM:SS")
    nodes: int = Field(ge=1)
    select: list[ChunkIn] | None = Field(
        None,
        min_length=1,
        max_length=64,
        description="the chunks asked for (pbs_rsub -l select=...), each on a node of its "
        "own; their counts add up to nodes. Kept as given for pbs_rstat",
    )
    name: Text = Field("NULL", max_length=236)
    machine: Text | None = Field(
        None, description="the machine to hold nodes of; the first if unset"
    )

    @field_validator("duration", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> Any:
        return api_duration(value, "duration")


class ReservationOut(BaseModel):
    id: str = Field(description="R<seq>.SERVER")
    name: str
    owner: str
    state: Literal["CO", "RN", "FN"] = Field(description="confirmed, running, finished")
    start: int
    end: int
    duration: int
    nodes: int
    machine: str = Field(description="the machine whose nodes it holds")
    node_list: list[str]
    queue: str = Field(description="the queue of its jobs: R<seq>")
    select: str = Field(
        "", description='Resource_List.select: the chunks as asked for ("4:ncpus=2")'
    )


class ReservationList(BaseModel):
    server: str
    now: int
    reservations: list[ReservationOut]


# -- scheduler and server --------------------------------------------------------


class PolicyInfo(BaseModel):
    name: str
    description: str
    params: list[str]


class MachineScheduler(BaseModel):
    name: str
    policy: str
    params: dict[str, str]
    order: str = Field(description="the queue order in force: FCFS, SJF or LJF")
    report: dict[str, Any] = Field(description="policy statistics (dynP: switches, decider cases)")


class GridOut(BaseModel):
    structure: str = Field(description="central, hierarchical, decentral or pool")
    params: dict[str, str] = Field(description="the parameters set (docs/grid.md)")
    in_force: dict[str, str] = Field(description="the parameters in force, defaults included")
    structures: list[str] = Field(description="the structures the daemon serves")


class SchedulerOut(BaseModel):
    policy: str = Field(description="the policy of the first machine")
    params: dict[str, str]
    policies: list[PolicyInfo]
    report: dict[str, Any] = Field(description="policy statistics (dynP: switches, decider cases)")
    switches: list[dict[str, Any]] = Field(description="live policy changes, newest last")
    machines: list[MachineScheduler] = Field(description="every machine's policy")
    grid: GridOut | None = Field(
        None, description="the grid structure the machines run under; null without [grid]"
    )


class GridChange(Strict):
    """A grid site's structure and its parameters (docs/grid.md)."""

    structure: Text | None = Field(
        None, description="central, hierarchical, decentral or pool; unset: the current one"
    )
    params: dict[Text, Text] | None = Field(
        None,
        description="grid parameters (scheduler, select, local, local.MACHINE, home, ...); "
        "given with a structure they replace, alone they update (an empty value removes one)",
    )


class SchedulerChange(Strict):
    """Set the policy and/or its parameters; the queue is re-planned at once.

    On a grid site: ``grid`` changes the structure or its parameters; ``policy`` sets
    the local policy (grid parameter ``local``, or ``local.MACHINE`` with ``machine``)."""

    policy: Text | None = None
    params: TextMap | None = Field(
        None, description="parameters; given with a policy they replace, alone they update"
    )
    machine: Text | None = Field(None, description="the machine to change; every machine if unset")
    grid: GridChange | None = Field(
        None, description="a grid site's structure and parameters (400 on other sites)"
    )


class ServerOut(BaseModel):
    name: str
    version: str
    now: int
    clock: Literal["realtime", "accelerated"]
    speed: float
    started: int = Field(description="emulated time the daemon started")
    machine: str = Field(description="the first machine")
    nodes: int = Field(description="nodes of the first machine")
    machines: list[dict[str, Any]] = Field(description="every machine: name and nodes")
    default_queue: str
    policy: str
    node_fail: Literal["requeue", "kill"]
    overflow: Literal["kill", "requeue"] = Field(
        "kill", description="what a job still running when its queue's window closes gets"
    )
    jobs: dict[str, int] = Field(description="jobs by state letter; F: those in the history")
    job_history_duration: int = Field(
        description="seconds a finished job stays in the history (emulated time)"
    )
    query_other_jobs: bool = Field(
        False, description="whether users see other users' jobs (operators and managers see all)"
    )
    scheduling: bool = Field(True, description="whether the scheduler starts jobs")
    max_run: int | None = Field(None, description="jobs running at once in all (null: no limit)")
    max_user_run: int | None = Field(None, description="jobs of one user running at once")
    max_queued: int | None = Field(None, description="unfinished jobs in all")
    max_user_queued: int | None = Field(None, description="unfinished jobs of one user")
    replay: dict[str, Any] | None = Field(description="the trace being injected, if any")
    state_save_error: str | None = Field(
        None,
        description="why the state file takes no writes now (changes get 503 meanwhile); "
        "null while saving works",
    )


class ServerChange(Strict):
    """Server attributes a manager sets live (qmgr ``set server``); saved in the state."""

    job_history_duration: Duration | None = Field(
        None, description="seconds or HH:MM:SS: how long finished jobs stay in the history"
    )
    query_other_jobs: bool | None = Field(
        None,
        description="whether users see other users' jobs; saved, it outlasts the config's",
    )
    scheduling: bool | None = Field(
        None, description="false: no job starts (running ones go on); true: scheduling resumes"
    )
    max_run: int | None = Field(
        None, ge=0, description="jobs running at once in all; null removes the limit"
    )
    max_user_run: int | None = Field(
        None, ge=0, description="jobs of one user running at once; null removes the limit"
    )
    max_queued: int | None = Field(
        None, ge=0, description="unfinished jobs in all; null removes the limit"
    )
    max_user_queued: int | None = Field(
        None, ge=0, description="unfinished jobs of one user; null removes the limit"
    )

    @field_validator("job_history_duration", mode="before")
    @classmethod
    def _history(cls, value: Any) -> Any:
        return api_duration(value, "job_history_duration")


class Health(BaseModel):
    status: Literal["ok"]
    now: int
