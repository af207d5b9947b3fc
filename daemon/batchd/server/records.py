"""What the daemon keeps about a job beyond what the scheduler needs: the PBS attributes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from batchd.model.job import UNSET, Job, JobResult
from batchd.model.moldable import Moldable, Speedup
from batchd.model.reservation import Reservation, ResvState
from batchd.model.states import JobState
from batchd.model.utility import Utility
from batchd.server.arrays import ArraySpec, label, split_key
from batchd.server.jobresources import JobResources, shape_job, shared

DEPEND_TYPES = ("afterok", "afternotok", "afterany", "after", "singleton")
# singleton names no job: it stands for every earlier unfinished job of the same owner
# and name, found at submission (Dependencies.parse); this is its place-holder.
SINGLETON = ("singleton", 0)
HOLD_ORDER = "uos"

# At most 18 digits: every job number fits the state database's 64-bit integers.
SEQ_DIGITS = 18
_ID = re.compile(r"^([0-9]+)(?:\.([A-Za-z0-9_.-]+))?$")


def parse_job_id(text: str, server: str) -> int:
    """``12`` or ``12.server`` -> 12; another server's id is refused."""
    m = _ID.match(text.strip())
    if not m:
        raise ValueError(f"{text!r} is not a job id (SEQ or SEQ.{server})")
    if len(m.group(1)) > SEQ_DIGITS:
        raise ValueError(f"{text!r} is not a job id: at most {SEQ_DIGITS} digits")
    if m.group(2) is not None and m.group(2) != server:
        raise ValueError(f"job id {text!r} belongs to server {m.group(2)!r}, not {server!r}")
    return int(m.group(1))


def parse_depend(text: str, server: str) -> list[tuple[str, int]]:
    """``afterok:12:13,afterany:14.srv`` -> [("afterok", 12), ("afterok", 13), ("afterany", 14)];
    ``singleton`` -> [SINGLETON]."""
    out: list[tuple[str, int]] = []
    for part in text.split(","):
        kind, colon, ids = part.strip().partition(":")
        if kind not in DEPEND_TYPES:
            raise ValueError(f"depend: unknown type {kind!r}; use one of {', '.join(DEPEND_TYPES)}")
        if kind == "singleton":
            if colon:
                raise ValueError("depend: singleton takes no job id (write singleton alone)")
            if SINGLETON not in out:
                out.append(SINGLETON)
            continue
        if not ids:
            raise ValueError(f"depend: {kind} needs at least one job id ({kind}:ID[:ID...])")
        for item in ids.split(":"):
            try:
                out.append((kind, parse_job_id(item, server)))
            except ValueError as exc:
                raise ValueError(f"depend: {exc}") from None
    return out


def merge_holds(have: str, add: str) -> str:
    return "".join(h for h in HOLD_ORDER if h in have or h in add)


def drop_holds(have: str, drop: str) -> str:
    return "".join(h for h in have if h not in drop)


