"""Job dependencies (``qsub -W depend=afterok:ID``): which jobs wait for which, and verdicts.

A job with unmet dependencies is held (type ``s``) until every job it depends on
has ended (``after``: started, or ended unrun); then it is released, or it ends
unrun if one ending can never satisfy its dependency. ``singleton`` (Slurm's) is
made, at submission, into a dependency on every earlier unfinished job of the same
owner and name: the job waits until each of them has ended, however it ended. As in PBS, each ending is judged when it happens and its
dependency dropped from the waiting job (``JobRecord.depend`` holds the ones still
pending), so no verdict needs a finished job that has left memory. Only a
submission asks about jobs that finished before it: the history answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from batchd.model.states import JobState
from batchd.server.errors import bad_request
from batchd.server.records import SINGLETON, JobRecord, parse_depend

Outcome = Callable[[int], str | None]  # a finished job's outcome from the history
Verdict = Literal["release", "end", "wait"]


def satisfies(kind: str, outcome: str) -> bool:
    """Whether a job that ended with ``outcome`` satisfies a dependency of this kind."""
    ok = outcome == "ok"
    if kind in ("after", "singleton", "afterany"):
        return True
    if kind == "afterok":
        return ok
    if kind == "afternotok":
        return not ok
    return True


class Dependencies:
    def __init__(self, records: dict[int, JobRecord], server: str, finished: Outcome) -> None:
        self.records = records  # jobs in memory: unfinished, or finished and not yet saved
        self.server = server
        self.finished = finished
        self.dependents: dict[int, list[int]] = {}  # job -> jobs that wait for it

    def job_id(self, seq: int) -> str:
        return f"{seq}.{self.server}"

    def ended(self, seq: int) -> tuple[bool, str | None]:
        """(known, outcome): outcome None while job ``seq`` has not finished."""
        rec = self.records.get(seq)
        if rec is not None:
            return True, rec.job.result.outcome if rec.state is JobState.FINISHED else None
        outcome = self.finished(seq)
        return outcome is not None, outcome

    def parse(self, text: str | None) -> list[tuple[str, int]]:
        """The dependencies of a submission; refused if one names an unknown job or can
        never be satisfied."""
        if not text:
            return []
        try:
            depend = parse_depend(text, self.server)
        except ValueError as exc:
            raise bad_request(str(exc)) from None
        for kind, seq in depend:
            if (kind, seq) == SINGLETON:
                continue
            known, outcome = self.ended(seq)
            if not known:
                raise bad_request(f"depend: unknown job id {self.job_id(seq)}")
            if outcome is not None and not satisfies(kind, outcome):
                raise bad_request(
                    f"depend: {kind}:{self.job_id(seq)} can never be satisfied: "
                    f"job {self.job_id(seq)} ended ({outcome})"
                )
        return depend

    def singleton(
        self, depend: list[tuple[str, int]], owner: str, name: str
    ) -> list[tuple[str, int]]:
        """``singleton`` made into the earlier unfinished jobs of ``owner`` named ``name``."""
        if SINGLETON not in depend:
            return depend
        out = [d for d in depend if d != SINGLETON]
        for rec in self.records.values():
            job = rec.job
            if rec.owner == owner and job.name == name and job.state is not JobState.FINISHED:
                out.append(("singleton", rec.seq))
        return out

    def started(self, seq: int) -> bool:
        rec = self.records.get(seq)
        return rec is not None and rec.job.start >= 0

    def pending(self, depend: list[tuple[str, int]]) -> list[tuple[str, int]]:
        """The dependencies on jobs that have not finished (``after``: not started). The
        others are met: ``parse`` refused any that is not, and a job gone from the history
        was judged when it ended."""
        out = []
        for kind, seq in depend:
            known, outcome = self.ended(seq)
            if known and outcome is None and not (kind == "after" and self.started(seq)):
                out.append((kind, seq))
        return out

    def started_settles(self, started: JobRecord) -> list[tuple[JobRecord, Verdict]]:
        """The held dependents whose ``after`` dependency on ``started`` its start meets:
        released, or waiting on for their others (the dependency is dropped)."""
        out: list[tuple[JobRecord, Verdict]] = []
        waiting = self.dependents.get(started.seq)
        if not waiting:
            return out
        keep: list[int] = []
        for child in waiting:
            rec = self.records.get(child)
            if rec is None or rec.state is not JobState.HELD or "s" not in rec.hold_types:
                continue
            if not any(kind == "after" for kind, seq in rec.depend if seq == started.seq):
                keep.append(child)
                continue
            rec.depend = [
                (kind, seq)
                for kind, seq in rec.depend
                if not (seq == started.seq and kind == "after")
            ]
            if any(seq == started.seq for _, seq in rec.depend):
                keep.append(child)  # it waits for this job's end too
            out.append((rec, "wait" if rec.depend else "release"))
        if keep:
            self.dependents[started.seq] = keep
        else:
            del self.dependents[started.seq]
        return out

    def index(self, rec: JobRecord) -> None:
        for _, seq in rec.depend:
            self.dependents.setdefault(seq, []).append(rec.seq)

    def settled_by(self, ended: JobRecord) -> list[tuple[JobRecord, Verdict]]:
        """The held dependents of ``ended`` and what its ending means for each: release
        it, end it unrun, or wait on for the other jobs it depends on (its dependency on
        ``ended`` is dropped: the caller saves it)."""
        out: list[tuple[JobRecord, Verdict]] = []
        outcome = ended.job.result.outcome
        for child in self.dependents.pop(ended.seq, []):
            rec = self.records.get(child)
            if rec is None or rec.state is not JobState.HELD or "s" not in rec.hold_types:
                continue
            kinds = [kind for kind, seq in rec.depend if seq == ended.seq]
            if not kinds:
                continue
            if not all(satisfies(kind, outcome) for kind in kinds):
                out.append((rec, "end"))
                continue
            rec.depend = [(kind, seq) for kind, seq in rec.depend if seq != ended.seq]
            out.append((rec, "wait" if rec.depend else "release"))
        return out
