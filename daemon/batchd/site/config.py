"""The site: a TOML file under conf/ read, validated by pydantic and checked whole.

A machine file holds one or more ``[[machine]]`` tables (their models are in
``batchd.site.tables``); several make a grid, and each queue names the machine its
jobs run on (the first by default). Every error names the file, the key and what is
allowed.
"""

from __future__ import annotations

import os
import tomllib
from datetime import UTC, tzinfo
from pathlib import Path
from typing import Any, get_args
from zoneinfo import ZoneInfo

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from batchd.model.calendar import (
    CalendarError,
    PrimeCalendar,
    resolve_timezone,
)
from batchd.model.chunks import NodeShape
from batchd.model.holidays import load_holidays
from batchd.model.machine import Grid
from batchd.model.small_files import (
    MAX_CONFIG_BYTES,
    NOT_SHOWN,
    FileRefused,
    read_small_file,
)
from batchd.site.messages import toml_message, validation_message
from batchd.site.partitions import PartitionConfig
from batchd.site.resources import ResourceConfig, convert
from batchd.site.tables import (
    AuthConfig,
    ConnectionsConfig,
    ExecutionConfig,
    GridConfig,
    MachineConfig,
    MetricsConfig,
    QueueConfig,
    ServerConfig,
    Text,
)


class ConfigError(ValueError):
    """A configuration file that cannot be used, with file and key in the message."""


class SiteConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    description: Text = ""
    machine: list[MachineConfig] = Field(min_length=1)
    server: ServerConfig = Field(default_factory=ServerConfig)
    auth: AuthConfig = Field(default_factory=AuthConfig)
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    queue: list[QueueConfig] = Field(default_factory=list)
    # [[partition]]: Slurm's name and keys for queues (site/partitions.py), added to them.
    partition: list[PartitionConfig] = Field(default_factory=list)
    grid_table: GridConfig | None = Field(None, alias="grid")  # [grid]; grid() is the machines
    resource: list[ResourceConfig] = Field(default_factory=list)  # [[resource]]: custom ones
    execution: ExecutionConfig = Field(default_factory=ExecutionConfig)
    connections: ConnectionsConfig = Field(default_factory=ConnectionsConfig)

    @model_validator(mode="after")
    def _partitions(self) -> SiteConfig:
        """Each partition becomes the queue it means; ``Default = "YES"`` names the
        default queue (at most one, and not beside ``[server] default_queue``)."""
        defaults = [i for i, p in enumerate(self.partition) if p.Default == "YES"]
        if len(defaults) > 1:
            raise ValueError(
                f"partition[{defaults[1]}].Default: only one partition may be the default "
                f"(partition {self.partition[defaults[0]].PartitionName} is)"
            )
        if defaults and self.server.default_queue is not None:
            raise ValueError(
                f"partition[{defaults[0]}].Default: server.default_queue names the default "
                "queue already; keep one of the two"
            )
        added = [QueueConfig.model_validate(p.queue_table()) for p in self.partition]
        if added:
            self.queue = [*self.queue, *added]
        if defaults:
            self.server.default_queue = self.partition[defaults[0]].PartitionName
        return self

    def executes(self) -> bool:
        """Whether a machine of the site runs its jobs' scripts on this host."""
        return any(m.executes for m in self.machine)

    def resource_named(self, name: str) -> ResourceConfig | None:
        for r in self.resource:
            if r.name == name:
                return r
        return None

    def size_resources(self) -> frozenset[str]:
        """The custom resources of type size (shown with a unit)."""
        return frozenset(r.name for r in self.resource if r.type == "size")

    def node_shape(self, machine: int) -> NodeShape:
        """What each node of a machine has, for placing chunks."""
        m = self.machine[machine]
        amounts: dict[str, int] = {}
        values: dict[str, int | str | bool] = {}
        for name, value in m.resources.items():
            res = self.resource_named(name)
            if res is not None and res.consumable and isinstance(value, int):
                amounts[name] = value
            else:
                values[name] = value
        for res in self.resource:  # a consumable per-node resource a machine lacks: none
            if res.per == "node" and res.consumable and res.name not in m.resources:
                amounts[res.name] = 0
        return NodeShape(m.ncpus, m.mem_per_node, amounts, values)

    def identity(self) -> dict[str, Any]:
        """The server and machines a state file is saved for. A shared machine's engine
        counts cores: its layout is part of what the state means; so is a machine whose
        jobs run for real (its running jobs have processes an emulated one cannot end)."""
        return {
            "server": self.server_name,
            "machines": [
                [
                    m.name,
                    m.nodes,
                    m.node_prefix,
                    *(["shared", m.ncpus] if m.shared else []),
                    *(["local"] if m.executes else []),
                ]
                for m in self.machine
            ],
        }

    @property
    def server_name(self) -> str:
        return self.server.name or self.machine[0].name

    def queues(self) -> list[QueueConfig]:
        """The queues, ``workq`` (PBS's default) when the file names none."""
        return self.queue or [QueueConfig.model_validate({"name": "workq"})]

    @property
    def default_queue(self) -> str:
        return self.server.default_queue or self.queues()[0].name

    def queue_named(self, name: str) -> QueueConfig:
        for q in self.queues():
            if q.name == name:
                return q
        raise KeyError(name)

    def machine_index(self, name: str | None) -> int:
        """The index of machine ``name`` (None: the first machine)."""
        if name is None:
            return 0
        for i, m in enumerate(self.machine):
            if m.name == name:
                return i
        raise KeyError(name)

    def calendar(self, default_zone: tzinfo | None = None) -> PrimeCalendar:
        """The prime-time calendar: the holidays file, or the default weekday slots.

        Local time is ``[server] timezone``, else ``default_zone``, else the host's.
        """
        if self.server.timezone:
            tz = resolve_timezone(self.server.timezone)
        else:
            tz = default_zone or local_timezone()
        if self.server.calendar:
            return load_holidays(self.server.calendar, tz)
        return PrimeCalendar.default(tz)

    def grid(self, nodes: int | None = None) -> Grid:
        """The machines as a grid; ``nodes`` overrides the size of a single machine."""
        if nodes is not None and len(self.machine) != 1:
            raise ConfigError("--nodes only applies to a configuration with one machine")
        return Grid([m.engine_machine(nodes) for m in self.machine])


