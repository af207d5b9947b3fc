"""API objects as PBS attribute lists: ``[(name, value), ...]`` in the order shown.

Shared by ``qstat -f``, ``qstat -Qf``/``-Bf``, ``qnodes`` and ``qmgr list``.
Only attributes that are set are listed.
"""

from __future__ import annotations

from collections.abc import Mapping

from .hints import Any
from .jobattrs import format_utility
from .timefmt import ctime, hms

Attrs = list[tuple[str, str]]


def pbs_bool(value: object) -> str:
    return "True" if value else "False"


def server_of(job_id: str) -> str:
    return job_id.partition(".")[2]


def state_count(counts: Mapping[str, int]) -> str:
    """PBS's ``state_count``: ``Transit:0 Queued:4 Held:0 Waiting:0 Running:3 Exiting:0 Begun:0``."""
    c = {k: int(v) for k, v in counts.items()}
    return (
        f"Transit:{c.get('T', 0)} Queued:{c.get('Q', 0)} Held:{c.get('H', 0)} "
        f"Waiting:{c.get('W', 0)} Running:{c.get('R', 0)} Exiting:{c.get('E', 0)} Begun:0"
    )


def _two_places(value: float) -> str:
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def job_attrs(job: Mapping[str, Any]) -> Attrs:
    server = server_of(job["id"])
    owner = job["owner"]
    out: Attrs = [
        ("Job_Name", job["name"]),
        ("Job_Owner", f"{owner}@{server}" if server else owner),
        ("job_state", job["state"]),
        ("queue", job["queue"]),
    ]
    if server:
        out.append(("server", server))
    if job.get("account"):
        out.append(("Account_Name", job["account"]))
    out += resource_list(job)
    out += _mold_attrs(job)
    out += resources_used(job)
    if job.get("exec_vnode"):
        out.append(("exec_host", exec_host(job["exec_vnode"])))
        out.append(("exec_vnode", job["exec_vnode"]))
    elif job.get("exec_host"):
        # A grid site's hosts are MACHINE/NODE already (no CPU index then).
        hosts = (h if "/" in h else f"{h}/0" for h in job["exec_host"])
        out.append(("exec_host", "+".join(hosts)))
    out.append(("Priority", str(job["priority"])))
    out.append(("Hold_Types", job.get("hold_types") or "n"))
    out += _run_attrs(job)
    if job.get("depend"):
        out.append(("depend", job["depend"]))
    for key, name in (
        ("ctime", "ctime"),
        ("qtime", "qtime"),
        ("etime", "etime"),
        ("stime", "stime"),
        ("end_time", "obittime"),
        ("exec_time", "Execution_Time"),
        ("est_start", "estimated.start_time"),
    ):
        if job.get(key) is not None:
            out.append((name, ctime(job[key])))
    if job.get("comment"):
        out.append(("comment", job["comment"]))
    if job.get("exit_status") is not None:
        out.append(("Exit_status", str(job["exit_status"])))
    if job.get("utility"):
        out.append(("utility", format_utility(job["utility"])))
        if job.get("utility_now") is not None:
            out.append(("utility.now", _two_places(job["utility_now"])))
    if job.get("variables"):
        out.append(("Variable_List", ",".join(f"{k}={v}" for k, v in job["variables"].items())))
    return out + array_attrs(job)


def _kb(value: float) -> str:
    return f"{int(value) // 1024}kb"


def resources_used(job: Mapping[str, Any]) -> Attrs:
    """``resources_used.*``: the walltime so far; of a job that ran for real, what its
    processes used (cput, mem and vmem in kb, cpupercent, ncpus), as MoM reports it."""
    used = job.get("resources_used")
    if not used:
        elapsed = job.get("elapsed")
        return [] if elapsed is None else [("resources_used.walltime", hms(elapsed))]
    walltime = float(used.get("walltime", 0))
    cput = float(used.get("cput", 0))
    ncpus = (job.get("resource_list") or {}).get("ncpus", str(job.get("nodes", 1)))
    return [
        ("resources_used.cpupercent", str(int(100 * cput / walltime) if walltime > 0 else 0)),
        ("resources_used.cput", hms(int(cput))),
        ("resources_used.mem", _kb(used.get("mem", 0))),
        ("resources_used.ncpus", str(ncpus)),
        ("resources_used.vmem", _kb(used.get("vmem", 0))),
        ("resources_used.walltime", hms(int(walltime))),
    ]


