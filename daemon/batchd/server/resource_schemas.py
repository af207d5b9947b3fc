"""The API's resource request of a job: ``select`` chunks, ``place``, ``-l nodes=`` as
written, and job-wide resources (``qsub -l``), as ``JobSubmit`` takes them.

Only the form is checked here; the service checks names, types and sizes against
the site (``server/service/resources.py``) and names what it refuses.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from batchd.model.text import TEXT_PATTERN, check_text


def _text(value: Any) -> Any:
    return check_text(value) if isinstance(value, str) else value


# As schemas.Text: no control characters (schemas imports this module).
Text = Annotated[
    str,
    BeforeValidator(_text),
    Field(max_length=1000, json_schema_extra={"pattern": TEXT_PATTERN}),
]

# A resource value: a number, text (sizes such as "4gb", strings) or a boolean.
ResourceValue = int | bool | Text
ResourceMap = Annotated[dict[Text, ResourceValue], Field(max_length=64)]

SELECT_DOC = (
    "-l select=...: the chunks, each COUNT chunks of the resources named, placed on nodes "
    "by place (e.g. [{count: 2, ncpus: 2, mem: '4gb', mpiprocs: 2}])"
)
PLACE_DOC = (
    "-l place=[free|pack|scatter|vscatter][:excl|shared|exclhost][:group=RES]; needs select. "
    "Unset: the machine's default (scatter, one chunk per node; free on a shared machine)"
)
NODES_SPEC_DOC = (
    "-l nodes=N[:ppn=P][:PROPERTY...][+...][#excl|#shared] as written (the old syntax), "
    "converted to chunks as PBS does; not with select, place or nodes"
)
RESOURCES_DOC = (
    "job-wide resources (-l NAME=VALUE): ncpus and mem without select (one chunk, "
    "place=pack), and the site's per-job resources"
)


class ChunkIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    count: int = Field(1, ge=1, le=1_000_000)
    ncpus: int | None = Field(None, ge=0, le=1_000_000, description="default 1")
    mem: int | Text | None = Field(
        None, description="bytes, or a PBS size such as 4gb (b kb mb gb tb pb, w kw ...)"
    )
    mpiprocs: int | None = Field(None, ge=0, le=1_000_000)
    ompthreads: int | None = Field(None, ge=0, le=1_000_000)
    custom: ResourceMap = Field(
        default_factory=dict, description="the site's per-node resources: NAME: VALUE"
    )
