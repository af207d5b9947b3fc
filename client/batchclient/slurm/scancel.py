"""scancel: cancel jobs (DELETE /jobs/{id}) or signal them (-s: POST /jobs/{id}/signal),
by id (12, 12_3, 12_[1-3]) or by filters (-u, -n, -t, -p, --me), as Slurm's scancel."""

from __future__ import annotations

import os
import pwd
import signal
import sys
from collections.abc import Sequence

from ..hints import Any
from ..transport import ApiError, Client, quote
from .command import EXIT_ERROR, SlurmError, SlurmParser, run, say_error
from .ids import JobSelector, parse_ids, slurm_id
from .joblist import find_jobs, list_jobs
from .states import parse_states, slurm_state

PROG = "scancel"
_MESSAGES = {  # the daemon's refusal -> Slurm's words (slurm_strerror)
    403: "Access/permission denied",
    404: "Invalid job id specified",
    409: "Job/step already completing or completed",
}


def build_parser() -> SlurmParser:
    p = SlurmParser(PROG, usage="scancel [OPTIONS] [job_id[_array_id]...]")
    add = p.add_argument
    add("ids", nargs="*", metavar="job_id")
    add("-b", "--batch", action="store_true", help="signal the batch script alone")
    add("-f", "--full", action="store_true", help="signal the script and every step")
    add("-i", "--interactive", action="store_true", help="refused: no confirmation prompt")
    add("-M", "--clusters", metavar="NAMES", help="accepted: batchd is one cluster")
    add("--me", action="store_true", help="only your own jobs")
    add("-n", "--name", "--jobname", metavar="NAMES", help="only jobs of these names")
    add("-p", "--partition", metavar="PARTITIONS", help="only jobs of these partitions")
    add("-Q", "--quiet", action="store_true", help="no error for jobs already ended")
    add("-s", "--signal", metavar="SIGNAL", help="send this signal instead of cancelling")
    add("-t", "--state", "--states", metavar="STATES", help="only jobs in these states")
    add("-u", "--user", metavar="USER", help="only this user's jobs")
    add("-v", "--verbose", action="count", default=0, help="say what is done")
    return p


def signal_name(text: str) -> str:
    """The signal's name as the daemon takes it (``USR1``), from a name (``SIGUSR1``,
    ``usr1``) or a number; SlurmError ``Unknown job signal`` otherwise."""
    word = text.strip().upper().removeprefix("SIG")
    try:
        number = int(word) if word.isdigit() else signal.Signals["SIG" + word].value
        if not 0 < number < 32:
            raise ValueError
        return signal.Signals(number).name.removeprefix("SIG")
    except (KeyError, ValueError):
        raise SlurmError(f"Unknown job signal: {text}") from None


def _path(job: dict[str, Any], whole_array: bool) -> str:
    seq, index = job["seq"], job.get("array_index")
    if index is None:
        return f"/jobs/{seq}"
    return f"/jobs/{quote(f'{seq}[]')}" if whole_array else f"/jobs/{quote(f'{seq}[{index}]')}"


def _owner(ns: Any) -> str | None:
    """Whose jobs filters select: -u, --me, else (not root) your own."""
    if ns.user:
        try:
            return pwd.getpwuid(int(ns.user)).pw_name if ns.user.isdigit() else ns.user
        except KeyError:
            raise SlurmError(f"Invalid user id: {ns.user}") from None
    if ns.me or os.getuid() != 0:
        return pwd.getpwuid(os.getuid()).pw_name
    return None


def _matches(job: dict[str, Any], ns: Any, owner: str | None, states: set[str] | None) -> bool:
    if owner is not None and job.get("owner") != owner:
        return False
    if ns.name and job.get("name") not in ns.name.split(","):
        return False
    if ns.partition and job.get("queue") not in ns.partition.split(","):
        return False
    return states is None or slurm_state(job) in states


