"""API bodies and answers of qrerun, qmove, qsig, tracejob and qmgr's queues."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from batchd.server.schema_types import Duration, Strict, Text, api_duration
from batchd.server.signals import SIGNAL_PATTERN


class MoveRequest(Strict):
    """``qmove``: the queue a waiting job goes to."""

    queue: Text = Field(min_length=1, max_length=64)


class SignalRequest(Strict):
    """``qsig``: a signal name (SIGKILL or KILL) or number; KILL and TERM end the job."""

    signal: str = Field("TERM", json_schema_extra={"pattern": SIGNAL_PATTERN})
    target: Literal["all", "steps", "script"] = Field(
        "all",
        description="which processes of a job that runs for real: all (qsig), steps (all but "
        "the script: scancel's default), script (the script alone: scancel -b)",
    )

    @field_validator("signal")
    @classmethod
    def _known(cls, value: str) -> str:
        if not re.fullmatch(SIGNAL_PATTERN, value):
            raise ValueError(
                f"Unknown/illegal signal name {value!r}: give a name (SIGKILL or KILL, upper "
                "case) or a number 0-31"
            )
        return value


class JobEvent(BaseModel):
    time: int
    source: Literal["S", "L", "M", "A"] = Field(
        description="the PBS log it belongs to: server, scheduler, MoM, accounting"
    )
    message: str


class JobEvents(BaseModel):
    """``tracejob``: a job's history, oldest first."""

    id: str
    server: str
    now: int
    events: list[JobEvent]


class QueueChange(Strict):
    """``qmgr set queue``: the attributes given change, the others stay."""

    enabled: bool | None = None
    started: bool | None = None
    max_nodes: int | None = Field(None, ge=1, description="resources_max.nodect")
    max_walltime: Duration | None = Field(None, description="resources_max.walltime")
    default_walltime: Duration | None = Field(None, description="resources_default.walltime")
    window: Text | None = Field(
        None, description='"any", "prime", "nonprime" or weekly spans, comma-separated'
    )
    machine: Text | None = Field(None, description="the machine its jobs run on")
    max_run: int | None = Field(None, ge=0, description="jobs running at once; null: no limit")
    max_user_run: int | None = Field(
        None, ge=0, description="jobs of one user running at once; null: no limit"
    )
    max_queued: int | None = Field(None, ge=0, description="unfinished jobs; null: no limit")
    max_user_queued: int | None = Field(
        None, ge=0, description="unfinished jobs of one user; null: no limit"
    )

    @field_validator("max_walltime", "default_walltime", mode="before")
    @classmethod
    def _walltimes(cls, value: Any) -> Any:
        return None if value is None else api_duration(value, "walltime")


QUEUE_LIMITS = ("max_run", "max_user_run", "max_queued", "max_user_queued")


class QueueCreate(QueueChange):
    """``qmgr create queue``: a new execution queue, disabled and stopped unless given."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=15)
