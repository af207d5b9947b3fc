"""The PBS commands against a real ``batchd serve``: what a user types and sees."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from daemon_proc import ROOT, Daemon

BIN = Path(sys.executable).parent

SITE = """
[[machine]]
name = "tiny"
nodes = 4

[server]
policy = "fcfs-easy"

[[queue]]
name = "workq"
default_walltime = "01:00:00"

[[queue]]
name = "short"
max_nodes = 2
max_walltime = "00:30:00"
"""


def run(d: Daemon, *argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, BATCHD_SOCKET=str(d.socket))
    env.pop("BATCHD_URL", None)
    return subprocess.run(
        [str(BIN / argv[0]), *argv[1:]], input=stdin, capture_output=True, text=True,
        env=env, cwd=ROOT, timeout=30,
    )  # fmt: skip


@pytest.fixture
def daemon(tmp_path: Path):
    conf = tmp_path / "tiny.toml"
    conf.write_text(SITE)
    # Speed 1: nothing ends on its own during the test.
    with Daemon(tmp_path, "--speed", "1", config=str(conf)) as d:
        yield d


def test_a_users_session(daemon: Daemon) -> None:
    d = daemon
    big = run(d, "qsub", "-l", "nodes=4,walltime=02:00:00", "-N", "big", stdin="sleep 1\n")
    assert big.returncode == 0, big.stderr
    assert re.fullmatch(r"1\.tiny\n", big.stdout)
    wait = run(d, "qsub", "-l", "select=2", "-l", "walltime=00:10:00", "-q", "short", "-N", "w",
               stdin="true\n")  # fmt: skip
    assert wait.stdout == "2.tiny\n"
    dep = run(d, "qsub", "-W", "depend=afterok:2", "-N", "after", stdin="true\n")
    assert dep.stdout == "3.tiny\n"

    table = run(d, "qstat").stdout.splitlines()
    assert table[0].split() == ["Job", "id", "Name", "User", "Time", "Use", "S", "Queue"]
    rows = {line.split()[0]: line.split() for line in table[2:]}
    assert rows["1.tiny"][1] == "big" and rows["1.tiny"][4] == "R"
    assert rows["2.tiny"][4] == "Q" and rows["2.tiny"][5] == "short"
    assert rows["3.tiny"][4] == "H"  # held for its dependency

    # The planned start of the queued job is the end of the running one (2 h later).
    est = json.loads(run(d, "qstat", "-F", "json").stdout)
    jobs = {j["id"]: j for j in est["jobs"]}
    assert jobs["2.tiny"]["est_start"] == jobs["1.tiny"]["stime"] + 7200

    full = run(d, "qstat", "-f", "2.tiny").stdout
    assert full.startswith("Job Id: 2.tiny\n")
    assert "    Resource_List.walltime = 00:10:00\n" in full
    assert "    queue = short\n" in full
    assert "    comment = Not Running: Insufficient amount of resource: nodes\n" in full

    # Refusals: one line, nothing changed.
    too_big = run(d, "qsub", "-q", "short", "-l", "nodes=3", stdin="true\n")
    assert too_big.returncode != 0 and too_big.stdout == ""
    assert too_big.stderr.count("\n") == 1 and "resources_max.nodect = 2" in too_big.stderr
    bad = run(d, "qsub", "-l", "walltime=1:99:00", stdin="true\n")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    unknown = run(d, "qstat", "99")
    assert unknown.returncode == 153 and "Unknown Job Id 99" in unknown.stderr
    after = json.loads(run(d, "qstat", "-x", "-F", "json").stdout)
    assert len(after["jobs"]) == 3

    # Hold, alter, release, delete.
    assert run(d, "qhold", "2.tiny").returncode == 0
    assert rows_of(d)["2.tiny"][4] == "H"
    assert run(d, "qalter", "-l", "walltime=00:20:00", "-N", "renamed", "2.tiny").returncode == 0
    assert run(d, "qrls", "2.tiny").returncode == 0
    rows = rows_of(d)
    assert rows["2.tiny"][1] == "renamed" and rows["2.tiny"][4] == "Q"
    assert run(d, "qdel", "1.tiny").returncode == 0
    rows = rows_of(d)
    assert "1.tiny" not in rows and rows["2.tiny"][4] == "R"
    history = run(d, "qstat", "-x").stdout
    assert re.search(r"^1\.tiny +big .* F workq", history, re.M)


def rows_of(d: Daemon) -> dict[str, list[str]]:
    return {line.split()[0]: line.split() for line in run(d, "qstat").stdout.splitlines()[2:]}


def test_nodes_and_qmgr(daemon: Daemon) -> None:
    d = daemon
    assert run(d, "qnodes", "-o", "node002", "-C", "fan").returncode == 0
    out = run(d, "qnodes", "node002").stdout
    assert out.splitlines()[0] == "node002"
    assert "     state = offline\n" in out
    down = run(d, "qnodes", "-l").stdout.split()
    assert down[:2] == ["node002", "offline"]
    assert run(d, "qnodes", "-r", "node002").returncode == 0
    assert "     state = free\n" in run(d, "qnodes", "node002").stdout

    assert run(d, "qmgr", "-c", "set server scheduler_policy = dynp").returncode == 0
    assert run(d, "qmgr", "-c", "set sched dynp_decider = advanced").returncode == 0
    sched = run(d, "qmgr", "-c", "list sched").stdout
    assert "    scheduler_policy = dynp\n" in sched
    assert "    dynp_decider = advanced\n" in sched  # the name set sched took
    wrong = run(d, "qmgr", "-c", "set sched dynp_decider = cleverest")
    assert wrong.returncode != 0 and "decider" in wrong.stderr
    assert "    dynp_decider = advanced\n" in run(d, "qmgr", "-c", "list sched").stdout
    printed = run(d, "qmgr", "-c", "print server").stdout
    assert "create queue short\n" in printed
    assert "set server scheduler_policy = dynp\n" in printed


def test_no_daemon_gives_one_line(tmp_path: Path) -> None:
    env = dict(os.environ, BATCHD_SOCKET=str(tmp_path / "none.sock"))
    out = subprocess.run([str(BIN / "qstat")], capture_output=True, text=True, env=env)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "cannot connect to batchd" in out.stderr


def test_qstat_x_shows_the_history_from_the_state_file(tmp_path: Path) -> None:
    """Finished jobs live in the state file only: qstat -x reads them, across a restart."""
    conf = tmp_path / "tiny.toml"
    conf.write_text(SITE)
    args = ("--speed", "100")
    with Daemon(tmp_path, *args, config=str(conf)) as d:
        for name in ("a", "b", "c"):
            sub = run(d, "qsub", "-N", name, "-l", "walltime=00:02:00", "-v",
                      "BATCHD_RUNTIME=60", stdin="true\n")  # fmt: skip
            assert sub.returncode == 0, sub.stderr
        deadline = time.monotonic() + 20
        while run(d, "qstat").stdout and time.monotonic() < deadline:
            time.sleep(0.2)
        assert run(d, "qstat").stdout == ""
        history = run(d, "qstat", "-x").stdout.splitlines()
        assert [line.split()[1] for line in history[2:]] == ["a", "b", "c"]
        assert {line.split()[4] for line in history[2:]} == {"F"}
        gone = run(d, "qstat", "1")
        assert gone.returncode == 35 and "Job has finished" in gone.stderr
        assert run(d, "qmgr", "-c", "list server").stdout.count("job_history_duration = 336:00:00")
        assert d.stop() == 0
    with Daemon(tmp_path, *args, config=str(conf)) as d:
        assert run(d, "qstat", "-x").stdout.splitlines() == history
        full = run(d, "qstat", "-x", "-f", "2").stdout
        assert full.startswith("Job Id: 2.tiny\n") and "    job_state = F\n" in full
        assert run(d, "qmgr", "-c", "set server job_history_duration = 00:00:01").returncode == 0
        time.sleep(0.5)  # 50 emulated seconds: every finished job is purged
        assert run(d, "qstat", "-x").stdout == ""
        assert run(d, "qstat", "-x", "2").returncode == 153


def test_control_characters_are_refused_and_never_printed_raw(daemon: Daemon) -> None:
    """Escape sequences in a name, a -v value or a node comment: refused, and the refusal
    is printed escaped; wide names keep qstat's columns."""
    d = daemon
    for argv in (
        ["qsub", "-N", "evil\x1b[2J"],
        ["qsub", "-v", "X=a\x07b"],
        ["qsub", "-q", "work\x1bq"],
    ):
        out = run(d, *argv, stdin="true\n")
        assert out.returncode == 1 and out.stdout == "", out
        assert "U+00" in out.stderr and "is not allowed" in out.stderr, out.stderr
        assert out.stderr.isprintable() or out.stderr.endswith("\n"), out.stderr
        assert "\x1b" not in out.stderr and "\x07" not in out.stderr
    marked = run(d, "qmgr", "-c", "set node node001 state = offline, comment = 'a\x1b]0;x\x07'")
    assert marked.returncode == 1 and "comment: U+001B (escape) is not allowed" in marked.stderr
    assert "\x1b" not in marked.stderr
    unknown = run(d, "qmgr", "-c", "list queue q\x1b[31m")
    assert unknown.returncode == 1 and unknown.stderr == "qmgr: Unknown queue q\\x1b[31m\n"
    assert run(d, "qnodes", "-l").stdout == ""  # node001 was not marked
    assert run(d, "qstat", "-x").stdout == ""  # nothing was submitted

    wide = run(d, "qsub", "-N", "計算ジョブ", stdin="true\n")
    assert wide.returncode == 0, wide.stderr
    assert run(d, "qsub", "-N", "plain", stdin="true\n").returncode == 0
    rows = run(d, "qstat").stdout.splitlines()[2:]
    assert [r.split()[1] for r in rows] == ["計算ジョブ", "plain"]
    # The state column is at the same terminal column in both rows: 計算ジョブ is 10 wide.
    assert rows[0].index(" R ") == rows[1].index(" R ") - 5, rows


