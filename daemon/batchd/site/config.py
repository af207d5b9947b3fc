"""Machine and site configuration: TOML files under conf/, validated by pydantic.

A machine file holds one or more ``[[machine]]`` tables; several make a grid,
and each queue names the machine its jobs run on (the first by default).
Every error names the file, the key and what is allowed.
"""

from __future__ import annotations

import os
import tomllib
from datetime import UTC, tzinfo
from pathlib import Path
from typing import Annotated, Any, Literal, get_args
from zoneinfo import ZoneInfo

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from batchd.model.calendar import (
    CalendarError,
    PrimeCalendar,
    resolve_timezone,
)
from batchd.model.chunks import NodeShape
from batchd.model.holidays import load_holidays
from batchd.model.machine import Grid, Machine
from batchd.model.sizes import SizeError, parse_size
from batchd.model.small_files import (
    MAX_CONFIG_BYTES,
    NOT_SHOWN,
    FileRefused,
    read_small_file,
)
from batchd.model.spans import WindowError, describe, parse_window
from batchd.model.text import check_text
from batchd.model.times import positive_duration
from batchd.sched.policies.queues import QueueSpec
from batchd.site.messages import toml_message, validation_message
from batchd.site.partitions import PartitionConfig
from batchd.site.resources import ResourceConfig, convert

NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
MAX_SHARED_CORES = 1_000_000  # the engine keeps one unit per core of a shared machine


def _text(value: Any) -> Any:
    return check_text(value) if isinstance(value, str) else value


# Free text that qstat, qmgr or the logs show: no control characters.
Text = Annotated[str, BeforeValidator(_text)]


class ConfigError(ValueError):
    """A configuration file that cannot be used, with file and key in the message."""


HOST = "host"  # cores_per_node, mem_per_node: what this host has


def host_cores() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0))


