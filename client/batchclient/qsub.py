"""qsub: submit one job (POST /jobs) and print its id."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence

from . import jobattrs, jobenv, mailopts
from .blocking import split_block, wait_for
from .cli import Parser, UsageError, run
from .directives import DirectiveError, directives, where
from .hints import Any
from .resources import ResourceError, Resources, parse_resources
from .text import escape
from .timefmt import parse_exec_time
from .transport import Client

PROG = "qsub"
USAGE = (
    "qsub [-l RES[,RES...]]... [-q QUEUE] [-N NAME] [-p PRIO] "
    "[-a [[[[CC]YY]MM]DD]hhmm[.SS]] [-h] [-W depend=TYPE:ID[:ID...]] [-W utility=T:V,T:V...] "
    "[-W speedup=downey:A:SIGMA|fixed] [-W block=true] [-r y|n] [-J X-Y[:Z][%%N]] "
    "[-o [HOST:]PATH] [-e [HOST:]PATH] [-j oe|eo|n] [-k KEEP] [-S PATH[@HOST][,...]] "
    "[-v VAR=VAL[,VAR=VAL...]] [-V] [script]"
)
# Accepted for compatibility with PBS scripts and ignored: project, checkpoint.
IGNORED_WITH_VALUE = ("-P", "-c")
INTERACTIVE = "interactive jobs are not supported"
KEEP = re.compile(r"^(n|[oed]+)$")


def build_parser(directive: bool = False) -> Parser:
    p = Parser(PROG, usage=USAGE, description="Submit a job to batchd.")
    add = p.add_argument
    add("-l", dest="resources", action="append", metavar="RES[,RES...]",
        help="select=N:ncpus=C:mem=M[:mpiprocs=P][+...], place=free|pack|scatter[:excl], "
        "nodes=N[:ppn=P], nodes=MIN-MAX (moldable: the scheduler chooses the width; the "
        "walltime is for MIN nodes), ncpus=C, mem=M, walltime=[[HH:]MM:]SS, and the "
        "site's resources (repeatable)")  # fmt: skip
    add("-q", dest="queue", metavar="QUEUE", help="destination queue")
    add("-N", dest="name", metavar="NAME", help="job name (default: the script's name or STDIN)")
    add("-p", dest="priority", metavar="PRIO", help="priority, -1024..1023")
    add("-a", dest="exec_time", metavar="DATETIME",
        help="not before [[[[CC]YY]MM]DD]hhmm[.SS] (batchd's clock)")  # fmt: skip
    add("-h", dest="hold", action="store_true", default=None, help="submit with a user hold")
    add("-W", dest="attrs", action="append", metavar="depend=...|utility=...|speedup=...",
        help="depend=TYPE:ID[:ID...] (afterok, afternotok, afterany); "
        "utility=T:V,T:V,... the result's value by time since submission; "
        "speedup=downey:A:SIGMA or fixed, a moldable job's runtime by width")  # fmt: skip
    add("-r", dest="rerun", metavar="y|n", help="whether qrerun may requeue the job (default y)")
    add("-J", dest="array", metavar="X-Y[:Z][%N]",
        help="a job array: one subjob per index X, X+Z, ... up to Y, at most N running")  # fmt: skip
    add("-v", dest="variables", action="append", metavar="VAR=VAL[,...]",
        help="job variables; BATCHD_RUNTIME=SECONDS sets the emulated runtime (emulated "
        "machines only)")  # fmt: skip
    add("-V", dest="export_all", action="store_true", default=None,
        help="export every variable of this environment to the job")  # fmt: skip
    add(
        "-o",
        dest="output_path",
        metavar="[HOST:]PATH",
        help="the job's standard output (default NAME.oSEQ here; a directory: inside it)",
    )
    add(
        "-e",
        dest="error_path",
        metavar="[HOST:]PATH",
        help="the job's standard error (default NAME.eSEQ here)",
    )
    add(
        "-j",
        dest="join",
        metavar="oe|eo|n",
        help="oe: error into the output file; eo: output into the error file; n: apart",
    )
    add(
        "-k",
        dest="keep",
        metavar="n|o|e|oe|d...",
        help="accepted: batchd writes output where -o and -e say as the job runs",
    )
    add(
        "-S",
        dest="shell",
        metavar="PATH[@HOST][,...]",
        help="the shell or interpreter of the script (default: your login shell)",
    )
    add("-A", dest="account", metavar="ACCOUNT", help="Account_Name (kept and shown)")
    add("-m", dest="mail_points", metavar="n|[abej]",
        help="Mail_Points: a abort, b begin, e end, j subjobs, n none (kept and shown; batchd "
        "sends no mail)")  # fmt: skip
    add("-M", dest="mail_users", metavar="USER[@HOST][,...]",
        help="Mail_Users (kept and shown; batchd sends no mail)")  # fmt: skip
    add("-I", dest="interactive", action="store_true", default=None, help=argparse.SUPPRESS)
    for opt in IGNORED_WITH_VALUE:
        p.add_argument(opt, dest=f"ignored_{opt[1]}", help=argparse.SUPPRESS)
    if not directive:
        p.add_argument("script", nargs="?", help="job script (default: stdin)")
    return p


def _merge(base: argparse.Namespace, top: argparse.Namespace) -> argparse.Namespace:
    """``top`` (later directive, or the command line) over ``base``; lists accumulate."""
    out = argparse.Namespace(**vars(base))
    for key, value in vars(top).items():
        if key in ("resources", "attrs", "variables"):
            setattr(out, key, (getattr(base, key, None) or []) + (value or []))
        elif value is not None:
            setattr(out, key, value)
    return out


def read_script(path: str | None) -> tuple[str, str]:
    """(script text, default job name)."""
    if path is not None and path != "-":
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                return fh.read(), jobattrs.name_from_path(path)
        except OSError as exc:
            raise UsageError(f"script file {path}: {exc.strerror or exc}") from None
    if path is None and sys.stdin.isatty():
        raise UsageError("no script: give a script file or pipe the script on stdin")
    return sys.stdin.read(), "STDIN"


def build_request(
    argv: Sequence[str],
    script: str | None = None,
    default_name: str = "STDIN",
    source: str | None = None,
) -> tuple[dict[str, Any], str | None]:
    """The JobSubmit body from the command line and the script's #PBS directives.

    Returns the body and the raw ``-a`` value (resolved later against the
    daemon's clock). Raises UsageError on any bad input; an error in a
    directive names ``source`` (the script's path, else STDIN) and the line.
    """
    cli = build_parser().parse_args(list(argv))
    if script is None:
        script, default_name = read_script(cli.script)
        source = cli.script if cli.script not in (None, "-") else "STDIN"
    source = source or default_name
    try:
        found = directives(script, source=source)
    except DirectiveError as exc:
        raise UsageError(str(exc)) from None

    dparser = build_parser(directive=True)
    merged = dparser.parse_args([])
    dir_resources: list[str] = []
    for number, words in found:
        try:
            ns = dparser.parse_args(words)
            dir_resources += ns.resources or []
            parse_resources(dir_resources)  # this line's, and not mixed with earlier ones
            _body(ns, Resources(), "STDIN")
        except (UsageError, ValueError) as exc:
            text = exc if isinstance(exc, UsageError) else _option_error(exc)
            raise UsageError(f"{where(source, number)}: #PBS {' '.join(words)}: {text}") from None
        merged = _merge(merged, ns)
    cli_only = argparse.Namespace(**{k: v for k, v in vars(cli).items() if k != "script"})
    opts = _merge(merged, cli_only)

    try:
        res = parse_resources(dir_resources).overridden_by(parse_resources(cli.resources or []))
        res.check_complete()
        body = _body(opts, res, default_name)
    except ValueError as exc:
        raise UsageError(_option_error(exc)) from None
    if "j" in body.get("mail_points", "") and "array_indices" not in body:
        raise UsageError(mailopts.NOT_AN_ARRAY)
    body["script"] = script
    return body, opts.exec_time


def _option_error(exc: ValueError) -> str:
    return f"-l {exc}" if isinstance(exc, ResourceError) else str(exc)


def _body(opts: argparse.Namespace, res: Resources, default_name: str) -> dict[str, Any]:
    """The body's fields from parsed options; ValueError naming the option."""
    if opts.exec_time is not None:
        try:
            parse_exec_time(opts.exec_time, 0)  # syntax only; resolved against batchd's clock
        except ValueError as exc:
            raise ValueError(f"-a {opts.exec_time}: illegal date/time: {exc}") from None
    if opts.interactive:
        raise ValueError(INTERACTIVE)
    body: dict[str, Any] = {}
    body["name"] = default_name if opts.name is None else jobattrs.check_name(opts.name)
    if opts.queue:
        body["queue"] = opts.queue
    body.update(res.body())
    if res.walltime is not None:
        body["walltime"] = res.walltime
    if opts.priority is not None:
        body["priority"] = jobattrs.parse_priority(opts.priority)
    if opts.hold:
        body["hold"] = True
    attrs, block = split_block(opts.attrs or [])
    body.update(jobattrs.parse_w_attrs(attrs))
    if block:
        body["block"] = True  # the client's own: taken out before the body is sent
    if opts.rerun is not None:
        if opts.rerun not in ("y", "n"):
            raise ValueError(f"-r {opts.rerun}: give y or n")
        if opts.rerun == "n":
            body["rerunable"] = False
    if opts.array is not None:
        span, max_run = jobattrs.parse_array(opts.array)
        if body.get("rerunable") is False:
            raise ValueError("cannot submit non-rerunable Array Job (-J with -r n)")
        body["array_indices"] = span
        if max_run is not None:
            body["max_run_subjobs"] = max_run
    variables = jobenv.origin_variables()
    if opts.export_all:
        variables.update(jobenv.exported())
    variables.update(jobattrs.parse_variables(opts.variables or []))
    body["variables"] = variables
    for option, key in (("-o", "output_path"), ("-e", "error_path")):
        given = getattr(opts, key)
        if given is not None:
            body[key] = jobenv.prepare_path(option, given)
    if opts.join is not None:
        if opts.join not in ("oe", "eo", "n"):
            raise ValueError(f"-j {opts.join}: give oe, eo or n")
        body["join_path"] = opts.join
    if opts.keep is not None and not KEEP.match(opts.keep):
        raise ValueError(f"-k {opts.keep}: give n, or any of o, e and d (oe, eod...)")
    if opts.shell is not None:
        body["shell"] = opts.shell
    if opts.account is not None:
        body["account"] = mailopts.account(opts.account)
    if opts.mail_points is not None:
        body["mail_points"] = mailopts.mail_points(opts.mail_points)
    if opts.mail_users is not None:
        body["mail_users"] = mailopts.mail_users(opts.mail_users)
    return body


def _main(argv: list[str]) -> int:
    body, exec_spec = build_request(argv)
    client = Client()
    if exec_spec is not None:
        server = client.get("/server")
        now = int(server["now"])
        body["exec_time"] = parse_exec_time(exec_spec, now)
    block = body.pop("block", False)
    job = client.post("/jobs", body)
    sys.stdout.write(f"{escape(job['id'])}\n")
    if block:
        sys.stdout.flush()
        return wait_for(client, job["id"])
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
