"""``scontrol update JobId=ID KEY=VALUE...``: the job fields batchd can change on a
pending job (PATCH /jobs/{id}); every other key is refused before anything is sent."""

from __future__ import annotations

from ..hints import Any
from ..transport import ApiError, Client, quote
from .command import SlurmError
from .ids import JobSelector, parse_ids
from .joblist import find_jobs
from .times import parse_duration

_ID_KEYS = ("jobid", "job")


def _nodes(text: str) -> int:
    """NumNodes=N or N-N (a range batchd cannot keep is refused)."""
    low, sep, high = text.partition("-")
    if not low.isdigit() or (sep and high != low) or int(low) < 1:
        raise SlurmError(f"Invalid node count specified: {text}")
    return int(low)


def _change(key: str, value: str, word: str) -> tuple[str, Any]:
    """The PATCH field and value of one ``KEY=VALUE``."""
    if key == "timelimit":
        try:
            seconds = parse_duration(value)
        except ValueError:
            raise SlurmError(f"Invalid TimeLimit value: {value}") from None
        if seconds is None:
            raise SlurmError(f"Invalid TimeLimit value: {value} (batchd needs a limit)")
        return "walltime", seconds
    if key in ("jobname", "name"):
        return "name", value
    if key == "partition":
        return "queue", value
    if key == "numnodes":
        return "nodes", _nodes(value)
    raise SlurmError(f"Update of this parameter is not supported: {word}")


def parse_update(args: list[str]) -> tuple[list[JobSelector], dict[str, Any]]:
    """The jobs and the PATCH body of an update's words; SlurmError naming the first
    word that cannot be taken."""
    selectors: list[JobSelector] | None = None
    body: dict[str, Any] = {}
    for word in args:
        key, sep, value = word.partition("=")
        if not sep:
            raise SlurmError(f"Invalid input: {word}\nRequest aborted")
        key = key.lower()
        if key in _ID_KEYS:
            try:
                selectors = parse_ids(value)
            except ValueError:
                raise SlurmError(f"Invalid JobId value: {value}") from None
            continue
        field, parsed = _change(key, value, word)
        body[field] = parsed
    if selectors is None:
        raise SlurmError("No valid entity in update command")
    if not body:
        raise SlurmError("No changes specified")
    return selectors, body


def update_job(client: Client, args: list[str]) -> None:
    """Apply the update to every job named; the first refusal ends the command."""
    if not args:
        raise SlurmError("too few arguments for keyword:update")
    selectors, body = parse_update(args)
    listing = find_jobs(client, selectors)
    for sel in selectors:
        jobs = [j for j in listing.jobs if sel.matches(j)]
        if not jobs:
            raise SlurmError(f"Invalid job id specified for job {sel.seq}")
        if sel.tasks is None and jobs[0].get("array_index") is not None:
            jobs = [dict(jobs[0], array_index=None, whole=f"{sel.seq}[]")]
        for job in jobs:
            _patch(client, job, body)


def _patch(client: Client, job: dict[str, Any], body: dict[str, Any]) -> None:
    index = job.get("array_index")
    name = job.get("whole") or (str(job["seq"]) if index is None else f"{job['seq']}[{index}]")
    shown = str(job["seq"]) if index is None else f"{job['seq']}_{index}"
    try:
        client.patch(f"/jobs/{quote(name)}", body)
    except ApiError as exc:
        messages = {
            403: "Access/permission denied",
            404: "Invalid job id specified",
            409: "Job is no longer pending execution",
        }
        raise SlurmError(f"{messages.get(exc.status, exc.message)} for job {shown}") from None