def host_memory() -> int:
    """This host's memory in bytes (MemTotal), rounded down to a megabyte."""
    with open("/proc/meminfo", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024 * (1 << 20)
    raise ValueError("/proc/meminfo has no MemTotal")


class MachineConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(pattern=NAME, max_length=64)
    nodes: int = Field(gt=0, le=1_000_000)
    description: Text = ""
    node_prefix: str = Field("node", pattern=r"^[A-Za-z][A-Za-z0-9_-]*$", max_length=32)
    # Cores of each node; "host": this host's CPUs.
    cores_per_node: int | None = Field(None, gt=0, le=100_000)
    # Memory of each node in bytes (a PBS size in the file: "512mb"; "host": this host's
    # memory); None: not limited.
    mem_per_node: int | None = Field(None, gt=0)
    # Nodes that several jobs share: the scheduler counts cores (batchd.model.cores),
    # and a job's chunks go where they fit by default (place=free) instead of one chunk
    # per node of its own (scatter).
    shared: bool = Field(False, strict=True)
    # The values of the site's per-node [[resource]]s on every node of this machine.
    resources: dict[str, int | str | bool] = Field(default_factory=dict)
    # How its jobs run: "emulate" (a job lasts its BATCHD_RUNTIME or walltime and no process
    # runs) or "local" (a job's script runs on this host, as its owner: docs/execution.md).
    executor: Literal["emulate", "local"] = "emulate"

    @field_validator("cores_per_node", mode="before")
    @classmethod
    def _cores(cls, value: Any) -> Any:
        return host_cores() if value == HOST else value

    @field_validator("mem_per_node", mode="before")
    @classmethod
    def _mem(cls, value: Any) -> Any:
        if value == HOST:
            return host_memory()
        if isinstance(value, str):
            try:
                return parse_size(value)
            except SizeError as exc:
                raise ValueError(str(exc)) from None
        return value

    @model_validator(mode="after")
    def _shared_size(self) -> MachineConfig:
        if self.shared and self.nodes * self.ncpus > MAX_SHARED_CORES:
            raise ValueError(
                f"shared: {self.nodes} nodes of {self.ncpus} cores make "
                f"{self.nodes * self.ncpus:,} cores; a machine whose nodes are shared "
                f"has at most {MAX_SHARED_CORES:,}"
            )
        return self

    @property
    def executes(self) -> bool:
        """Whether its jobs' scripts run on this host."""
        return self.executor == "local"

    @property
    def ncpus(self) -> int:
        """Cores of each node: cores_per_node, 1 when unset."""
        return self.cores_per_node or 1

    @property
    def slots_per_node(self) -> int:
        """The scheduler's units on each node: its cores when shared, else the node."""
        return self.ncpus if self.shared else 1

    @property
    def slots(self) -> int:
        """The scheduler's units on the machine: nodes, or cores when nodes are shared."""
        return self.nodes * self.slots_per_node

    def engine_machine(self, nodes: int | None = None) -> Machine:
        """The engine's model of this machine (``nodes``: another number of nodes)."""
        count = self.nodes if nodes is None else nodes
        per = self.slots_per_node
        return Machine(self.name, count * per, self.description, per)

    def node_names(self) -> list[str]:
        digits = max(3, len(str(self.nodes)))
        return [f"{self.node_prefix}{i + 1:0{digits}d}" for i in range(self.nodes)]


def _duration(value: Any, what: str) -> Any:
    if isinstance(value, bool):  # an int to Python, not a duration to anyone
        raise ValueError(f"{what} must be seconds or HH:MM:SS")
    try:
        return positive_duration(value, what)
    except ValueError as exc:
        raise ValueError(f"{exc} (seconds or HH:MM:SS)") from None


class QueueConfig(BaseModel):
    """An execution queue: limits on the jobs it takes and the walltime it gives by default."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(pattern=NAME, max_length=15)
    max_nodes: int | None = Field(None, gt=0)
    max_walltime: int | None = None
    default_walltime: int = 3600
    enabled: bool = True
    started: bool = True
    # "any", "prime", "nonprime", or weekly spans such as ["Mon-Fri 07:00-19:30"]
    # (batchd.model.windows); kept in canonical form.
    window: str | list[str] = "any"
    machine: str | None = Field(None, pattern=NAME, max_length=64)  # None: the first machine
    # PBS's run and queued limits (None: none): jobs running at once in the queue, and of
    # one user in it; unfinished jobs the queue holds, and of one user in it.
    max_run: int | None = Field(None, ge=0)
    max_user_run: int | None = Field(None, ge=0)
    max_queued: int | None = Field(None, ge=0)
    max_user_queued: int | None = Field(None, ge=0)

    @field_validator("max_walltime", "default_walltime", mode="before")
    @classmethod
    def _walltimes(cls, value: Any) -> Any:
        return _duration(value, "walltime")

    @field_validator("window", mode="before")
    @classmethod
    def _window(cls, value: Any) -> Any:
        try:
            return parse_window(value)
        except WindowError as exc:
            raise ValueError(str(exc)) from None

    @property
    def windowed(self) -> bool:
        """Whether the queue has a window (anything but "any")."""
        return self.window != "any"

    def window_text(self) -> str:
        """The window as qstat -Q shows it."""
        return describe(self.window)

    def spec(self) -> QueueSpec:
        """What the scheduler's gate needs of this queue."""
        return QueueSpec(self.name, self.window, self.started)

    @model_validator(mode="after")
    def _default_within_max(self) -> QueueConfig:
        if self.max_walltime is not None and self.default_walltime > self.max_walltime:
            self.default_walltime = self.max_walltime
        return self


class ServerConfig(BaseModel):
    """The daemon: its name in job ids, the policy it starts with, what a node failure does."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str | None = Field(None, pattern=NAME, max_length=64)
    policy: str = "fcfs-easy"
    policy_params: dict[Text, str | int | float | bool] = Field(default_factory=dict)
    default_queue: str | None = None
    node_fail: Literal["requeue", "kill"] = "requeue"
    # What a job of a windowed queue still running when its window closes gets: killed
    # (outcome "overflow", the paper's assumption) or put back in its queue.
    overflow: Literal["kill", "requeue"] = "kill"
    # A job of a windowed queue starts only if its walltime ends before the window closes.
    window_must_fit: bool = True
    max_body: int = Field(1 << 20, ge=1024, le=1 << 30)
    calendar: str | None = None  # a PBS holidays file; relative to the config file
    timezone: str | None = None  # IANA name; the host's local time zone when unset
    # How long finished jobs stay in the history (qstat -x), on the emulated clock;
    # PBS's default is two weeks.
    job_history_duration: int = 14 * 86_400
    # Whether users see other users' jobs (PBS's server attribute; off, its default: a
    # user sees only their own; operators and managers see all either way).
    query_other_jobs: bool = False
    # The most subjobs a job array may have (qsub -J); PBS's server attribute and default.
    max_array_size: int = Field(10_000, ge=1, le=1 << 20)  # PBS's PBS_MAX_ARRAY_JOB_DFL
    # Seconds between SIGTERM and SIGKILL when a running job is stopped (qdel, its walltime);
    # PBS's queue attribute kill_delay, whose default is 10.
    kill_delay: int = Field(10, ge=0, le=86_400)
    # The same for jobs from sbatch: Slurm's KillWait, whose default is 30.
    kill_wait: int = Field(30, ge=0, le=86_400)
    # Users whose uid is 0 and whose jobs may run on an executing machine (PBS's acl_roots);
    # root's jobs are refused otherwise.
    acl_roots: list[Text] = Field(default_factory=list)
    # PBS's server attribute scheduling: False starts no job (running ones go on).
    scheduling: bool = True
    # PBS's server limits (None: none), counted over every queue and machine.
    max_run: int | None = Field(None, ge=0)
    max_user_run: int | None = Field(None, ge=0)
    max_queued: int | None = Field(None, ge=0)
    max_user_queued: int | None = Field(None, ge=0)

    @field_validator("job_history_duration", mode="before")
    @classmethod
    def _history(cls, value: Any) -> Any:
        return _duration(value, "job_history_duration")

    @field_validator("policy_params")
    @classmethod
    def _printable_params(
        cls, value: dict[str, str | int | float | bool]
    ) -> dict[str, str | int | float | bool]:
        for key, param in value.items():
            if isinstance(param, str):
                try:
                    check_text(param)
                except ValueError as exc:
                    raise ValueError(f"{key}: {exc}") from None
        return value

    @field_validator("policy")
    @classmethod
    def _known_policy(cls, value: str) -> str:
        from batchd.sched.registry import PolicyError, get_spec

        try:
            get_spec(value)
        except PolicyError as exc:
            raise ValueError(str(exc)) from None
        return value

    def params(self) -> dict[str, str]:
        return {
            k: str(v).lower() if isinstance(v, bool) else str(v)
            for k, v in self.policy_params.items()
        }


class MetricsConfig(BaseModel):
    """What /metrics exports beyond the fixed set, and how the live figures are kept."""

    model_config = ConfigDict(extra="forbid", strict=True)

    per_user: bool = False
    max_users: int = Field(100, gt=0, le=10_000)
    utilization_window: int = 3600
    plan_interval: float = Field(5.0, gt=0, le=3600)

    @field_validator("utilization_window", mode="before")
    @classmethod
    def _window(cls, value: Any) -> Any:
        return _duration(value, "utilization_window")


class ExecutionConfig(BaseModel):
    """How jobs run on a machine whose executor is "local" (docs/execution.md)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    # The supervisors' private directory (0700); default: beside the state file, STATE.spool.
    spool: str | None = None
    # Where each job's private TMPDIR (and its PBS_NODEFILE) is made, by the job's owner;
    # PBS's default $tmpdir.
    tmpdir: str = "/var/tmp"
    # One cgroup v2 per job: where they have the memory controller ("auto"), wherever the
    # daemon can make them ("on"), or never ("off").
    cgroups: Literal["auto", "on", "off"] = "auto"
    # The jobs' cgroups' parent (in the cgroup2 file system); default batchd-SERVER at its root.
    cgroup_parent: str | None = None
    # Kill a job over its mem by measuring its processes, where no cgroup limits it
    # (OpenPBS's $enforce mem).
    enforce_mem: bool = True
    # The PATH a job's environment starts with, before its own variables (pbs_environment).
    path: str = "/usr/local/bin:/usr/bin:/bin"

    @field_validator("spool", "tmpdir", "cgroup_parent")
    @classmethod
    def _absolute(cls, value: str | None) -> str | None:
        if value is not None and not os.path.isabs(value):
            raise ValueError(f"{value!r}: give an absolute path")
        if value is not None:
            check_text(value)
        return value


class ConnectionsConfig(BaseModel):
    """What one caller may hold of the daemon's listeners (docs/operations.md, "Limits")."""

    model_config = ConfigDict(extra="forbid")

    # Seconds a new connection has to send a complete request head; then it is closed.
    header_timeout: float = Field(5.0, gt=0, le=300)
    # Seconds a keep-alive connection may stay idle between requests.
    idle_timeout: float = Field(30.0, gt=0, le=3600)
    # Connections open at once for all callers; None: as many as the descriptor budget
    # allows, at most DEFAULT_MAX_OPEN (batchd.server.connlimit).
    max_open: int | None = Field(None, ge=1, le=1_000_000)
    # Connections open at once for one Unix user (uid) or one TCP address.
    max_per_peer: int = Field(32, ge=1, le=1_000_000)
    # Connections beyond max_open that only managers (root, the daemon's user, [auth]
    # managers) on the Unix socket may open: their room during a flood.
    managers_room: int = Field(16, ge=1, le=10_000)


class AuthConfig(BaseModel):
    """Roles: users act on their own jobs; operators on any job and on nodes; managers on all."""

    model_config = ConfigDict(extra="forbid", strict=True)

    managers: list[Text] = Field(default_factory=list)
    operators: list[Text] = Field(default_factory=list)


class GridConfig(BaseModel):
    """A grid structure over the machines (docs/grid.md); ``batchd replay`` runs it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    structure: str
    params: dict[Text, str | int | float | bool] = Field(default_factory=dict)

    def raw(self) -> dict[str, str]:
        return {
            k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in self.params.items()
        }


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