def _run_attrs(job: Mapping[str, Any]) -> Attrs:
    """Where a job that runs for real writes, its mail options (kept, no mail is sent), its
    shell, as whom it runs; Rerunable."""
    out: Attrs = []
    for key, name in (
        ("error_path", "Error_Path"),
        ("join_path", "Join_Path"),
        ("mail_points", "Mail_Points"),
        ("mail_users", "Mail_Users"),
        ("output_path", "Output_Path"),
        ("shell", "Shell_Path_List"),
        ("euser", "euser"),
        ("egroup", "egroup"),
    ):
        if job.get(key):
            out.append((name, str(job[key])))
    out.append(("Rerunable", pbs_bool(job.get("rerunable", True))))
    return out


def array_attrs(job: Mapping[str, Any]) -> Attrs:
    """A job array's range and subjob counts, or a subjob's array and index."""
    if job.get("array"):
        out: Attrs = [("array", "True")]
        for key in ("array_state_count", "array_indices_submitted", "array_indices_remaining"):
            out.append((key, str(job[key])))
        if job.get("max_run_subjobs") is not None:
            out.append(("max_run_subjobs", str(job["max_run_subjobs"])))
        return out
    if job.get("array_id"):
        return [("array_id", job["array_id"]), ("array_index", str(job["array_index"]))]
    return []


def resource_list(job: Mapping[str, Any]) -> Attrs:
    """``Resource_List.*`` in name order, as qstat -f shows them."""
    given = job.get("resource_list")
    if given:
        items = {**given, "walltime": hms(job["walltime"])}
    else:  # a daemon before resources: whole nodes of one CPU
        nodes = str(job["nodes"])
        items = {"ncpus": nodes, "nodect": nodes, "select": nodes, "walltime": hms(job["walltime"])}
    return [(f"Resource_List.{k}", str(items[k])) for k in sorted(items)]


def exec_host(exec_vnode: str) -> str:
    """``exec_host`` from ``exec_vnode``: ``host/N*C`` for each chunk, N counting the
    job's chunks on the host from 0 and C its CPUs (left out when 1)."""
    hosts: list[str] = []
    index: dict[str, int] = {}
    for part in exec_vnode.split("+"):
        host, *res = part.strip("()").split(":")
        ncpus = next((r.partition("=")[2] for r in res if r.startswith("ncpus=")), "1")
        if "/" in host:  # a grid site's MACHINE/NODE: no CPU index
            hosts.append(host)
            continue
        n = index.get(host, 0)
        index[host] = n + 1
        hosts.append(f"{host}/{n}" + (f"*{ncpus}" if ncpus != "1" else ""))
    return "+".join(hosts)


def _mold_attrs(job: Mapping[str, Any]) -> Attrs:
    """A moldable job: its range and model; the width it is planned with while it waits
    (``Resource_List.nodect`` is the requested width then, the chosen one once run)."""
    if job.get("nodes_min") is None or job.get("nodes_max") is None:
        return []
    out: Attrs = [
        ("Resource_List.nodes", f"{job['nodes_min']}-{job['nodes_max']}"),
        ("Resource_List.speedup", str(job.get("speedup") or "fixed")),
    ]
    if job.get("planned_nodes") is not None:
        out.append(("planned_nodect", str(job["planned_nodes"])))
    elif job.get("stime") is not None:
        out.append(("chosen_nodect", str(job["nodes"])))
    return out


def queue_attrs(queue: Mapping[str, Any]) -> Attrs:
    out: Attrs = [
        ("queue_type", queue.get("queue_type") or "Execution"),
        ("total_jobs", str(queue.get("total", 0))),
        ("state_count", state_count(queue.get("counts") or {})),
    ]
    if queue.get("max_nodes") is not None:
        out.append(("resources_max.nodect", str(queue["max_nodes"])))
    if queue.get("max_walltime") is not None:
        out.append(("resources_max.walltime", hms(queue["max_walltime"])))
    if queue.get("default_walltime") is not None:
        out.append(("resources_default.walltime", hms(queue["default_walltime"])))
    out += limit_attrs(queue)
    out += [("enabled", pbs_bool(queue["enabled"])), ("started", pbs_bool(queue["started"]))]
    if queue.get("window") is not None:  # daemons before queue windows do not send it
        out += [("window", queue["window"]), ("window_open", pbs_bool(queue["window_open"]))]
        if queue.get("window_next_change") is not None:
            out.append(("window_next_change", ctime(queue["window_next_change"])))
    return out


