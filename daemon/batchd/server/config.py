"""Machine and site configuration: TOML files under conf/, validated by pydantic.

A machine file holds one or more ``[[machine]]`` tables; several make a grid.
Every error names the file, the key and what is allowed.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from batchd.model.machine import Grid, Machine


class ConfigError(ValueError):
    """A configuration file that cannot be used, with file and key in the message."""


class MachineConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=64)
    nodes: int = Field(gt=0, le=1_000_000)
    description: str = ""


class SiteConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str = ""
    machine: list[MachineConfig] = Field(min_length=1)

    def grid(self, nodes: int | None = None) -> Grid:
        """The machines as a grid; ``nodes`` overrides the size of a single machine."""
        machines = [Machine(m.name, m.nodes, m.description) for m in self.machine]
        if nodes is not None:
            if len(machines) != 1:
                raise ConfigError("--nodes only applies to a configuration with one machine")
            machines = [Machine(machines[0].name, nodes, machines[0].description)]
        return Grid(machines)


def _where(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def load_site(path: str | Path) -> SiteConfig:
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    try:
        site = SiteConfig.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        value = f" (got {err['input']!r})" if err["type"] != "missing" else ""
        raise ConfigError(f"{path}: {_where(err['loc'])}: {err['msg']}{value}") from None
    names = [m.name for m in site.machine]
    if len(set(names)) != len(names):
        raise ConfigError(f"{path}: machine names must be unique, got {names}")
    return site