def local_timezone() -> tzinfo:
    """The host's time zone: $TZ, else /etc/localtime, else UTC."""
    name = os.environ.get("TZ", "").lstrip(":")
    if name:
        try:
            return resolve_timezone(name)
        except CalendarError:
            pass
    try:
        with open("/etc/localtime", "rb") as f:
            return ZoneInfo.from_file(f, key="localtime")
    except (OSError, ValueError):
        return UTC


class _Refused(Exception):
    """A site file that validated but cannot be used: its key, what is wrong (which may
    quote the file), and both said without quoting it (``plain_key``: a key that holds
    a name from the file, cut before it)."""

    def __init__(self, key: str, detail: str, plain: str, plain_key: str | None = None) -> None:
        super().__init__(key, detail, plain)
        self.key, self.detail, self.plain = key, detail, plain
        self.plain_key = key if plain_key is None else plain_key


def _field_names() -> frozenset[str]:
    """The keys the site file's tables define: a location made of these quotes nothing."""
    names: set[str] = set()
    models: list[type[BaseModel]] = [SiteConfig]
    while models:
        model = models.pop()
        for name, info in model.model_fields.items():
            names.update(n for n in (name, info.alias) if n is not None)
            models.extend(_models_in(info.annotation))
    return frozenset(names)


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The models a field's type holds (itself, in a list, or in an optional)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _models_in(arg)]


def _check_resources(site: SiteConfig) -> None:
    """Resource names unique; each machine's values of declared per-node ones, typed."""
    seen: set[str] = set()
    for i, defined in enumerate(site.resource):
        if defined.name in seen:
            raise _Refused(
                f"resource[{i}].name", f"{defined.name!r} is defined twice", "defined twice"
            )
        seen.add(defined.name)
    for i, m in enumerate(site.machine):
        for name, value in m.resources.items():
            key = f"machine[{i}].resources.{name}"
            res = site.resource_named(name)
            if res is None or res.per != "node":
                declared = [r.name for r in site.resource if r.per == "node"]
                raise _Refused(
                    key,
                    "not a per-node [[resource]] of this site (declared: "
                    f"{', '.join(declared) or 'none'})",
                    "a value of a resource that is not a per-node [[resource]] of this site",
                    f"machine[{i}].resources",
                )
            try:
                m.resources[name] = convert(res, value)
            except ValueError as exc:
                raise _Refused(
                    key,
                    str(exc),
                    "a value its [[resource]]'s type does not take",
                    f"machine[{i}].resources",
                ) from None