def node_attrs(node: Mapping[str, Any]) -> Attrs:
    name = node["name"]
    jobs = node.get("jobs") or []
    available = node.get("resources_available") or {"host": name, "ncpus": "1"}
    assigned = node.get("resources_assigned") or {"ncpus": "1" if jobs else "0"}
    out: Attrs = [
        ("Mom", name),
        ("ntype", "PBS"),
        ("state", node["state"]),
        ("pcpus", str(available.get("ncpus", "1"))),
    ]
    if jobs:
        # JOB/CORE for each core held (daemons before shared nodes send the jobs alone).
        cores = node.get("job_cores") or [f"{j}/0" for j in jobs]
        out.append(("jobs", ", ".join(cores)))
    if node.get("reservation"):
        out.append(("resv", node["reservation"]))
    out += [(f"resources_available.{k}", str(v)) for k, v in sorted(available.items())]
    out += [(f"resources_assigned.{k}", str(v)) for k, v in sorted(assigned.items())]
    if node.get("comment"):
        out.append(("comment", node["comment"]))
    out += [("resv_enable", "True"), ("sharing", node.get("sharing") or "default_excl")]
    return out


# The run and queued limits of a queue or the server, in PBS's names (shown when set).
LIMITS = ("max_run", "max_user_run", "max_queued", "max_user_queued")


def limit_attrs(obj: Mapping[str, Any]) -> Attrs:
    return [(k, str(obj[k])) for k in LIMITS if obj.get(k) is not None]


def server_state(server: Mapping[str, Any]) -> str:
    """PBS's server_state: Idle while scheduling is off, Active otherwise."""
    return "Active" if server.get("scheduling", True) else "Idle"


def server_attrs(server: Mapping[str, Any]) -> Attrs:
    counts = {k: v for k, v in (server.get("jobs") or {}).items() if k != "F"}
    out: Attrs = [
        ("server_state", server_state(server)),
        ("scheduling", pbs_bool(server.get("scheduling", True))),
        ("default_queue", server["default_queue"]),
        ("scheduler_policy", server["policy"]),
        ("node_fail_requeue", pbs_bool(server.get("node_fail") == "requeue")),
    ]
    if server.get("overflow") is not None:
        out.append(("window_overflow", server["overflow"]))
    if server.get("job_history_duration") is not None:
        out.append(("job_history_duration", hms(server["job_history_duration"])))
    if server.get("query_other_jobs") is not None:
        out.append(("query_other_jobs", pbs_bool(server["query_other_jobs"])))
    out += limit_attrs(server)
    out += [
        ("total_jobs", str(sum(int(v) for v in counts.values()))),
        ("state_count", state_count(counts)),
        ("resources_available.nodect", str(server["nodes"])),
        ("machine", server["machine"]),
        ("clock", server["clock"]),
        ("speed", f"{float(server['speed']):g}"),
        ("time_now", ctime(server["now"])),
        ("started", ctime(server["started"])),
        ("pbs_version", f"batchd {server['version']}"),
    ]
    for key, value in sorted((server.get("replay") or {}).items()):
        out.append((f"replay.{key}", _scalar(value)))
    return out


def sched_param(policy: str, key: str) -> str:
    """A policy parameter as qmgr names it: with the policy's prefix (``dynp_decider``),
    the name ``set sched`` takes."""
    return f"{policy.replace('-', '_')}_{key}"


def sched_attrs(sched: Mapping[str, Any]) -> Attrs:
    policy = sched["policy"]
    out: Attrs = [("scheduler_policy", policy)]
    policy_params = sorted((sched.get("params") or {}).items())
    out += [(sched_param(policy, k), str(v)) for k, v in policy_params]
    names = [p["name"] for p in sched.get("policies") or []]
    if names:
        out.append(("available_policies", ", ".join(names)))
    grid = sched.get("grid")
    if grid:
        out.append(("grid_structure", grid["structure"]))
        params = {**(grid.get("in_force") or {}), **(grid.get("params") or {})}
        out += [(f"grid_param.{k}", str(v)) for k, v in sorted(params.items())]
    out.append(("policy_switches", str(len(sched.get("switches") or []))))
    for key, value in sorted((sched.get("report") or {}).items()):
        out.append((f"report.{key}", _scalar(value)))
    return out


def _scalar(value: object) -> str:
    if isinstance(value, bool):
        return pbs_bool(value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={_scalar(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(_scalar(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return "" if value is None else str(value)
