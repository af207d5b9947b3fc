"""sacct: the jobs the daemon holds, finished ones from its history (``GET /jobs`` with
``history=true``), as Slurm's sacct prints them.

batchd has no accounting database: what sacct can show is what the daemon keeps, the
unfinished jobs and the finished ones of the last ``job_history_duration``.
"""

from __future__ import annotations

import os
import pwd
import re
import sys
from collections.abc import Iterator, Sequence

from ..hints import Any
from ..qstat import pages
from ..transport import Client
from . import acct_fields, acct_output, states, times
from .command import SlurmError, SlurmParser, run
from .ids import JobSelector, parse_ids

PROG = "sacct"
BRIEF_FIELDS = "jobid,state,exitcode"
DEFAULT_FIELDS = "jobid,jobname,partition,account,alloccpus,state,exitcode"
LONG_FIELDS = (
    "jobid,jobidraw,jobname,partition,maxvmsize,maxvmsizenode,maxvmsizetask,avevmsize,"
    "maxrss,maxrssnode,maxrsstask,averss,maxpages,maxpagesnode,maxpagestask,avepages,"
    "mincpu,mincpunode,mincputask,avecpu,ntasks,alloccpus,elapsed,state,exitcode,"
    "avecpufreq,reqcpufreqmin,reqcpufreqmax,reqcpufreqgov,reqmem,consumedenergy,"
    "maxdiskread,maxdiskreadnode,maxdiskreadtask,avediskread,maxdiskwrite,"
    "maxdiskwritenode,maxdiskwritetask,avediskwrite,reqtres,alloctres"
)
_CLOCK_ONLY = re.compile(r"^\s*(\d{1,2}:\d{2}(:\d{2})?|midnight|noon|elevenses|fika|teatime)\s*$")


def build_parser() -> SlurmParser:
    p = SlurmParser(PROG, description="Show the jobs batchd holds, as Slurm's sacct.")
    add = p.add_argument
    add("-j", "--jobs", action="append", metavar="JOB[,JOB...]",
        help="only these jobs (12, 12_3, 12_[1-3], 12.batch)")  # fmt: skip
    add("-X", "--allocations", action="store_true", help="jobs only, not their steps")
    add("-u", "--user", "--uid", dest="users", action="append", metavar="USER[,USER...]",
        help="only these users' jobs (names or uids)")  # fmt: skip
    add("-a", "--allusers", action="store_true", help="every user's jobs")
    add("-S", "--starttime", metavar="TIME", help="jobs not ended before TIME (default: "
        "midnight today; with -j, any time)")  # fmt: skip
    add("-E", "--endtime", metavar="TIME", help="jobs submitted by TIME (default: now)")
    add("-s", "--state", dest="states", action="append", metavar="STATE[,STATE...]",
        help="only jobs in these states (CD, F, CA, TO, NF, OOM, PD, R, ...)")  # fmt: skip
    add("--name", action="append", metavar="NAME[,NAME...]", help="only jobs of these names")
    add("-r", "--partition", action="append", metavar="PART[,PART...]",
        help="only jobs of these partitions (batchd's queues)")  # fmt: skip
    add("-A", "--accounts", action="append", metavar="ACCOUNT[,ACCOUNT...]",
        help="only jobs charged to these accounts")  # fmt: skip
    add("-o", "--format", action="append", metavar="FIELD[%WIDTH],...", help="the fields")
    add("-e", "--helpformat", action="store_true", help="list the fields and exit")
    add("-b", "--brief", action="store_true", help=f"fields {BRIEF_FIELDS}")
    add("-l", "--long", action="store_true", help="Slurm's long field list")
    add("-n", "--noheader", action="store_true", help="no header lines")
    add("-p", "--parsable", action="store_true", help="fields ended by |, lines too")
    add("-P", "--parsable2", action="store_true", help="fields separated by |")
    add("--delimiter", metavar="TEXT", help="with -p or -P: this in place of |")
    add("--json", action="store_true", help="Slurm's JSON document")
    add("-M", "--clusters", metavar="CLUSTER", help="refused unless it names this daemon")
    add("-L", "--allclusters", action="store_true", help="the one cluster there is")
    add("-q", "--qos", metavar="QOS", help="refused: batchd has no QOS")
    add("-T", "--truncate", action="store_true", help="accepted; changes nothing")
    add("-D", "--duplicates", action="store_true", help="accepted; changes nothing")
    return p


