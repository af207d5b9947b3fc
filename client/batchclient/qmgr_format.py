"""qmgr's output: ``list`` blocks and ``print`` command lines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .attrs import (
    Attrs,
    limit_attrs,
    node_attrs,
    pbs_bool,
    queue_attrs,
    sched_attrs,
    sched_param,
    server_attrs,
)
from .hints import Any
from .text import escape
from .timefmt import hms

Obj = Mapping[str, Any]
READ_ONLY_QUEUE = ("total_jobs", "state_count", "window_open", "window_next_change")


def list_block(kind: str, name: str, attrs: Attrs) -> list[str]:
    """``Queue workq`` then ``    attr = value`` lines, then a blank line (all escaped)."""
    lines = [f"    {escape(k)} = {escape(v)}" for k, v in attrs]
    return [f"{kind} {escape(name)}", *lines, ""]


def list_server(server: Obj) -> list[str]:
    return list_block("Server", server["name"], server_attrs(server))


def list_sched(sched: Obj, name: str) -> list[str]:
    return list_block("Sched", name, sched_attrs(sched))


def list_queues(queues: Sequence[Obj]) -> list[str]:
    return [line for q in queues for line in list_block("Queue", q["name"], queue_attrs(q))]


def list_nodes(nodes: Sequence[Obj]) -> list[str]:
    return [line for n in nodes for line in list_block("Node", n["name"], node_attrs(n))]


def quote_value(value: str) -> str:
    """qmgr quotes values with blanks or commas; unprintable characters are escaped."""
    value = escape(value)
    if value == "" or any(c.isspace() or c in ",'\"" for c in value):
        return '"' + value.replace('"', "'") + '"'
    return value


def print_queue(queue: Obj) -> list[str]:
    name = escape(queue["name"])
    lines = ["#", f"# Create and define queue {name}", "#", f"create queue {name}"]
    for key, value in queue_attrs(queue):
        if key not in READ_ONLY_QUEUE:
            lines.append(f"set queue {name} {escape(key)} = {quote_value(value)}")
    return lines


def print_server(server: Obj, queues: Sequence[Obj]) -> list[str]:
    lines = ["#", "# Create queues and set their attributes.", "#"]
    for q in queues:
        lines += print_queue(q)
    lines += ["#", "# Set server attributes.", "#"]
    settings = [
        ("scheduling", pbs_bool(server.get("scheduling", True))),
        ("default_queue", server["default_queue"]),
        ("scheduler_policy", server["policy"]),
        ("node_fail_requeue", pbs_bool(server.get("node_fail") == "requeue")),
    ]
    if server.get("job_history_duration") is not None:
        settings.append(("job_history_duration", hms(server["job_history_duration"])))
    if server.get("query_other_jobs") is not None:
        settings.append(("query_other_jobs", pbs_bool(server["query_other_jobs"])))
    settings += limit_attrs(server)
    lines += [f"set server {k} = {quote_value(str(v))}" for k, v in settings]
    return lines


def print_sched(sched: Obj) -> list[str]:
    lines = ["#", "# Set scheduler attributes.", "#"]
    lines.append(f"set sched scheduler_policy = {quote_value(sched['policy'])}")
    for key, value in sorted((sched.get("params") or {}).items()):
        name = sched_param(sched["policy"], key)
        lines.append(f"set sched {escape(name)} = {quote_value(str(value))}")
    grid = sched.get("grid")
    if grid:
        lines.append(f"set server grid_structure = {quote_value(grid['structure'])}")
        for key, value in sorted((grid.get("params") or {}).items()):
            lines.append(f"set server grid_param.{escape(key)} = {quote_value(str(value))}")
    return lines
