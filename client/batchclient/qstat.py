"""qstat: jobs (GET /jobs, /jobs/{id}), queues (-Q: GET /queues), the server (-B)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence

from . import jobtable
from .cli import (
    EXIT_HISTORY,
    EXIT_REFUSED,
    EXIT_UNKNOWN_JOB,
    Parser,
    UsageError,
    add_json_flag,
    print_json,
    run,
    say,
    wants_json,
)
from .hints import Any
from .jobattrs import is_array_id, is_job_id, is_subjob_id
from .jobsink import JobSink
from .pbsjson import PbsJsonSink
from .transport import ApiError, Client, quote

PROG = "qstat"
USAGE = """
  qstat [-f] [-w] [-x] [-t] [-J] [-F json | --json] [job_id... | queue...]
  qstat [-a|-i|-r|-H] [-T] [-u user[,user...]] [-n] [-s] [-1] [-w] [-x] [-t] [-J] [-F json]
        [job_id... | queue...]
  qstat -Q [-f] [-F json] [queue...]
  qstat -B [-f] [-F json]"""
HISTORY_MSG = "Job has finished, use -x or -H to obtain historical job information"
PAGE = 5_000  # jobs per GET /jobs: qstat holds one page at a time


def build_parser() -> Parser:
    p = Parser(PROG, usage=USAGE, description="Show batchd jobs, queues or the server.")
    flag = p.add_argument
    flag("-a", action="store_true", help="alternate format: all jobs")
    flag("-i", action="store_true", help="alternate format: jobs not running (E H Q W)")
    flag("-r", action="store_true", help="alternate format: running jobs")
    flag("-H", dest="finished", action="store_true", help="alternate format: finished jobs")
    flag("-T", dest="est", action="store_true", help="alternate format with estimated starts")
    flag("-n", dest="nodes", action="store_true", help="alternate format plus exec hosts")
    flag("-s", dest="comments", action="store_true", help="alternate format plus comments")
    flag("-u", dest="users", metavar="USER[,USER...]", help="only jobs of these users")
    flag("-x", dest="history", action="store_true", help="include finished jobs")
    flag("-f", dest="full", action="store_true", help="full display: all attributes")
    flag("-w", dest="wide", action="store_true", help="wide columns; -f: lines never broken")
    flag("-1", dest="one_line", action="store_true", help="with -n or -s: on the job's line")
    flag("-t", dest="subjobs", action="store_true",
         help="jobs, job arrays and their subjobs (with -J: subjobs only)")  # fmt: skip
    flag("-J", dest="arrays", action="store_true", help="job arrays only (with -t: their subjobs)")
    flag("-Q", dest="queues", action="store_true", help="queue summary")
    flag("-B", dest="server", action="store_true", help="server summary")
    add_json_flag(p)
    p.add_argument("operands", nargs="*", metavar="job_id|queue")
    return p


class Options:
    def __init__(self, ns: Any) -> None:
        self.ns = ns
        kinds = [k for k in ("a", "i", "r", "finished") if getattr(ns, k)]
        if len(kinds) > 1:
            raise UsageError("conflicting options: use only one of -a, -i, -r, -H")
        alt_only = kinds or ns.est or ns.nodes or ns.comments
        if ns.queues and ns.server:
            raise UsageError("conflicting options: -Q and -B")
        if (ns.queues or ns.server) and (alt_only or ns.users or ns.history):
            raise UsageError("conflicting options: -Q and -B take only -f and -F")
        if ns.server and ns.operands:
            raise UsageError("-B takes no operands (batchd has one server)")
        if ns.full and alt_only:
            raise UsageError("conflicting options: -f and the alternate format")
        if ns.one_line and not (ns.nodes or ns.comments):
            raise UsageError("conflicting options: -1 goes with -n or -s")
        if ns.wide and ns.format is not None:
            raise UsageError("option w cannot be used with -F")
        self.alt = bool(alt_only or (ns.users and not ns.full))
        self.json = wants_json(ns.format)
        # -f -F json: PBS Pro's document (--json: the API's, as for every listing).
        self.pbs_json = self.json and ns.full and ns.format != "api"
        self.pbs_json = self.pbs_json and not (ns.queues or ns.server)
        self.users = [u.partition("@")[0] for u in (ns.users or "").split(",") if u.strip()]
        self.history = ns.history or ns.finished

    @property
    def brief(self) -> bool:
        """Whether the layout needs only the fields of a JobBrief."""
        ns = self.ns
        return not (self.json or ns.full or ns.nodes or ns.comments)

    def query(self) -> dict[str, str]:
        q: dict[str, str] = {}
        if self.brief:
            q["brief"] = "true"
        if self.history:
            q["history"] = "true"
        if self.ns.subjobs:
            q["subjobs"] = "true"
        if self.ns.i:
            q["state"] = "EHQW"
        elif self.ns.r:
            q["state"] = "R"
        elif self.ns.finished:
            q["state"] = "F"
        return q


class Result:
    """Where the jobs of the operands go, each once, and the exit code."""

    def __init__(self, sink: JobSink, dedupe: bool, opts: Options) -> None:
        self.sink = sink
        self.seen: set[str] | None = set() if dedupe else None
        self.code = 0
        self.wanted = _kinds(opts)

    def add(self, jobs: Sequence[dict[str, Any]]) -> None:
        if self.wanted is not None:
            wanted = self.wanted
            jobs = [j for j in jobs if wanted(j["id"])]
        if self.seen is not None:
            jobs = [j for j in jobs if j["id"] not in self.seen]
            self.seen.update(j["id"] for j in jobs)
        self.sink.add(jobs)

    def fail(self, code: int, message: str) -> None:
        say(PROG, message)
        self.code = code


def _kinds(opts: Options) -> Callable[[str], bool] | None:
    """Which ids -J keeps: arrays, or with -t their subjobs (None: all)."""
    if not opts.ns.arrays:
        return None
    return is_subjob_id if opts.ns.subjobs else is_array_id


def _list(client: Client, opts: Options, res: Result, queue: str | None) -> None:
    """Every job the options select, a page at a time, in id order."""
    query = opts.query()
    if queue:
        query["queue"] = queue
    if opts.users:
        query["user"] = ",".join(opts.users)
    for page in pages(client, query):
        res.sink.listed(page["server"], int(page["now"]))
        res.add(page["jobs"])


def pages(client: Client, query: dict[str, str]) -> Iterator[dict[str, Any]]:
    """``GET /jobs`` page by page, following ``next``."""
    query = dict(query, limit=str(PAGE))
    while True:
        page: dict[str, Any] = client.get("/jobs", query)
        yield page
        cursor = page.get("next")
        if cursor is None:
            return
        query["after"] = str(cursor)


def _one(client: Client, opts: Options, res: Result, job_id: str) -> None:
    try:
        job: dict[str, Any] = client.get(f"/jobs/{quote(job_id)}")
    except ApiError as exc:
        if exc.status == 404:
            res.fail(EXIT_UNKNOWN_JOB, f"Unknown Job Id {job_id}")
        else:
            res.fail(EXIT_REFUSED, exc.message)
        return
    if job["state"] == "F" and not opts.history:
        res.fail(EXIT_HISTORY, f"{job['id']} {HISTORY_MSG}")
        return
    if opts.ns.subjobs and job.get("array"):
        res.add(_with_subjobs(client, opts, job))
        return
    res.add([job])


def _with_subjobs(client: Client, opts: Options, array: dict[str, Any]) -> list[dict[str, Any]]:
    """An array and its subjobs: the listing's page that starts at the array."""
    query = dict(opts.query(), subjobs="true", history="true", after=str(array["seq"] - 1))
    query.pop("state", None)
    page: dict[str, Any] = client.get("/jobs", dict(query, limit="1"))
    jobs: list[dict[str, Any]] = page["jobs"]
    if not jobs or jobs[0]["id"] != array["id"]:
        return [array]
    if not opts.brief:
        jobs[0] = array
    return jobs