@dataclass(slots=True, eq=False)
class JobRecord:
    """A live job: the scheduler's ``Job`` and the attributes users see in ``qstat -f``."""

    job: Job
    owner: str
    ctime: int
    qtime: int
    etime: int | None = None
    exec_time: int | None = None
    hold_types: str = ""
    depend: list[tuple[str, int]] = field(default_factory=list)
    depend_text: str | None = None
    variables: dict[str, str] = field(default_factory=dict)
    script: str = ""
    runtime_given: int | None = None
    comment: str | None = None
    exit_status: int | None = None
    assigned: int | None = None  # grid: the machine a waiting job was given (saved for restore)
    # Multi-site (grid): the parts the engine runs, one Job each (same id, its machine,
    # width and nodes), in the order they started; empty for a job on one machine. The
    # record's own job then holds the whole job: all its nodes, the start, the stretched
    # runtime and walltime; ``original`` the (runtime, walltime) it was submitted with.
    parts: list[Job] = field(default_factory=list)
    original: tuple[int, int] | None = None
    # The PBS resources admitted (chunks on nodes); None: one CPU on each of its nodes
    # (a moldable job, a trace job, a job saved before resources).
    resources: JobResources | None = None
    rerunable: bool = True  # qsub -r y|n: whether qrerun (and a node failure) may requeue it
    # A job array (qsub -J): its range and its subjobs' letters. Its ``job`` is what each
    # subjob is made from; it never reaches the engine.
    array: ArraySpec | None = None
    subjob_index: int | None = None  # a subjob: its index (its key says its array's seq)
    # Where a job that runs for real writes (Output_Path, Error_Path: HOST:PATH), whether
    # its streams are joined (Join_Path: oe, eo or n), the shell asked for (qsub -S), and
    # once it ended what its processes used (resources_used: walltime, cput, mem, vmem).
    output_path: str | None = None
    error_path: str | None = None
    join: str = "n"
    shell: str | None = None
    used: dict[str, float] | None = None
    euser: str | None = None  # the account it runs as, and its group, once started
    egroup: str | None = None
    # A running job being stopped to go back to its queue: the reason and the words the
    # requeue is told with once its processes have ended.
    requeue_why: tuple[str, str] | None = None
    # The front end it came from ("pbs" or "slurm": a slurm job runs in ``workdir`` with
    # SLURM_* variables), Account_Name, and sbatch's request as submitted (JobSubmit.slurm).
    front_end: str = "pbs"
    workdir: str | None = None
    account: str | None = None
    mail_points: str | None = None  # qsub -m and -M: kept and shown, no mail is sent
    mail_users: str | None = None
    slurm: dict[str, Any] | None = None
    term_signal: int | None = None  # the signal that ended its top process, once ended

    def __post_init__(self) -> None:
        shape_job(self.job, self.resources)

    @property
    def seq(self) -> int:
        """The job's key: its sequence number, or a subjob's key (``arrays.subjob_key``)."""
        return self.job.id

    @property
    def pbs_seq(self) -> int:
        """The sequence number of its id (a subjob's is its array's)."""
        return split_key(self.seq)[0] if self.subjob_index is not None else self.seq

    def label(self) -> str:
        """``12``, ``12[]`` or ``12[3]``."""
        return label(self.seq, self.array is not None)

    @property
    def state(self) -> JobState:
        return self.job.state

    def to_row(self) -> dict[str, Any]:
        j = self.job
        return {
            "seq": j.id,
            "name": j.name,
            "owner": self.owner,
            "queue": j.queue,
            "machine": j.machine,
            "state": j.state.value,
            "nodes": j.width,
            "walltime": j.estimate,
            "runtime": j.runtime,
            "runtime_given": self.runtime_given,
            "priority": j.priority,
            "submit": j.submit,
            "start": j.start,
            "end": j.end,
            "node_ids": j.units,
            "killed": j.result.killed,
            "outcome": j.result.outcome,
            "submit_plan": j.result.submit_plan,
            "started_by": j.result.started_by,
            "ctime": self.ctime,
            "qtime": self.qtime,
            "etime": self.etime,
            "exec_time": self.exec_time,
            "hold_types": self.hold_types,
            "depend": [list(d) for d in self.depend],
            "depend_text": self.depend_text,
            "variables": self.variables,
            "script": self.script,
            "comment": self.comment,
            "exit_status": self.exit_status,
            "grid_machine": self.assigned,
            **({} if self.rerunable else {"rerunable": False}),
            **(self._parts_row() if self.parts else {}),
            **({"utility": [list(p) for p in j.utility.points]} if j.utility else {}),
            **({"priority_class": j.priority_class} if j.priority_class else {}),
            **({"mold": mold_row(j.mold)} if j.mold is not None else {}),
            **({"resources": self.resources.to_row()} if self.resources is not None else {}),
            **({"array": self.array.to_row()} if self.array is not None else {}),
            **({"array_index": self.subjob_index} if self.subjob_index is not None else {}),
            **(self._run_row() if j.external else {}),
            **self._front_row(),
        }

    def _front_row(self) -> dict[str, Any]:
        """What a job from sbatch, or with an account or mail options, has beyond others
        (only then)."""
        row: dict[str, Any] = {}
        if self.front_end != "pbs":
            row["front_end"] = self.front_end
        for key in ("workdir", "account", "mail_points", "mail_users", "slurm", "term_signal"):
            value = getattr(self, key)
            if value is not None:
                row[key] = value
        return row

    def _run_row(self) -> dict[str, Any]:
        """What a job that runs for real has beyond an emulated one (only then)."""
        j = self.job
        return {
            "external": True,
            "stopping": j.result.stopping,
            "output_path": self.output_path,
            "error_path": self.error_path,
            "join": self.join,
            "shell": self.shell,
            "used": self.used,
            "euser": self.euser,
            "egroup": self.egroup,
            "requeue_why": list(self.requeue_why) if self.requeue_why else None,
        }

    def _parts_row(self) -> dict[str, Any]:
        """A multi-site job's parts (only then: other rows are as before)."""
        return {
            "parts": [
                {"machine": p.machine, "nodes": p.width, "node_ids": p.units, "end": p.end}
                for p in self.parts
            ],
            "original": list(self.original) if self.original is not None else None,
        }

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> JobRecord:
        job = Job(
            id=row["seq"],
            submit=row["submit"],
            width=row["nodes"],
            estimate=row["walltime"],
            runtime=row["runtime"],
            user=row["owner"],
            queue=row["queue"],
            name=row["name"],
            machine=row["machine"],
            priority=row["priority"],
            state=JobState(row["state"]),
            start=row.get("start", UNSET),
            end=row.get("end", UNSET),
            units=list(row["node_ids"]),
            result=JobResult(
                killed=row["killed"],
                outcome=row["outcome"],
                submit_plan=row["submit_plan"],
                started_by=row["started_by"],
                stopping=str(row.get("stopping", "")),
            ),
            utility=Utility((t, v) for t, v in row["utility"]) if row.get("utility") else None,
            priority_class=row.get("priority_class", 0),
            mold=mold_from_row(row["mold"]) if row.get("mold") else None,
            external=bool(row.get("external", False)),
        )
        parts = [
            Job(
                id=job.id,
                submit=job.submit,
                width=p["nodes"],
                estimate=job.estimate,
                runtime=job.runtime,
                user=job.user,
                queue=job.queue,
                name=job.name,
                machine=p["machine"],
                priority=job.priority,
                state=JobState.FINISHED if p.get("end", UNSET) >= 0 else job.state,
                start=job.start,
                end=p.get("end", UNSET),
                units=list(p["node_ids"]),
                result=JobResult(
                    killed=job.result.killed,
                    outcome=job.result.outcome,
                    started_by=job.result.started_by,
                ),
            )
            for p in row.get("parts", ())
        ]
        original = row.get("original")
        return cls(
            parts=parts,
            original=(int(original[0]), int(original[1])) if original else None,
            job=job,
            owner=row["owner"],
            ctime=row["ctime"],
            qtime=row["qtime"],
            etime=row["etime"],
            exec_time=row["exec_time"],
            hold_types=row["hold_types"],
            depend=[(k, int(i)) for k, i in row["depend"]],
            depend_text=row["depend_text"],
            variables=dict(row["variables"]),
            script=row["script"],
            runtime_given=row["runtime_given"],
            comment=row["comment"],
            exit_status=row["exit_status"],
            assigned=row.get("grid_machine"),  # rows saved before grids have none
            resources=shared(JobResources.from_row(row["resources"]))
            if row.get("resources")
            else None,
            rerunable=bool(row.get("rerunable", True)),
            array=ArraySpec.from_row(row["array"]) if row.get("array") else None,
            subjob_index=row.get("array_index"),
            output_path=row.get("output_path"),
            error_path=row.get("error_path"),
            join=str(row.get("join", "n")),
            shell=row.get("shell"),
            used=row.get("used"),
            euser=row.get("euser"),
            egroup=row.get("egroup"),
            requeue_why=_pair(row.get("requeue_why")),
            front_end=str(row.get("front_end", "pbs")),
            workdir=row.get("workdir"),
            account=row.get("account"),
            mail_points=row.get("mail_points"),
            mail_users=row.get("mail_users"),
            slurm=dict(row["slurm"]) if row.get("slurm") else None,
            term_signal=row.get("term_signal"),
        )