def test_a_utility_function_from_qsub_to_qstat_and_qalter(daemon: Daemon) -> None:
    d = daemon
    sub = run(d, "qsub", "-h", "-W", "utility=0:1000,1h:800,2:00:00:0", stdin="true\n")
    assert sub.returncode == 0, sub.stderr
    jid = sub.stdout.strip()
    full = run(d, "qstat", "-f", jid).stdout
    assert "    utility = 0:1000,3600:800,7200:0\n" in full
    # Speed 1: a few seconds after submission it is worth just under 1000.
    now = re.search(r"^    utility\.now = ([0-9.]+)$", full, re.M)
    assert now is not None and 990 < float(now[1]) <= 1000
    assert run(d, "qalter", "-W", "utility=0:5,10m:0", jid).returncode == 0
    assert "    utility = 0:5,600:0\n" in run(d, "qstat", "-f", jid).stdout
    assert run(d, "qalter", "-W", "utility=none", jid).returncode == 0
    assert "utility" not in run(d, "qstat", "-f", jid).stdout
    bad = run(d, "qsub", "-W", "utility=0:10,60:12", stdin="true\n")
    assert bad.returncode != 0 and bad.stdout == ""
    assert "point 2 (60:12): values must never increase" in bad.stderr
    form = run(d, "qalter", "-W", "utility=0:10,1x:0", jid)
    assert form.returncode == 2 and "'1x' is not a time" in form.stderr