def _jobs(client: Client, opts: Options) -> int:
    ns = opts.ns
    sink = JobSink(
        json_out=opts.json,
        alt=opts.alt,
        full=ns.full,
        est=ns.est,
        nodes=ns.nodes,
        comments=ns.comments,
        wide=ns.wide,
        one_line=ns.one_line,
    )
    if opts.pbs_json:
        sink = PbsJsonSink()
    res = Result(sink, dedupe=len(ns.operands) > 1, opts=opts)
    if not ns.operands:
        _list(client, opts, res, None)
    for operand in ns.operands:
        if is_job_id(operand):
            _one(client, opts, res, operand)
        else:
            queue = operand.partition("@")[0]
            _list(client, opts, res, queue or None)

    def server_info() -> tuple[str, int]:
        info: dict[str, Any] = client.get("/server")
        return info["name"], int(info["now"])

    sink.finish(server_info)
    return res.code


def _queues(client: Client, opts: Options) -> int:
    data: dict[str, Any] = client.get("/queues")
    queues = data["queues"]
    code = 0
    if opts.ns.operands:
        by_name = {q["name"]: q for q in queues}
        picked = []
        for operand in opts.ns.operands:
            name = operand.partition("@")[0]
            if name in by_name:
                picked.append(by_name[name])
            else:
                say(PROG, f"Unknown queue {name}")
                code = EXIT_REFUSED
        queues = picked
        data = dict(data, queues=queues)
    if opts.json:
        print_json(data)
    elif opts.ns.full:
        _write(jobtable.full_queues(queues))
    else:
        _write(jobtable.queue_table(queues))
    return code


def _server(client: Client, opts: Options) -> int:
    data: dict[str, Any] = client.get("/server")
    if opts.json:
        print_json(data)
    elif opts.ns.full:
        _write(jobtable.full_server(data))
    else:
        _write(jobtable.server_table(data))
    return 0


def _write(lines: Sequence[str]) -> None:
    if lines:
        sys.stdout.write("\n".join(lines) + "\n")


def _main(argv: list[str]) -> int:
    opts = Options(build_parser().parse_intermixed_args(argv))
    client = Client()
    if opts.ns.queues:
        return _queues(client, opts)
    if opts.ns.server:
        return _server(client, opts)
    return _jobs(client, opts)


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