def _pair(value: Any) -> tuple[str, str] | None:
    return (str(value[0]), str(value[1])) if value else None


def mold_row(mold: Moldable) -> dict[str, Any]:
    """A moldable job's range, model and what it was submitted with (on its requested
    width): the row's nodes, walltime and runtime are those of the width it runs on."""
    return {
        "low": mold.low,
        "high": mold.high,
        # The model's numbers as floats: JSON reads them back exactly.
        "speedup": [mold.speedup.kind, mold.speedup.a, mold.speedup.sigma],
        "width": mold.width,
        "runtime": mold.runtime,
        "estimate": mold.estimate,
    }


def mold_from_row(row: dict[str, Any]) -> Moldable:
    kind, a, sigma = row["speedup"]
    return Moldable(
        low=int(row["low"]),
        high=int(row["high"]),
        speedup=Speedup(str(kind), float(a), float(sigma)),
        width=int(row["width"]),
        runtime=int(row["runtime"]),
        estimate=int(row["estimate"]),
    )


def resv_to_row(resv: Reservation) -> dict[str, Any]:
    return {
        "seq": resv.id,
        "machine": resv.machine,
        "start": resv.start,
        "end": resv.end,
        "nodes": resv.width,
        "owner": resv.owner,
        "name": resv.name,
        "state": resv.state.value,
        "node_ids": resv.units,
        "queue": resv.queue,
        "select": resv.select,
    }


def resv_from_row(row: dict[str, Any]) -> Reservation:
    return Reservation(
        id=row["seq"],
        start=row["start"],
        end=row["end"],
        width=row["nodes"],
        machine=int(row.get("machine", 0)),
        owner=row["owner"],
        name=row["name"],
        state=ResvState(row["state"]),
        units=list(row["node_ids"]),
        # Rows saved before reservations had queues: each gets the queue PBS would name.
        queue=str(row.get("queue", f"R{row['seq']}")),
        select=str(row.get("select", "")),  # rows saved before it: whole nodes
    )
