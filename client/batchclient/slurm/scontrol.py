"""scontrol: show jobs, nodes, partitions and batchd's configuration in Slurm's layouts;
hold, release, requeue and update jobs (POST /jobs/{id}/hold, /release, /rerun, PATCH
/jobs/{id}); ping the daemon."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ..hints import Any
from ..transport import ApiError, Client, TransportError, quote
from . import hostlist
from .command import EXIT_ERROR, SlurmError, run, say_error
from .ids import JobSelector, parse_ids, slurm_id
from .joblist import find_jobs, list_jobs, rows
from .scontrol_info import config_lines, node_record, partition_record
from .scontrol_job import record
from .scontrol_update import update_job
from .states import slurm_state

PROG = "scontrol"
USAGE = """\
Usage: scontrol [-o|--oneliner] [-Q|--quiet] COMMAND
  show job [ID]        show jobs (also: show jobs)
  show node [NAME]     show nodes (also: show nodes)
  show partition [P]   show partitions (also: show partitions)
  show config          the part of the configuration batchd has
  hold ID...           hold pending jobs (also: uhold)
  release ID...        release held jobs
  requeue ID...        put running jobs back in their queue
  update JobId=ID KEY=VALUE...
                       change a pending job: TimeLimit, JobName (Name), Partition,
                       NumNodes
  ping                 whether the daemon answers
