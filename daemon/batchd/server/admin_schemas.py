"""The JSON bodies of the HTTP API for queues, reservations, the scheduler and the
server's attributes, as pydantic models (see ``schemas`` for the rules)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    Field,
    field_validator,
)

from batchd.server.resource_schemas import ChunkIn
from batchd.server.schema_types import Duration, Start, Strict, Text, TextMap, api_duration


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