def _targets(client: Client, ns: Any) -> tuple[list[tuple[str, str]], list[str], set[str]]:
    """(Slurm id, path) of each job to act on, the ids that name no job, and the ids
    of pending jobs (a signal cannot reach them)."""
    filtered = bool(ns.user or ns.me or ns.name or ns.partition or ns.state)
    try:
        states = parse_states(ns.state) if ns.state else None
        selectors = [s for text in ns.ids for s in parse_ids(text)]
    except ValueError as exc:
        raise SlurmError(str(exc)) from None
    owner = _owner(ns) if filtered else None
    if not selectors:
        if not filtered:
            raise SlurmError("No job identification provided")
        listing = list_jobs(client, history=False, user=owner)
        chosen = [j for j in listing.jobs if _matches(j, ns, owner, states)]
        return [(slurm_id(j), _path(j, False)) for j in chosen], [], _pending(chosen)
    listing = find_jobs(client, selectors)
    out: list[tuple[str, str]] = []
    missing: list[str] = []
    for sel in selectors:
        jobs = [j for j in listing.jobs if sel.matches(j)]
        if filtered:
            jobs = [j for j in jobs if _matches(j, ns, owner, states)]
        out.extend(_for_selector(sel, jobs, missing, filtered))
    pending = _pending(listing.jobs) | {
        str(j["seq"]) for j in listing.jobs if _all_pending(j, listing.jobs)
    }
    return list(dict.fromkeys(out)), missing, pending


def _pending(jobs: list[dict[str, Any]]) -> set[str]:
    return {slurm_id(j) for j in jobs if slurm_state(j) == "PENDING"}


def _all_pending(job: dict[str, Any], jobs: list[dict[str, Any]]) -> bool:
    """Whether every listed job of ``job``'s number is pending (an array not begun)."""
    return all(slurm_state(j) == "PENDING" for j in jobs if j["seq"] == job["seq"])


def _for_selector(
    sel: JobSelector, jobs: list[dict[str, Any]], missing: list[str], filtered: bool
) -> list[tuple[str, str]]:
    if sel.tasks is None:
        if not jobs:
            if not filtered:
                missing.append(str(sel.seq))
            return []
        if jobs[0].get("array_index") is not None and not filtered:
            return [(str(sel.seq), _path(jobs[0], True))]  # the whole array at once
        return [(slurm_id(j), _path(j, False)) for j in jobs]
    found = {j.get("array_index"): j for j in jobs}
    out = []
    for index in sel.tasks:
        if index in found:
            out.append((slurm_id(found[index]), _path(found[index], False)))
        elif not filtered:
            missing.append(f"{sel.seq}_{index}")
    return out


def _main(argv: list[str]) -> int:
    ns = build_parser().parse_args(argv)
    if ns.interactive:
        raise SlurmError("--interactive is not supported: name the jobs to cancel")
    body = None if ns.signal is None else {"signal": signal_name(ns.signal)}
    if body is not None:
        # As Slurm: a signal goes to the job's steps, not its batch script, unless -b (the
        # script alone) or -f (everything); SIGKILL goes to everything.
        target = "script" if ns.batch else "all" if ns.full else "steps"
        body["target"] = "all" if body["signal"] in ("KILL", "9") else target
    client = Client()
    targets, missing, pending = _targets(client, ns)
    code = 0
    for jid in missing:
        say_error(PROG, f"Kill job error on job id {jid}: Invalid job id specified")
        code = EXIT_ERROR
    for jid, path in targets:
        try:
            if body is None:
                client.delete(path)
            else:
                client.post(f"{path}/signal", body)
        except ApiError as exc:
            text = _MESSAGES.get(exc.status, exc.message)
            if body is not None and exc.status == 409 and jid in pending:
                text = "Job is pending execution"
            if not (ns.quiet and exc.status == 409):
                say_error(PROG, f"Kill job error on job id {jid}: {text}")
            code = EXIT_ERROR
            continue
        if ns.verbose:
            what = "Terminating" if body is None else f"Signal {body['signal']} to"
            sys.stderr.write(f"scancel: {what} job {jid}\n")
    return code


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
