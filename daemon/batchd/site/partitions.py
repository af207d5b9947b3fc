"""``[[partition]]`` tables: Slurm's partitions, another name for ``[[queue]]``.

A partition takes Slurm's keys (slurm.conf's PartitionName, DefaultTime, MaxTime,
MaxNodes, Default, State) and becomes the queue they mean: DefaultTime its default
walltime, MaxTime its max walltime, MaxNodes its max nodes (UNLIMITED or INFINITE:
none), Default=YES the site's default queue, State UP (enabled, started), DRAIN
(takes no new jobs, runs the queued ones), DOWN (takes jobs, starts none) or INACTIVE
(neither). Times are Slurm's: ``MINUTES``, ``MINUTES:SECONDS``, ``HOURS:MINUTES:SECONDS``,
``DAYS-HOURS``, ``DAYS-HOURS:MINUTES``, ``DAYS-HOURS:MINUTES:SECONDS``; a TOML integer
counts minutes, as slurm.conf does.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from batchd.model.times import MAX_DURATION

NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
UNLIMITED = ("UNLIMITED", "INFINITE")
TIME_FORMS = (
    "MINUTES, MINUTES:SECONDS, HOURS:MINUTES:SECONDS, DAYS-HOURS, DAYS-HOURS:MINUTES, "
    "DAYS-HOURS:MINUTES:SECONDS or UNLIMITED"
)
_DAYS = re.compile(r"^([0-9]+)-([0-9]+)(?::([0-9]+))?(?::([0-9]+))?$")
_CLOCK = re.compile(r"^([0-9]+)(?::([0-9]+))?(?::([0-9]+))?$")
STATES = {"UP": (True, True), "DRAIN": (False, True), "DOWN": (True, False),
          "INACTIVE": (False, False)}  # fmt: skip


def slurm_seconds(value: Any) -> int | None:
    """A Slurm time limit in seconds; None: UNLIMITED. ValueError naming the forms."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"give a Slurm time ({TIME_FORMS})")
    if isinstance(value, int):
        seconds = value * 60
    elif value.strip().upper() in UNLIMITED:
        return None
    elif m := _DAYS.match(value.strip()):
        days, hours, minutes, secs = (int(g) if g else 0 for g in m.groups())
        seconds = ((days * 24 + hours) * 60 + minutes) * 60 + secs
    elif m := _CLOCK.match(value.strip()):
        parts = [int(g) for g in m.groups() if g is not None]
        if len(parts) == 1:
            seconds = parts[0] * 60
        elif len(parts) == 2:
            seconds = parts[0] * 60 + parts[1]
        else:
            seconds = (parts[0] * 60 + parts[1]) * 60 + parts[2]
    else:
        raise ValueError(f"{value!r} is not a Slurm time ({TIME_FORMS})")
    if not 0 < seconds <= MAX_DURATION:
        raise ValueError(f"{value!r} must be more than 0 and at most 3650 days")
    return seconds


class PartitionConfig(BaseModel):
    """One ``[[partition]]`` table, with slurm.conf's key names."""

    model_config = ConfigDict(extra="forbid", strict=True)

    PartitionName: str = Field(pattern=NAME, max_length=15)
    DefaultTime: int | str | None = None
    MaxTime: int | str = "UNLIMITED"
    MaxNodes: int | str = "UNLIMITED"
    Default: Literal["YES", "NO"] = "NO"
    State: Literal["UP", "DOWN", "DRAIN", "INACTIVE"] = "UP"
    machine: str | None = Field(None, pattern=NAME, max_length=64)

    @field_validator("DefaultTime", "MaxTime")
    @classmethod
    def _time(cls, value: Any) -> Any:
        if value is not None:
            slurm_seconds(value)
        return value

    @field_validator("MaxNodes")
    @classmethod
    def _nodes(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().upper() not in UNLIMITED:
            raise ValueError("give a number of nodes or UNLIMITED")
        if isinstance(value, int) and value < 1:
            raise ValueError("give at least 1 (or UNLIMITED)")
        return value

    def queue_table(self) -> dict[str, Any]:
        """The ``[[queue]]`` table this partition means."""
        enabled, started = STATES[self.State]
        table: dict[str, Any] = {"name": self.PartitionName, "enabled": enabled,
                                 "started": started}  # fmt: skip
        max_walltime = slurm_seconds(self.MaxTime)
        if max_walltime is not None:
            table["max_walltime"] = max_walltime
        if self.DefaultTime is not None:
            default = slurm_seconds(self.DefaultTime)
            if default is not None:
                table["default_walltime"] = default
        elif max_walltime is not None:
            table["default_walltime"] = max_walltime  # Slurm: a job without -t gets MaxTime
        if isinstance(self.MaxNodes, int):
            table["max_nodes"] = self.MaxNodes
        if self.machine is not None:
            table["machine"] = self.machine
        return table