MOLD_KEYS = (
    "job_state", "Resource_List.nodect", "Resource_List.walltime", "Resource_List.nodes",
    "Resource_List.speedup", "planned_nodect", "chosen_nodect", "exec_host", "stime",
)  # fmt: skip


def mold_attrs(d: Daemon, jid: str) -> dict[str, str]:
    out = run(d, "qstat", "-f", jid)
    assert out.returncode == 0, out.stderr
    pairs = (line.strip().partition(" = ") for line in out.stdout.splitlines()[1:])
    return {k: v for k, _, v in pairs if k in MOLD_KEYS}


def test_moldable_jobs_from_qsub_to_qstat_through_kill_9(daemon: Daemon, tmp_path: Path) -> None:
    d = daemon
    assert run(d, "qmgr", "-c", "set server scheduler_policy = moldable-greedy").returncode == 0
    # S(n) = n up to 4 nodes: 4 hours on 1 node are 1 hour on the 4 nodes of the machine.
    wide = run(d, "qsub", "-l", "nodes=1-4,walltime=4:00:00", "-W", "speedup=downey:4:0",
               stdin="true\n").stdout.strip()  # fmt: skip
    rigid = run(d, "qsub", "-l", "nodes=2,walltime=1:00:00", stdin="true\n").stdout.strip()
    later = run(d, "qsub", "-l", "nodes=2-4", "-W", "speedup=downey:3:1.5", stdin="true\n")
    assert later.returncode == 0, later.stderr
    held = run(d, "qsub", "-h", "-l", "nodes=1-3", stdin="true\n").stdout.strip()
    jobs = [wide, rigid, later.stdout.strip(), held]
    first = mold_attrs(d, wide)
    assert first["Resource_List.nodes"] == "1-4" and first["chosen_nodect"] == "4"
    assert (first["Resource_List.nodect"], first["Resource_List.walltime"]) == ("4", "01:00:00")
    waiting = mold_attrs(d, jobs[2])
    assert waiting["job_state"] == "Q" and waiting["Resource_List.nodect"] == "2"
    # Beside the rigid job at 1 h on 2 nodes, ending at 2 h: sooner than 3 or 4 after it.
    assert waiting["planned_nodect"] == "2"
    assert waiting["Resource_List.speedup"] == "downey:3:1.5"
    assert mold_attrs(d, held)["Resource_List.speedup"] == "fixed"
    # A rigid job's nodes are shown as asked (PBS's old syntax), without a model.
    assert mold_attrs(d, rigid)["Resource_List.nodes"] == "2"
    assert "Resource_List.speedup" not in mold_attrs(d, rigid)
    # A bad range changes nothing.
    bad = run(d, "qsub", "-l", "nodes=2-5", stdin="true\n")
    assert bad.returncode == 1 and "5 nodes requested; machine tiny has 4" in bad.stderr
    assert run(d, "qalter", "-l", "nodes=2-3", held).returncode == 0
    before = {j: mold_attrs(d, j) for j in jobs}
    assert before[held]["Resource_List.nodes"] == "2-3"

    d.crash()
    with Daemon(tmp_path, "--speed", "1", config=str(tmp_path / "tiny.toml")) as again:
        assert {j: mold_attrs(again, j) for j in jobs} == before
        sched = run(again, "qmgr", "-c", "list sched").stdout
        assert "scheduler_policy = moldable-greedy" in sched
        assert "batchd_moldable_width_nodes_count" in again.call("GET", "/metrics")[1]
