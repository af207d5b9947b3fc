"""Job dependencies (``qsub -W depend=afterok:ID``): which jobs wait for which, and verdicts.

A job with unmet dependencies is held (type ``s``) until every job it depends on
has ended; then it is released, or it ends unrun if one ending can never satisfy
its dependency.
"""

from __future__ import annotations

from batchd.model.job import Job
from batchd.model.states import JobState
from batchd.server.errors import bad_request
from batchd.server.records import JobRecord, parse_depend


def satisfies(kind: str, job: Job) -> bool:
    """Whether a finished job satisfies a dependency of this kind."""
    ok = job.outcome == "ok"
    if kind == "afterok":
        return ok
    if kind == "afternotok":
        return not ok
    return True


class Dependencies:
    def __init__(self, records: dict[int, JobRecord], server: str) -> None:
        self.records = records
        self.server = server
        self.dependents: dict[int, list[int]] = {}  # job -> jobs that wait for it

    def job_id(self, seq: int) -> str:
        return f"{seq}.{self.server}"

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
            dep = self.records.get(seq)
            if dep is None:
                raise bad_request(f"depend: unknown job id {self.job_id(seq)}")
            if dep.state is JobState.FINISHED and not satisfies(kind, dep.job):
                raise bad_request(
                    f"depend: {kind}:{self.job_id(seq)} can never be satisfied: "
                    f"job {self.job_id(seq)} ended ({dep.job.outcome})"
                )
        return depend

    def met(self, kind: str, seq: int) -> bool:
        dep = self.records.get(seq)
        return dep is not None and dep.state is JobState.FINISHED and satisfies(kind, dep.job)

    def index(self, rec: JobRecord) -> None:
        for _, seq in rec.depend:
            self.dependents.setdefault(seq, []).append(rec.seq)

    def settled_by(self, ended: JobRecord) -> list[tuple[JobRecord, bool]]:
        """The held dependents whose fate ``ended`` decides: (record, True to release it,
        False to end it unrun)."""
        out: list[tuple[JobRecord, bool]] = []
        for child in self.dependents.pop(ended.seq, []):
            rec = self.records[child]
            if rec.state is not JobState.HELD or "s" not in rec.hold_types:
                continue
            if not any(seq == ended.seq for _, seq in rec.depend):
                continue
            verdicts = [
                satisfies(kind, self.records[seq].job)
                if self.records[seq].state is JobState.FINISHED
                else None
                for kind, seq in rec.depend
            ]
            if any(v is False for v in verdicts):
                out.append((rec, False))
            elif all(verdicts):
                out.append((rec, True))
        return out