"""
_ENTITIES = {"job": "job", "jobs": "job", "node": "node", "nodes": "node",
             "partition": "partition", "partitions": "partition", "config": "config",
             "configuration": "config"}  # fmt: skip
_REFUSALS = {  # the daemon's refusal -> Slurm's words (slurm_strerror)
    403: "Access/permission denied",
    404: "Invalid job id specified",
}


def _entity(word: str) -> str | None:
    """The entity a (case-insensitive, abbreviable from 2 letters) word names."""
    low = word.lower()
    found = {v for k, v in _ENTITIES.items() if k.startswith(low) and len(low) >= 2}
    if low in ("j", "n", "p", "c"):
        found = {v for k, v in _ENTITIES.items() if k.startswith(low)}
    return found.pop() if len(found) == 1 else None


def _selectors(words: list[str]) -> list[JobSelector]:
    """The job ids of ``hold 12 13,14_2``."""
    try:
        return [s for word in words for s in parse_ids(word)]
    except ValueError:
        raise SlurmError("Invalid job id specified") from None


def show_job(client: Client, args: list[str], one_liner: bool) -> str:
    if len(args) > 1:
        raise SlurmError(f"too many arguments for keyword:show entity:job {args[1]}")
    if args:
        listing = find_jobs(client, _selectors(args[:1]))
        if not listing.jobs:
            raise SlurmError("slurm_load_jobs error: Invalid job id specified")
    else:
        listing = list_jobs(client, history=True)
        if not listing.jobs:
            return "No jobs in the system\n"
    listing.jobs.sort(
        key=lambda j: (j["seq"], -1 if j.get("array_index") is None else j["array_index"])
    )
    return "".join(record(row, one_liner) for row in rows(listing.jobs, one_per_task=False))


def show_node(client: Client, args: list[str], one_liner: bool) -> str:
    nodes = client.get("/nodes")["nodes"]
    queues = client.get("/queues")["queues"]
    if args:
        try:
            wanted = set(hostlist.expand(args[0]))
        except ValueError as exc:
            raise SlurmError(str(exc)) from None
        nodes = [n for n in nodes if n["name"] in wanted]
        if not nodes:
            raise SlurmError(f"Node {args[0]} not found")
    return "".join(node_record(n, queues, one_liner) for n in nodes)


def show_partition(client: Client, args: list[str], one_liner: bool) -> str:
    queues = client.get("/queues")["queues"]
    nodes = client.get("/nodes")["nodes"]
    if args:
        queues = [q for q in queues if q["name"] == args[0]]
        if not queues:
            raise SlurmError(f"Partition {args[0]} not found")
    if not queues:
        return "No partitions in the system\n"
    return "".join(partition_record(q, nodes, one_liner) for q in queues)


def _show(client: Client, args: list[str], one_liner: bool) -> None:
    if not args:
        raise SlurmError("too few arguments for keyword:show")
    entity = _entity(args[0])
    if entity is None:
        raise SlurmError(f"invalid entity:{args[0]} for keyword:show")
    if entity == "config":
        text = config_lines(client.get("/server"))
    elif entity == "job":
        text = show_job(client, args[1:], one_liner)
    elif entity == "node":
        text = show_node(client, args[1:], one_liner)
    else:
        text = show_partition(client, args[1:], one_liner)
    sys.stdout.write(text)


def _act(client: Client, verb: str, args: list[str]) -> int:
    """hold, release or requeue each job named; one error line per refusal."""
    if not args:
        raise SlurmError(f"too few arguments for keyword:{verb}")
    selectors = _selectors(args)
    listing = find_jobs(client, selectors)
    code = 0
    for sel in selectors:
        jobs = [j for j in listing.jobs if sel.matches(j)]
        if not jobs:
            name = str(sel.seq) if sel.tasks is None else f"{sel.seq}_{list(sel.tasks)[0]}"
            say_error(PROG, f"Invalid job id specified for job {name}")
            code = EXIT_ERROR
            continue
        for job in jobs:
            if not _act_one(client, verb, job):
                code = EXIT_ERROR
    return code


def job_path(job: dict[str, Any]) -> str:
    index = job.get("array_index")
    name = str(job["seq"]) if index is None else f"{job['seq']}[{index}]"
    return f"/jobs/{quote(name)}"


def _act_one(client: Client, verb: str, job: dict[str, Any]) -> bool:
    state = slurm_state(job)
    path = job_path(job)
    try:
        if verb in ("hold", "uhold"):
            if state != "PENDING":
                raise SlurmError("Job is no longer pending execution")
            if not job.get("hold_types"):
                client.post(f"{path}/hold", {})
        elif verb == "release":
            if state != "PENDING":
                raise SlurmError("Job is no longer pending execution")
            if job.get("hold_types"):  # releasing a job not held changes nothing
                client.post(f"{path}/release", {"types": job["hold_types"]})
        else:
            if state == "PENDING":
                raise SlurmError("Job is pending execution")
            client.post(f"{path}/rerun", None)
    except ApiError as exc:
        say_error(PROG, f"{_REFUSALS.get(exc.status, exc.message)} for job {slurm_id(job)}")
        return False
    except SlurmError as exc:
        say_error(PROG, f"{exc} for job {slurm_id(job)}")
        return False
    return True


def _ping(client: Client) -> int:
    try:
        name = str(client.get("/server")["name"])
    except (TransportError, ApiError):
        sys.stdout.write("Slurmctld(primary) at batchd is DOWN\n")
        return EXIT_ERROR
    sys.stdout.write(f"Slurmctld(primary) at {name} is UP\n")
    return 0


def _options(argv: list[str]) -> tuple[bool, list[str]]:
    """The leading options (-o, -Q, -d, -M NAME) and the command's words."""
    one_liner = False
    words = list(argv)
    while words and words[0].startswith("-"):
        opt = words.pop(0)
        if opt in ("-o", "--oneliner"):
            one_liner = True
        elif opt in ("-Q", "--quiet", "-d", "--details", "-a", "--all"):
            pass
        elif opt in ("-M", "--clusters"):
            if not words:
                raise SlurmError(f"option '{opt}' requires an argument")
            words.pop(0)  # batchd is one cluster
        elif opt.startswith("--clusters="):
            pass
        elif opt in ("-h", "--help", "--usage"):
            sys.stdout.write(USAGE)
            raise SystemExit(0)
        else:
            raise SlurmError(f"unrecognized option '{opt}'")
    return one_liner, words


def _main(argv: list[str]) -> int:
    one_liner, words = _options(argv)
    if not words:
        raise SlurmError("no command given: scontrol's interactive mode is not supported")
    verb, args = words[0].lower(), words[1:]
    client = Client()
    if verb == "show":
        _show(client, args, one_liner)
        return 0
    if verb in ("hold", "uhold", "release", "requeue"):
        return _act(client, verb, args)
    if verb == "update":
        update_job(client, args)
        return 0
    if verb == "ping":
        return _ping(client)
    if verb in ("version", "-v", "--version"):
        sys.stdout.write(f"slurm-compatible scontrol (batchd {client.get('/server')['version']})\n")
        return 0
    raise SlurmError(f"invalid keyword: {words[0]}")


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
