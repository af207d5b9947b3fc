"""The answer of ``GET /plan`` (the web page's data), as pydantic models for the
OpenAPI document; ``planfeed`` builds it as plain lists and dicts (docs/ui.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

State = Literal["Q", "H", "W", "R", "E", "F"]

# seq, state, machine (index; null: waiting for any machine), nodes, walltime, start
# (running: its start; waiting: its planned start or null), end (null: not finished),
# alloc (running: [machine, first, count, first, count, ...] per part), reason (an
# index into reasons, or null)
JobRow = tuple[
    int, State, int | None, int, int, int | None, int | None, list[list[int]] | None, int | None
]
InfoRow = tuple[int, str, str, str]  # seq, name, owner, queue
Decision = tuple[int, str, str, bool]  # when, decider case, order chosen, switched


class PlanCaller(BaseModel):
    user: str
    role: Literal["user", "operator", "manager"]


class PlanDay(BaseModel):
    start: int = Field(description="start of the first step")
    step: int = Field(description="seconds per step")
    values: list[float] = Field(description="share of the nodes allocated in each step")


class PlanWindow(BaseModel):
    queue: str
    why: str = Field(description='the window ("nonprime", weekly spans) or "stopped"')
    closed: list[tuple[int, int]] = Field(description="[from, until) when it starts no job")


class PlanMachine(BaseModel):
    name: str
    nodes: int
    policy: str
    params: dict[str, str]
    order: str = Field(description="the queue order in force")
    states: str = Field(
        pattern="^[iarod]*$",
        description="one letter per node: idle, allocated, reserved, offline, down",
    )
    allocated: int = Field(description="nodes running jobs now")
    day: PlanDay = Field(description="utilization over the last emulated day")
    windows: list[PlanWindow] = Field(description="closed spans of its queues")
    decisions: list[Decision] = Field(description="latest self-tuning decisions, newest last")


class PlanReservation(BaseModel):
    id: str
    name: str
    owner: str
    machine: int
    state: Literal["CO", "RN"]
    start: int
    end: int
    nodes: int
    runs: list[int] = Field(description="its nodes as first, count, ...; [] until it begins")


class PlanOut(BaseModel):
    """The plan, whole (``base`` null) or what changed since version ``base``."""

    server: str
    now: int
    version: str = Field(description="this plan's version (also the ETag)")
    base: str | None = Field(description="the version this answer is a delta on; null: whole")
    caller: PlanCaller
    clock: Literal["realtime", "accelerated"]
    speed: float
    timezone: str = Field(description="the site's time zone (IANA name)")
    utc_offset: int = Field(description="its offset from UTC now, in seconds")
    fields: list[str] = Field(description="the columns of a row of jobs")
    info_fields: list[str] = Field(description="the columns of a row of info")
    machines: list[PlanMachine]
    node_names: list[list[str]] | None = Field(
        None, description="each machine's node names (whole answers only)"
    )
    reservations: list[PlanReservation]
    reasons: list[str] = Field(description="why jobs wait: the texts rows refer to")
    jobs: list[JobRow] = Field(description="every unfinished job, or those that changed")
    info: list[InfoRow] = Field(description="name, owner, queue: of every job, or new ones")
    gone: list[int] = Field(description="in a delta: jobs no longer listed")
    order: list[list[int] | None] = Field(
        description="each machine's waiting jobs in policy order (null in a delta: the "
        "old order without the jobs that left, new ones after it by seq)"
    )
