"""What a supervisor is told to run (``LaunchSpec``) and what it reports at the end
(``EndReport``): plain data, carried as JSON between the daemon, the launcher and the
supervisor, and kept in the spool."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class LaunchSpec:
    """One job's process, everything decided by the daemon before it is launched.

    ``argv`` and ``env`` are the shell's (``argv[0]`` begins with ``-`` for a login
    shell); ``script`` is handed to the shell on descriptor ``SCRIPT_FD`` as
    ``/dev/fd/N``. ``stdout`` and ``stderr`` are absolute paths opened as the owner
    (None: joined into the other stream). ``cpus`` are the host CPUs it may run on;
    ``mem`` its memory limit in bytes (None: none). Its TMPDIR and node file (``env``'s
    TMPDIR and PBS_NODEFILE) are made by its own process, as its owner.
    """

    job_id: str
    key: str  # the job's name in the spool
    user: str
    uid: int
    gid: int
    groups: list[int]
    home: str
    shell: str
    argv: list[str]
    env: dict[str, str]
    script: str
    stdout: str | None
    stderr: str | None
    cpus: list[int]
    walltime: int
    kill_delay: int
    mem: int | None
    nodes: list[str] = field(default_factory=list)  # the node file's lines
    # The default file names (NAME.oSEQ, NAME.eSEQ): used in ``stdout`` or ``stderr`` when
    # that names a directory, as PBS puts a job's file in a directory given with -o or -e.
    stdout_name: str = ""
    stderr_name: str = ""
    cgroup: str | None = None  # the job's cgroup (made by the supervisor), or none
    enforce_mem: bool = True  # kill over ``mem`` by polling when no cgroup limits it
    # Slurm's --signal=[B:]SIG@SECONDS: SIG SECONDS before the walltime, to the job's
    # processes but its script (its steps), or with B: to the script alone.
    warn_signal: int = 0
    warn_before: int = 0
    warn_script: bool = False
    append_output: bool = False  # Slurm's --open-mode=append: output files not truncated
    # Where the job's process starts: its working directory (a job from sbatch), else
    # "" for the home directory (PBS's rule).
    workdir: str = ""
    # The words it is told in: "pbs" (MoM's ``=>> PBS:`` lines) or "slurm" (slurmstepd's).
    front_end: str = "pbs"

    def to_dict(self) -> dict[str, Any]:
        """Its fields (dataclasses.asdict deep-copies every value: too slow per launch)."""
        return {name: getattr(self, name) for name in self.__slots__}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> LaunchSpec:
        return cls(**json.loads(text))


# How a job's processes ended (EndReport.reason).
EXITED = "exit"  # its script ended on its own (status: its exit code, or 256 + signal)
WALLTIME = "walltime"  # killed over its walltime
MEM = "mem"  # killed over its memory limit
STOPPED = "stopped"  # stopped at the daemon's request (qdel, qrerun, a window closed...)
FAILED = "failed"  # could not be started (status: a JOB_EXEC_* code, message: why)
REASONS = (EXITED, WALLTIME, MEM, STOPPED, FAILED)


@dataclass(slots=True)
class EndReport:
    """The end of a job's processes, as its supervisor saw it. Times are wall-clock
    seconds since the epoch; ``cput`` CPU seconds of all its processes; ``mem`` and
    ``vmem`` the most bytes they held at once (resident, virtual)."""

    status: int
    reason: str
    start: float
    end: float
    cput: float = 0.0
    mem: int = 0
    vmem: int = 0
    message: str = ""
    signal: int = 0  # the signal that killed the top process; 0 if it exited

    def to_json(self) -> str:
        fields = {name: getattr(self, name) for name in self.__slots__}
        return json.dumps(fields, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> EndReport:
        data: dict[str, Any] = json.loads(text)
        report = cls(**data)
        if report.reason not in REASONS:
            raise ValueError(f"unknown end reason {report.reason!r}")
        return report