class Query:
    """What the options select."""

    def __init__(self, ns: Any, now: int, server: str) -> None:
        self.ns = ns
        self.now = now
        self.selectors = self._selectors()
        self.start = self._time(ns.starttime, self._default_start())
        self.end = self._time(ns.endtime, now)
        self.states = self._states()
        self.names = _items(ns.name)
        self.partitions = _items(ns.partition)
        self.accounts = _items(ns.accounts)
        self.users = self._users()
        if ns.clusters is not None and ns.clusters not in (server, "all"):
            raise SlurmError(f"Problem talking to database: cluster {ns.clusters} is not "
                             f"known (this is cluster {server})")  # fmt: skip
        if ns.qos is not None:
            raise SlurmError("batchd keeps no QOS: -q/--qos cannot select jobs")

    def _selectors(self) -> list[JobSelector] | None:
        if not self.ns.jobs:
            return None
        out: list[JobSelector] = []
        for text in self.ns.jobs:
            try:
                out.extend(parse_ids(text, allow_steps=True))
            except ValueError as exc:
                raise SlurmError(str(exc)) from None
        return out

    def _default_start(self) -> int:
        if self.selectors is not None:
            return 0
        return times.parse_time("today", self.now)

    def _time(self, text: str | None, default: int) -> int:
        if text is None:
            return default
        try:
            when = times.parse_time(text, self.now)
        except ValueError:
            raise SlurmError(f"Invalid time specification: {text}") from None
        if when > self.now and _CLOCK_ONLY.match(text.lower()):
            when -= 86400  # sacct reads a bare clock time as the last one past
        return when

    def _states(self) -> set[str] | None:
        if not self.ns.states:
            return None
        found: set[str] = set()
        for text in self.ns.states:
            try:
                found |= states.parse_states(text)
            except ValueError as exc:
                raise SlurmError(str(exc)) from None
        return found

    def _users(self) -> list[str] | None:
        if self.ns.users:
            return [_user_name(u) for u in _items(self.ns.users) or []]
        if self.ns.allusers or os.getuid() == 0:
            return None
        return [pwd.getpwuid(os.getuid()).pw_name]

    def api_query(self) -> dict[str, str]:
        q = {"history": "true", "subjobs": "true"}
        if self.users is not None:
            q["user"] = ",".join(self.users)
        return q

    def wants(self, job: dict[str, Any]) -> bool:
        if self.selectors is not None and not any(s.matches(job) for s in self.selectors):
            return False
        if self.names is not None and job.get("name") not in self.names:
            return False
        if self.partitions is not None and job.get("queue") not in self.partitions:
            return False
        if self.accounts is not None and job.get("account") not in self.accounts:
            return False
        if self.states is not None and states.slurm_state(job) not in self.states:
            return False
        if self.selectors is not None and self.ns.starttime is None and self.ns.endtime is None:
            return True
        end = job.get("end_time")
        return int(job.get("ctime") or 0) <= self.end and (end is None or end >= self.start)

    def steps(self, job: dict[str, Any]) -> list[str | None]:
        """The lines of a job: itself, then its batch step if its script ran for real."""
        has_batch = bool(job.get("executed")) and job.get("stime") is not None
        if self.selectors is not None:
            mine = [s for s in self.selectors if s.matches(job)]
            if all(s.step is not None for s in mine):
                return [BATCH] if has_batch and any(s.step == BATCH for s in mine) else []
        if self.ns.allocations or not has_batch:
            return [None]
        return [None, BATCH]


BATCH = acct_fields.BATCH_STEP


def _items(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [v.strip() for text in values for v in text.split(",") if v.strip()]


def _user_name(text: str) -> str:
    if text.isdigit():
        try:
            return pwd.getpwuid(int(text)).pw_name
        except KeyError:
            raise SlurmError(f"Invalid user id: {text}") from None
    return text


def field_list(ns: Any) -> list[acct_fields.Field]:
    if ns.format:
        text = ",".join(ns.format)
    elif ns.brief:
        text = BRIEF_FIELDS
    elif ns.long:
        text = LONG_FIELDS
    else:
        text = DEFAULT_FIELDS
    try:
        return acct_fields.parse_format(text)
    except ValueError as exc:
        raise SlurmError(str(exc)) from None


def jobs(client: Client, query: Query) -> Iterator[dict[str, Any]]:
    """The jobs the query selects, in id order; an array's own line only when none of
    its tasks is listed (each task is a line of its own, ``12_3``)."""
    for page in pages(client, query.api_query()):
        listed: list[dict[str, Any]] = page["jobs"]
        with_tasks = {j["seq"] for j in listed if j.get("array_index") is not None}
        for job in listed:
            if job.get("array") and job["seq"] in with_tasks:
                continue
            if query.wants(job):
                yield job


def _main(argv: list[str]) -> int:
    ns = build_parser().parse_intermixed_args(argv)
    if ns.helpformat:
        sys.stdout.write(acct_output.help_fields())
        return 0
    fields = field_list(ns)
    if ns.delimiter is not None and not (ns.parsable or ns.parsable2):
        raise SlurmError("--delimiter goes with -p/--parsable or -P/--parsable2")
    client = Client()
    server: dict[str, Any] = client.get("/server")
    query = Query(ns, int(server["now"]), str(server.get("name", "")))
    cluster = str(server.get("name", ""))
    rows = (
        acct_fields.Row(job, step, cluster)
        for job in jobs(client, query)
        for step in query.steps(job)
    )
    if ns.json:
        acct_output.write_json(list(rows), query.now)
        return 0
    printer = acct_output.Printer(
        fields,
        parsable="ending" if ns.parsable else "plain" if ns.parsable2 else None,
        delimiter=ns.delimiter if ns.delimiter is not None else "|",
    )
    if not ns.noheader:
        sys.stdout.write(printer.header())
    for row in rows:
        sys.stdout.write(printer.line(row))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
