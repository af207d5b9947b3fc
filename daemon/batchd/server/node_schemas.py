"""The API's nodes: what ``GET /nodes`` shows of each (pbsnodes' attributes, with the
node's resources) and what ``PATCH /nodes/{name}`` changes."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from batchd.server.schema_types import Strict, Text

NodeAction = Literal["offline", "online", "down"]


class NodeOut(BaseModel):
    name: str
    index: int
    machine: str
    state: str = Field(description="free | job-exclusive | resv-exclusive | offline | down, ...")
    jobs: list[str]
    job_cores: list[str] = Field(
        default_factory=list,
        description="pbsnodes' jobs: JOB/CORE for each core a job holds on the node",
    )
    reservation: str | None
    comment: str | None
    sharing: str = Field("default_excl", description="default_excl, or default_shared")
    resources_available: dict[str, str] = Field(default_factory=dict)
    resources_assigned: dict[str, str] = Field(default_factory=dict)


class NodeList(BaseModel):
    server: str
    now: int
    nodes: list[NodeOut]
    grid: str | None = Field(
        None, description="the grid structure over the machines (qnodes groups by machine)"
    )


class NodeChange(Strict):
    state: NodeAction
    comment: Text | None = Field(None, max_length=1000)
