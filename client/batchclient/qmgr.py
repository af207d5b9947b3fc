"""qmgr: list and print the server, scheduler, queues and nodes; set the scheduling
policy and its parameters (PATCH /scheduler), the server's job_history_duration and
query_other_jobs (PATCH /server) and node states (PATCH /nodes/{name}); create, set and delete
queues (POST /queues, PATCH and DELETE /queues/{name}).

Commands come from ``-c 'CMD'`` or, one per line, from stdin.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

from . import qmgr_format as fmt
from .cli import (
    EXIT_REFUSED,
    EXIT_USAGE,
    Parser,
    UsageError,
    add_json_flag,
    print_json,
    run,
    say,
    wants_json,
)
from .hints import Any
from .qmgr_parse import Command, QmgrSyntaxError, parse
from .qmgr_queue import ATTRS, BOOLS, LIMIT_FIELDS, PBS_ERRNO, QmgrServerError, queue_fields
from .text import escape
from .transport import ApiError, Client, quote

PROG = "qmgr"
RESV_QUEUE = re.compile(r"R[0-9]+")  # a reservation's queue: pbs_rsub makes it, not qmgr
POLICY_ATTRS = ("scheduler_policy", "policy")
SERVER_ATTRS = ("job_history_duration", "query_other_jobs")  # set through PATCH /server
SERVER_BOOLS = ("query_other_jobs", "scheduling")
GRID_PARAM = "grid_param."  # grid_param.KEY = VALUE, as [grid.params] KEY (PATCH /scheduler)
NODE_STATES = {"offline": "offline", "online": "online", "free": "online", "down": "down"}
HELP = """batchd qmgr commands (abbreviations s, l, p):
  list server | list sched | list queue [NAME] | list node [NAME]
  print server | print sched | print queue [NAME]
  set server scheduler_policy = POLICY
  set server job_history_duration = HH:MM:SS
  set server query_other_jobs = True|False
  set server scheduling = True|False              (False: no job starts; running ones go on)
  set server max_run | max_user_run | max_queued | max_user_queued = N
  unset server ATTR[, ATTR...]                    (the run and queued limits)
  set server grid_structure = STRUCTURE[, grid_param.KEY = VALUE...]   (a grid site)
  set server grid_param.KEY = VALUE[, ...]        (grid_param.local.MACHINE = POLICY)
  set server grid_params = "KEY=VALUE KEY=VALUE"
  set sched scheduler_policy = POLICY[, PARAM = VALUE...]
  set sched PARAM = VALUE[, PARAM = VALUE...]     (PARAM may carry the policy prefix: dynp_decider)
  set node NAME state = offline|online|down[, comment = TEXT]
  create queue NAME [ATTR = VALUE[, ...]]        (new queues are disabled and stopped)
  set queue NAME ATTR = VALUE[, ...]              (enabled, started, resources_max.nodect,
                                                   resources_max.walltime,
                                                   resources_default.walltime, window, machine,
                                                   max_run, max_user_run, max_queued,
                                                   max_user_queued)
  unset queue NAME ATTR[, ATTR...]                (the run and queued limits)
  delete queue NAME                               (a queue without unfinished jobs)
  quit"""


class Quit(Exception):
    pass


def server_bool(attr: str, value: str) -> bool:
    """A boolean server attribute, as PBS writes it (True, False, t, f, y, n, 1, 0)."""
    flag = BOOLS.get(value.lower())
    if flag is None:
        raise UsageError(f"set server {attr}: expected True or False, got {value!r}")
    return flag


class Session:
    """Runs parsed commands against one daemon."""

    def __init__(self, client: Client, as_json: bool = False) -> None:
        self.client = client
        self.as_json = as_json
        self._server: dict[str, Any] | None = None

    def server(self) -> dict[str, Any]:
        if self._server is None:
            self._server = self.client.get("/server")
        return self._server

    def emit(self, data: Any, lines: Sequence[str] | None) -> None:
        if self.as_json:
            print_json(data)
        elif lines:
            sys.stdout.write("\n".join(lines) + "\n")

    # -- dispatch -------------------------------------------------------------------

    def execute(self, cmd: Command) -> None:
        if cmd.verb == "quit":
            raise Quit
        if cmd.verb == "help":
            sys.stdout.write(HELP + "\n")
            return
        handler = getattr(self, f"_{cmd.verb}_{cmd.obj}", None)
        if handler is None:
            if cmd.verb in ("create", "delete", "unset", "active"):
                raise UsageError(
                    f"{cmd.verb} {cmd.obj}: not supported by batchd (it creates and deletes "
                    "queues, and unsets the limits of queues and the server)"
                )
            raise UsageError(f"{cmd.verb} {cmd.obj}: not supported by batchd (see qmgr -c help)")
        if cmd.verb not in ("set", "create", "unset") and cmd.attrs:
            raise UsageError(f"{cmd.verb} {cmd.obj}: takes no attribute values")
        for attr, op, _ in cmd.attrs:
            if op != "=" and cmd.verb != "unset":
                raise UsageError(f"{attr} {op}: batchd's qmgr supports only '='")
        handler(cmd)

    # -- list -----------------------------------------------------------------------

    def _check_server_name(self, name: str | None, extra: tuple[str, ...] = ()) -> dict[str, Any]:
        server = self.server()
        if name is not None and name not in (server["name"], *extra):
            raise UsageError(f"Unknown server {name}")
        return server

    def _list_server(self, cmd: Command) -> None:
        server = self._check_server_name(cmd.name)
        self.emit(server, fmt.list_server(server))

    def _list_sched(self, cmd: Command) -> None:
        if cmd.name is not None:
            self._check_server_name(cmd.name, ("default",))
        sched = self.client.get("/scheduler")
        if self.as_json:
            self.emit(sched, None)
        else:
            self.emit(sched, fmt.list_sched(sched, self.server()["name"]))

    def _list_queue(self, cmd: Command) -> None:
        if cmd.name:
            queue = self._get_named("queue", f"/queues/{quote(cmd.name)}", cmd.name)
            self.emit(queue, fmt.list_queues([queue]))
        else:
            data = self.client.get("/queues")
            self.emit(data, fmt.list_queues(data["queues"]))

    def _list_node(self, cmd: Command) -> None:
        if cmd.name:
            node = self._get_named("node", f"/nodes/{quote(cmd.name)}", cmd.name)
            self.emit(node, fmt.list_nodes([node]))
        else:
            data = self.client.get("/nodes")
            self.emit(data, fmt.list_nodes(data["nodes"]))

    def _get_named(self, kind: str, path: str, name: str) -> dict[str, Any]:
        try:
            found: dict[str, Any] = self.client.get(path)
            return found
        except ApiError as exc:
            if exc.status == 404:
                raise ApiError(404, exc.error, f"Unknown {kind} {name}") from None
            raise

    # -- print ----------------------------------------------------------------------

    def _print_server(self, cmd: Command) -> None:
        server = self._check_server_name(cmd.name)
        queues = self.client.get("/queues")
        made = [q for q in queues["queues"] if not RESV_QUEUE.fullmatch(q["name"])]
        self.emit({"server": server, "queues": queues}, fmt.print_server(server, made))

    def _print_queue(self, cmd: Command) -> None:
        if cmd.name:
            queue = self._get_named("queue", f"/queues/{quote(cmd.name)}", cmd.name)
            self.emit(queue, fmt.print_queue(queue))
        else:
            data = self.client.get("/queues")
            made = [q for q in data["queues"] if not RESV_QUEUE.fullmatch(q["name"])]
            self.emit(data, [line for q in made for line in fmt.print_queue(q)])

    def _print_sched(self, cmd: Command) -> None:
        if cmd.name is not None:
            self._check_server_name(cmd.name, ("default",))
        sched = self.client.get("/scheduler")
        self.emit(sched, fmt.print_sched(sched))

    # -- queues: create, set, delete ------------------------------------------------

    def _queue_request(self, name: str, send: Any) -> None:
        try:
            send()
        except ApiError as exc:
            errno = PBS_ERRNO.get(exc.error, 15014)
            raise QmgrServerError(name, exc.message, errno) from None

    def _queue_name(self, cmd: Command) -> str:
        if not cmd.name:
            raise UsageError(f"{cmd.verb} queue: name the queue")
        return cmd.name

    def _create_queue(self, cmd: Command) -> None:
        name = self._queue_name(cmd)
        body = {"name": name, **queue_fields(name, cmd.attrs)}
        self._queue_request(name, lambda: self.client.post("/queues", body))

    def _set_queue(self, cmd: Command) -> None:
        name = self._queue_name(cmd)
        if not cmd.attrs:
            raise UsageError("set queue: give ATTR = VALUE")
        body = queue_fields(name, cmd.attrs)
        self._queue_request(name, lambda: self.client.patch(f"/queues/{quote(name)}", body))

    def _unset_queue(self, cmd: Command) -> None:
        name = self._queue_name(cmd)
        body = {unset_limit("queue", attr): None for attr, _, _ in cmd.attrs}
        self._queue_request(name, lambda: self.client.patch(f"/queues/{quote(name)}", body))

    def _unset_server(self, cmd: Command) -> None:
        if cmd.name is not None:
            self._check_server_name(cmd.name)
        body = {unset_limit("server", attr): None for attr, _, _ in cmd.attrs}
        self.client.patch("/server", body)

    def _delete_queue(self, cmd: Command) -> None:
        name = self._queue_name(cmd)
        self._queue_request(name, lambda: self.client.delete(f"/queues/{quote(name)}"))

    # -- set ------------------------------------------------------------------------

    def _set_server(self, cmd: Command) -> None:
        if cmd.name is not None:
            self._check_server_name(cmd.name)
        if not cmd.attrs:
            raise UsageError("set server: give ATTR = VALUE")
        policy = None
        attrs: dict[str, Any] = {}
        grid: dict[str, Any] = {}
        for attr, _, value in cmd.attrs:
            if attr in SERVER_BOOLS:
                attrs[attr] = server_bool(attr, value)
            elif attr in LIMIT_FIELDS:
                attrs[attr] = server_limit(attr, value)
            elif attr in SERVER_ATTRS:
                attrs[attr] = value
            elif attr in POLICY_ATTRS:
                policy = value
            elif attr == "grid_structure":
                grid["structure"] = value
            elif attr.startswith(GRID_PARAM) and len(attr) > len(GRID_PARAM):
                grid.setdefault("params", {})[attr[len(GRID_PARAM) :]] = value
            elif attr == "grid_params":
                grid.setdefault("params", {}).update(grid_params(value))
            else:
                raise UsageError(
                    f"set server {attr}: batchd sets only scheduling, scheduler_policy, "
                    "job_history_duration, query_other_jobs, max_run, max_user_run, "
                    "max_queued, max_user_queued, grid_structure, grid_param.KEY and "
                    "grid_params on the server (policy parameters: set sched PARAM = VALUE)"
                )
        if attrs:
            self.client.patch("/server", attrs)
        if policy is not None:
            self.client.patch("/scheduler", {"policy": policy})
        if grid:
            self.client.patch("/scheduler", {"grid": grid})

    def _set_sched(self, cmd: Command) -> None:
        if cmd.name is not None:
            self._check_server_name(cmd.name, ("default",))
        if not cmd.attrs:
            raise UsageError("set sched: give PARAM = VALUE")
        policy = None
        raw: list[tuple[str, str]] = []
        for attr, _, value in cmd.attrs:
            if attr in POLICY_ATTRS:
                policy = value
            else:
                raw.append((attr, value))
        body: dict[str, Any] = {}
        if policy is not None:
            body["policy"] = policy
        if raw:
            sched = self.client.get("/scheduler")
            target = policy if policy is not None else sched["policy"]
            body["params"] = {param_name(a, target, sched): v for a, v in raw}
        self.client.patch("/scheduler", body)

    def _set_node(self, cmd: Command) -> None:
        if not cmd.name:
            raise UsageError("set node: name the node: set node NAME state = offline")
        body: dict[str, Any] = {}
        for attr, _, value in cmd.attrs:
            if attr == "state":
                state = NODE_STATES.get(value.lower())
                if state is None:
                    raise UsageError(
                        f"state = {value}: batchd nodes can be offline, online or down"
                    )
                body["state"] = state
            elif attr == "comment":
                body["comment"] = value
            else:
                raise UsageError(f"set node {attr}: batchd sets only state and comment on nodes")
        if "state" not in body:
            raise UsageError("set node: give state = offline|online|down")
        try:
            self.client.patch(f"/nodes/{quote(cmd.name)}", body)
        except ApiError as exc:
            if exc.status == 404:
                raise ApiError(404, exc.error, f"Unknown node {cmd.name}") from None
            raise


def server_limit(attr: str, value: str) -> int:
    if not value.isdigit():
        raise UsageError(f"set server {attr}: expected a number of jobs, got {value!r}")
    return int(value)


def unset_limit(obj: str, attr: str) -> str:
    """The API's field of a limit ``unset`` names (the only attributes batchd unsets)."""
    field = ATTRS.get(attr) if obj == "queue" else attr
    if field not in LIMIT_FIELDS:
        raise UsageError(
            f"unset {obj} {attr}: batchd unsets only max_run, max_user_run, max_queued "
            "and max_user_queued"
        )
    return field