def _read(path: Path) -> tuple[str, bool]:
    """The file's text and whether messages may quote it; ConfigError if it is refused."""
    try:
        file = read_small_file(path)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except FileRefused as exc:
        raise ConfigError(
            f"{path}: {exc}, not a configuration file (a regular file of at most "
            f"{MAX_CONFIG_BYTES >> 20} MiB)"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the configuration file ({exc.strerror})") from None
    try:
        return file.data.decode("utf-8"), file.quotable
    except UnicodeDecodeError as exc:
        line = file.data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{path}: not UTF-8 text (line {line})") from None


def load_site(path: str | Path) -> SiteConfig:
    """The site file at ``path``, checked; ConfigError names the file and the key.

    The file must be a regular file of at most MAX_CONFIG_BYTES (1 MiB); its content
    is quoted in a message only if ``may_quote`` allows it.
    """
    path = Path(path)
    text, quotable = _read(path)
    hidden = "" if quotable else NOT_SHOWN
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid TOML: {toml_message(exc, quotable)}{hidden}"
        ) from None
    except RecursionError:
        raise ConfigError(f"{path}: not read: arrays or inline tables nested too deeply") from None
    try:
        site = SiteConfig.model_validate(raw, strict=True)  # every table, as TOML types it
    except ValidationError as exc:
        message = validation_message(exc, quotable, _field_names())
        raise ConfigError(f"{path}: {message}{hidden}") from None
    try:
        _check_site(path, site)
    except _Refused as exc:
        if quotable:
            raise ConfigError(f"{path}: {exc.key}: {exc.detail}") from None
        raise ConfigError(f"{path}: {exc.plain_key}: {exc.plain}{hidden}") from None
    return site


def _check_site(path: Path, site: SiteConfig) -> None:
    """What the models alone cannot check: names unique, references resolved."""
    names = [m.name for m in site.machine]
    _check_unique("machine", names)
    _check_resources(site)
    if len(site.machine) > 1:
        seen: dict[str, str] = {}
        for i, m in enumerate(site.machine):
            for node in m.node_names():
                other = seen.setdefault(node, m.name)
                if other != m.name:
                    raise _Refused(
                        f"machine[{i}].node_prefix",
                        f"node {node} of machine {m.name} has the name of a node of machine "
                        f"{other}: give each machine its own node_prefix",
                        "a node has the name of another machine's node: give each machine "
                        "its own node_prefix",
                    )
    for i, q in enumerate(site.queues()):
        if q.machine is not None and q.machine not in names:
            raise _Refused(
                f"queue[{i}].machine",
                f"{q.machine!r} is not a machine (machines: {', '.join(names)})",
                "not a machine of this file",
            )
    queues = [q.name for q in site.queues()]
    _check_unique("queue", queues)
    if site.server.default_queue is not None and site.server.default_queue not in queues:
        raise _Refused(
            "server.default_queue",
            f"{site.server.default_queue!r} is not a queue (queues: {', '.join(queues)})",
            "not a queue of this file",
        )
    if site.server.calendar and not Path(site.server.calendar).is_absolute():
        site.server.calendar = str(path.resolve().parent / site.server.calendar)
    try:
        site.calendar()
    except CalendarError as exc:
        if site.server.calendar:
            raise _Refused("server.calendar", str(exc), "not a usable holidays file") from None
        raise _Refused("server.timezone", str(exc), "not a known time zone") from None
    if site.grid_table is not None:
        _check_grid(site, names)
    if site.server.policy_params:
        from batchd.sched.registry import PolicyError, get_spec, parse_params

        try:
            parse_params(get_spec(site.server.policy), site.server.params())
        except PolicyError as exc:
            raise _Refused(
                "server.policy_params", str(exc), "not parameters the policy takes"
            ) from None


def _check_unique(table: str, names: list[str]) -> None:
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            raise _Refused(
                f"{table}[{i}].name", f"{name!r} is the name of an earlier {table}", "used twice"
            )
        seen.add(name)


def _check_grid(site: SiteConfig, names: list[str]) -> None:
    from batchd.sched.grid import GridError, parse_grid_params

    assert site.grid_table is not None
    for i, m in enumerate(site.machine):
        if m.executes:
            raise _Refused(
                f"machine[{i}].executor",
                f"machine {m.name} runs its jobs' scripts "
                '("local"); the machines of a grid ([grid]) run emulated jobs only',
                'the machines of a grid ([grid]) run emulated jobs only, not "local"',
            )
        if m.shared:
            raise _Refused(
                f"machine[{i}].shared",
                f"machine {m.name} shares its nodes; the machines of a grid ([grid]) give "
                "whole nodes, as jobs move between them by their number of nodes",
                "the machines of a grid ([grid]) give whole nodes",
            )
    from batchd.sched.registry import policy_names

    try:
        parse_grid_params(site.grid_table.structure, site.grid_table.raw(), names, policy_names())
    except GridError as exc:
        key = "grid.structure" if "structure" in str(exc) else "grid.params"
        raise _Refused(key, str(exc), "not what the grid structure takes") from None
