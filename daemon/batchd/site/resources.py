"""Resources a site defines: ``[[resource]]`` tables (PBS's resourcedef) and their values.

Built in are ``ncpus`` and ``mem`` (per node, consumable; a machine's
``cores_per_node`` and ``mem_per_node``), ``mpiprocs`` and ``ompthreads`` (in
chunks), ``walltime``, ``nodes``, ``select`` and ``place``. A site adds its own:
a name, a type (``long``, ``size``, ``string`` or ``boolean``), whether jobs
consume it, and whether it is per node (asked for in chunks, given by each
machine's ``[machine.resources]``) or per job (asked for with ``-l NAME=VALUE``,
with an optional site total for a consumable one). Any other resource is refused.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from batchd.model.chunks import Value
from batchd.model.sizes import SizeError, format_size, parse_size

BUILTIN = ("ncpus", "mem", "mpiprocs", "ompthreads", "walltime", "nodes", "select", "place")
# Names PBS keeps for itself (pbs_resources(7B)); a site may not define them either.
RESERVED = (*BUILTIN, "nodect", "host", "vnode", "arch", "cput", "pcput", "file", "software")
RESOURCE_NAME = r"^[A-Za-z][A-Za-z0-9_-]*$"
Kind = Literal["long", "size", "string", "boolean"]


class ResourceConfig(BaseModel):
    """One custom resource (``[[resource]]``)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(pattern=RESOURCE_NAME, max_length=64)
    type: Kind
    consumable: bool = False
    per: Literal["node", "job"] = "node"
    # A per-job consumable resource: what the whole site has; a job asking for more
    # is refused. Unset: no limit.
    available: int | str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ResourceConfig:
        if self.name.lower() in RESERVED:
            raise ValueError(f"{self.name!r} is a built-in resource; choose another name")
        if self.consumable and self.type not in ("long", "size"):
            raise ValueError(f"a consumable resource is a long or a size, not a {self.type}")
        if self.available is not None:
            if self.per != "job" or not self.consumable:
                raise ValueError("available is for consumable per-job resources")
            self.available = convert(self, self.available)
        return self


def convert(res: ResourceConfig, value: Any) -> Value:
    """A value of the resource's type: an integer (sizes in bytes), a string or a bool.

    ``value`` comes from TOML or JSON (typed) or from ``-l`` (text). ValueError says what
    the type takes.
    """
    if res.type == "boolean":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "t", "yes", "y", "1"):
            return True
        if text in ("false", "f", "no", "n", "0"):
            return False
        raise ValueError(f"{res.name}={value}: a boolean is True or False")
    if res.type == "string":
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise ValueError(f"{res.name}={value!r}: expected a string")
        text = str(value)
        if not text or not text.isprintable() or any(c in text for c in "+:,='\""):
            raise ValueError(
                f"{res.name}={text!r}: a string value is printable, not empty, and has no "
                "+ : , = or quotes"
            )
        return text
    if isinstance(value, bool):
        raise ValueError(f"{res.name}={value}: expected a {res.type}")
    if res.type == "size":
        if isinstance(value, int):
            number = value
        else:
            try:
                number = parse_size(str(value))
            except SizeError as exc:
                raise ValueError(f"{res.name}={value}: {exc}") from None
    else:
        text = str(value).strip()
        if not re.fullmatch(r"[0-9]+", text):
            raise ValueError(f"{res.name}={value}: expected a non-negative integer")
        number = int(text)
    if number < 0 or number >= 1 << 63:
        raise ValueError(f"{res.name}={value}: out of range")
    return number


def show(res: ResourceConfig, value: Value) -> str:
    """A value as qstat and qnodes show it."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if res.type == "size" and isinstance(value, int):
        return format_size(value)
    return str(value)