def grid_params(text: str) -> dict[str, str]:
    """``"scheduler=easy select=bestfit-free"`` -> dict (blank-separated KEY=VALUE)."""
    out: dict[str, str] = {}
    for item in text.split():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"grid_params: {item!r}: expected KEY=VALUE (blank-separated)")
        out[key] = value
    return out


def param_name(attr: str, policy: str, sched: dict[str, Any]) -> str:
    """A scheduler parameter's name: ``dynp_decider`` -> ``decider`` when ``decider`` is a
    parameter of the policy and ``dynp`` a policy family (the name before '-', or the
    whole name with '-' as '_'). Anything else is sent as given."""
    policies = sched.get("policies") or []
    known: set[str] = set()
    for p in policies:
        if p.get("name") == policy:
            known = set(p.get("params") or [])
    if attr in known or not known:
        return attr
    families = set()
    for p in policies:
        name = str(p.get("name", ""))
        families.add(name.split("-")[0])
        families.add(name.replace("-", "_"))
    for fam in sorted(families, key=len, reverse=True):
        if fam and attr.startswith(fam + "_") and attr[len(fam) + 1 :] in known:
            return attr[len(fam) + 1 :]
    return attr


def build_parser() -> Parser:
    p = Parser(
        PROG,
        usage="qmgr [-F json] [-c 'command']   (commands from stdin without -c)",
        description="Show and change batchd's server, scheduler, queues and nodes.",
    )
    p.add_argument("-c", dest="command", metavar="COMMAND", help="one command, e.g. 'list sched'")
    add_json_flag(p)
    return p


def execute_line(session: Session, line: str) -> int:
    """One command; its failure is one line on stderr and an exit code."""
    try:
        session.execute(parse(line))
    except (QmgrSyntaxError, UsageError) as exc:
        say(PROG, str(exc))
        return EXIT_USAGE
    except QmgrServerError as exc:
        sys.stderr.write("".join(escape(line) + "\n" for line in exc.lines()))
        return EXIT_REFUSED
    except ApiError as exc:
        say(PROG, exc.message)
        return EXIT_REFUSED
    return 0


def _main(argv: list[str]) -> int:
    ns = build_parser().parse_args(argv)
    session = Session(Client(), wants_json(ns.format))
    if ns.command is not None:
        try:
            return execute_line(session, ns.command)
        except Quit:
            return 0
    code = 0
    interactive = sys.stdin.isatty()
    while True:
        if interactive:
            sys.stdout.write("Qmgr: ")
            sys.stdout.flush()
        line = sys.stdin.readline()
        if not line:
            if interactive:
                sys.stdout.write("\n")
            break
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            rc = execute_line(session, text)
        except Quit:
            break
        if rc:
            code = rc
    return code


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
