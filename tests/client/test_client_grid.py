"""The PBS commands against a real grid daemon: qstat -f shows the machine, qnodes groups
nodes by machine, qmgr changes the structure; after kill -9 every job is back on its
machine (docs/grid.md, "Live")."""

from __future__ import annotations

from pathlib import Path

from test_client_daemon import run

from daemon_proc import Daemon

SITE = """
[[machine]]
name = "a"
nodes = 4
node_prefix = "a"

[[machine]]
name = "b"
nodes = 8
node_prefix = "b"

[[queue]]
name = "workq"
default_walltime = "01:00:00"

[grid]
structure = "hierarchical"

[grid.params]
select = "equalutil-max"
local = "fcfs-easy"
"""


def attrs(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition(" = ")
        if sep:
            out[key] = value
    return out


def qsub(d: Daemon, nodes: int) -> str:
    done = run(d, "qsub", "-l", f"nodes={nodes},walltime=02:00:00", stdin="sleep 1\n")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_grid_daemon_through_the_pbs_commands_and_a_crash(tmp_path: Path) -> None:
    conf = tmp_path / "grid.toml"
    conf.write_text(SITE)
    d = Daemon(tmp_path, "--speed", "1", config=str(conf)).start()
    try:
        # j1 -> a (tie at 0), j2 -> b (only b fits 8), j3 -> a (tie at 1.0): waits there.
        j1, j2, j3 = qsub(d, 4), qsub(d, 8), qsub(d, 2)
        full = attrs(run(d, "qstat", "-f", j1).stdout)
        assert full["exec_host"] == "a/a001+a/a002+a/a003+a/a004"
        assert attrs(run(d, "qstat", "-f", j2).stdout)["exec_host"].startswith("b/b001+b/b002")
        waiting = attrs(run(d, "qstat", "-f", j3).stdout)
        assert waiting["job_state"] == "Q" and "exec_host" not in waiting
        assert d.call("GET", f"/jobs/{j3}")[1]["machine"] == "a"
        # qnodes: one group per machine.
        nodes = run(d, "qnodes").stdout.splitlines()
        heads = [line for line in nodes if line.startswith("# machine")]
        assert heads == [
            "# machine a (grid hierarchical): 4 nodes, 0 free",
            "# machine b (grid hierarchical): 8 nodes, 0 free",
        ]
        assert nodes.index(heads[1]) > nodes.index("a004")
        summary = run(d, "qnodes", "-S").stdout
        assert summary.count("vnode ") == 2
        # qstat -Q: the queue, its jobs.
        assert "workq" in run(d, "qstat", "-Q").stdout
        # qmgr: the grid as attributes; a local policy for b, then a bad value is refused.
        sched = run(d, "qmgr", "-c", "list sched").stdout
        assert "grid_structure = hierarchical" in sched
        assert "grid_param.select = equalutil-max" in sched
        done = run(d, "qmgr", "-c", "set server grid_param.local.b = fcfs")
        assert done.returncode == 0, done.stderr
        bad = run(d, "qmgr", "-c", "set server grid_param.select = nope")
        assert bad.returncode != 0 and "select='nope'" in bad.stderr
        printed = run(d, "qmgr", "-c", "print sched").stdout
        assert "set server grid_param.local.b = fcfs" in printed
        # j2 leaves: b is empty, j3 stays on a (a hierarchical machine is kept).
        assert run(d, "qdel", j2).returncode == 0
        assert d.call("GET", f"/jobs/{j3}")[1]["machine"] == "a"
        before = {j["id"]: j for j in d.call("GET", "/jobs")[1]["jobs"]}
        d.crash()
        d.start()
        after = {j["id"]: j for j in d.call("GET", "/jobs")[1]["jobs"]}
        assert set(after) == set(before) == {j1, j3}
        for jid in (j1, j3):
            keep = ("state", "machine", "exec_host", "stime")
            assert {k: after[jid][k] for k in keep} == {k: before[jid][k] for k in keep}
        assert after[j3]["state"] == "Q" and after[j3]["machine"] == "a"
        sched_after = d.call("GET", "/scheduler")[1]
        assert sched_after["grid"]["params"]["local.b"] == "fcfs"
        # A live change of the structure survives the restart too.
        done = run(
            d, "qmgr", "-c", "set server grid_structure = central, grid_param.select = bestfit-max"
        )
        assert done.returncode == 0, done.stderr
        assert d.stop() == 0
        d.start()
        grid = d.call("GET", "/scheduler")[1]["grid"]
        assert grid == {
            "structure": "central",
            "params": {"select": "bestfit-max"},
            "in_force": {"scheduler": "easy", "select": "bestfit-max"},
            "structures": ["central", "multisite", "hierarchical", "decentral", "pool"],
        }
        # central M_max: j3 was given a machine at its (re-)arrival, and keeps it.
        assert d.call("GET", f"/jobs/{j3}")[1]["machine"] is not None
    finally:
        d.stop()


def test_a_multisite_job_comes_back_whole_after_kill_9(tmp_path: Path) -> None:
    """Multisite, min_part 2: j1 (2 nodes) fits a (bestfit-free: 2 left, b 6); j2 (10
    nodes) fits no machine: b's 8 + a's 2, both parts from the same second. After kill -9
    j2 runs on every part's machine and nodes, still one job; qdel ends every part."""
    conf = tmp_path / "grid.toml"
    conf.write_text(
        SITE.replace('structure = "hierarchical"', 'structure = "multisite"').replace(
            'select = "equalutil-max"\nlocal = "fcfs-easy"',
            'select = "bestfit-free"\nmin_part = "2"\noverhead = "3"\np = "0.5"',
        )
    )
    d = Daemon(tmp_path, "--speed", "1", config=str(conf)).start()
    try:
        j1, j2 = qsub(d, 2), qsub(d, 10)
        wide = "+".join([f"a/a00{i}" for i in (3, 4)] + [f"b/b00{i}" for i in range(1, 9)])
        shown = run(d, "qstat", "-f", j2).stdout
        assert attrs(shown)["job_state"] == "R"
        assert f"exec_host={wide}" in "".join(shown.split())  # long lines are folded
        before = d.call("GET", f"/jobs/{j2}")[1]
        assert before["walltime"] == 3 * 7200  # (1 + 0.5) * 2 parts
        d.crash()
        d.start()
        after = d.call("GET", f"/jobs/{j2}")[1]
        keep = ("state", "machine", "exec_host", "stime", "walltime", "nodes")
        assert {k: after[k] for k in keep} == {k: before[k] for k in keep}
        held = {n["name"] for n in d.call("GET", "/nodes")[1]["nodes"] if j2 in n["jobs"]}
        assert held == {"a003", "a004", *(f"b00{i}" for i in range(1, 9))}
        assert [j["id"] for j in d.call("GET", "/jobs")[1]["jobs"]] == [j1, j2]
        assert run(d, "qdel", j2).returncode == 0
        nodes = d.call("GET", "/nodes")[1]["nodes"]
        assert {n["name"] for n in nodes if n["jobs"]} == {"a001", "a002"}
        gone = d.call("GET", f"/jobs/{j2}")[1]
        assert (gone["state"], gone["outcome"], gone["exec_host"]) == (
            "F",
            "cancelled",
            wide.split("+"),
        )
    finally:
        d.stop()
