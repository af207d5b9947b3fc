"""The tables of a site file, one model each: [[machine]], [[queue]], [server],
[metrics], [execution], [connections], [auth] and [grid]. ``batchd.site.config``
puts them together into a site and reads the file; every error names the key and
what is allowed."""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from batchd.model.machine import Machine
from batchd.model.sizes import SizeError, parse_size
from batchd.model.spans import WindowError, describe, parse_window
from batchd.model.text import check_text
from batchd.model.times import positive_duration
from batchd.sched.policies.queues import QueueSpec

NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
MAX_SHARED_CORES = 1_000_000  # the engine keeps one unit per core of a shared machine


def _text(value: Any) -> Any:
    return check_text(value) if isinstance(value, str) else value


# Free text that qstat, qmgr or the logs show: no control characters.
Text = Annotated[str, BeforeValidator(_text)]


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
