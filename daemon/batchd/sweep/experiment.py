"""The experiment file of ``batchd sweep``: a TOML ``[sweep]`` table, validated.

Every axis takes one value or a list; unknown keys are refused, and an error names
the file and the key. Paths (traces, machines) are relative to the experiment file.
The reference is docs/sweeps.md.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from batchd.argtypes import MAX_NODES, MAX_SEED, SHRINK_RANGE
from batchd.sweep import SweepError

GRID_PREFIX = "grid-"  # a policy named grid-STRUCTURE is a grid structure over a site file
LOAD_RANGE = (1 / SHRINK_RANGE[1], 1 / SHRINK_RANGE[0])

Scalar = bool | int | float | str
Nodes = Annotated[int, Field(ge=1, le=MAX_NODES)]
Shrink = Annotated[float, Field(ge=SHRINK_RANGE[0], le=SHRINK_RANGE[1])]
Load = Annotated[float, Field(ge=LOAD_RANGE[0], le=LOAD_RANGE[1])]
Seed = Annotated[int, Field(ge=0, le=MAX_SEED)]
First = Annotated[int, Field(ge=1, le=1_000_000_000)]

AXES = (
    *("traces", "nodes", "machines", "policies", "shrink", "load", "first"),
    *("perfect_estimates", "seeds"),
)


def as_list(value: Any) -> Any:
    """One value stands for a list of one."""
    return value if isinstance(value, list) else [value]


def param_text(value: Scalar) -> str:
    """A TOML parameter value as the replay's ``--param`` takes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class SweepTable(BaseModel):
    model_config = ConfigDict(extra="forbid")

    traces: list[str] = Field(min_length=1)
    nodes: list[Nodes] | None = Field(default=None, min_length=1)
    machines: list[str] | None = Field(default=None, min_length=1)
    policies: list[str] = Field(min_length=1)
    params: dict[str, dict[str, list[Scalar]]] = Field(default_factory=dict)
    shrink: list[Shrink] | None = Field(default=None, min_length=1)
    load: list[Load] | None = Field(default=None, min_length=1)
    first: list[First] | None = Field(default=None, min_length=1)
    perfect_estimates: list[bool] = Field(default=[False], min_length=1)
    seeds: list[Seed] | None = Field(default=None, min_length=1)
    repeats: Annotated[int, Field(ge=1, le=100_000)] | None = None
    kill: bool = True
    double: bool = False

    @field_validator(*AXES, mode="before")
    @classmethod
    def _one_or_list(cls, value: Any) -> Any:
        return as_list(value)

    @field_validator("params", mode="before")
    @classmethod
    def _param_lists(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {
            policy: {k: as_list(v) for k, v in grid.items()} if isinstance(grid, dict) else grid
            for policy, grid in value.items()
        }

    @model_validator(mode="after")
    def _consistent(self) -> SweepTable:
        pairs = (("nodes", "machines"), ("shrink", "load"), ("seeds", "repeats"))
        for a, b in pairs:
            if getattr(self, a) is not None and getattr(self, b) is not None:
                raise ValueError(f"give {a} or {b}, not both")
        for axis in AXES:
            values = getattr(self, axis)
            if values is not None and len(set(map(repr, values))) != len(values):
                raise ValueError(f"{axis}: a value is given twice ({values})")
        for policy, grid in self.params.items():
            if policy not in self.policies:
                raise ValueError(f"params.{policy}: not one of the policies {self.policies}")
            for key, values in grid.items():
                if not values:
                    raise ValueError(f"params.{policy}.{key}: give at least one value")
        grids = [p for p in self.policies if p.startswith(GRID_PREFIX)]
        if grids and self.machines is None:
            raise ValueError(f"policy {grids[0]}: a grid structure needs machines (site files)")
        return self

    def seed_values(self) -> list[int]:
        if self.seeds is not None:
            return list(self.seeds)
        return list(range(self.repeats or 1))


class ExperimentFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sweep: SweepTable


UNION_TAGS = ("bool", "int", "float", "str")


def key_path(loc: Sequence[int | str]) -> str:
    """``("sweep", "nodes", 0)`` -> ``sweep.nodes[0]``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def load_experiment(path: str | Path) -> tuple[SweepTable, Path]:
    """The ``[sweep]`` table of an experiment file, and the directory its paths are in."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SweepError(f"{path}: no such experiment file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SweepError(f"{path}: cannot read it: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SweepError(f"{path}: not valid TOML: {exc}") from None
    try:
        table = ExperimentFile.model_validate(raw).sweep
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = list(err["loc"])
        while loc and loc[-1] in UNION_TAGS:  # which member of a union pydantic tried
            loc.pop()
        got = f" (got {err['input']!r})" if err["type"] not in ("missing", "model_type") else ""
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            got, msg = "", "unknown key"
        elif len(err["loc"]) > len(loc):
            msg = "expected a string, number or boolean"
        raise SweepError(f"{path}: {key_path(loc)}: {msg}{got}") from None
    return table, path.parent
