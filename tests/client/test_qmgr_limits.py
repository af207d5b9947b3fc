"""qmgr's scheduling switch and run and queued limits against a real daemon, as a PBS
test set-up drives them: set, shown by qmgr, qstat -Q and qstat -B -f, honoured by
qsub and the scheduler, kept across a restart, unset."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon_proc import Daemon
from pbs_commands import ok, run

SITE = """
[[machine]]
name = "tiny"
nodes = 4

[server]
policy = "fcfs-easy"

[[queue]]
name = "workq"
default_walltime = "01:00:00"
max_user_queued = 3
"""


@pytest.fixture
def conf(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(SITE)
    return path


def states(d: Daemon) -> dict[str, str]:
    lines = ok(d, "qstat").splitlines()[2:]
    return {line.split()[0]: line.split()[4] for line in lines}


def test_scheduling_off_and_on_survives_a_restart(tmp_path: Path, conf: Path) -> None:
    with Daemon(tmp_path, "--speed", "1", config=str(conf)) as d:
        ok(d, "qsub", "-l", "nodes=1")
        ok(d, "qmgr", "-c", "set server scheduling = False")
        ok(d, "qsub", "-l", "nodes=1")
        assert states(d) == {"1.tiny": "R", "2.tiny": "Q"}
        full = ok(d, "qstat", "-B", "-f")
        assert "    server_state = Idle\n    scheduling = False\n" in full
        assert ok(d, "qstat", "-B").splitlines()[2].rstrip().endswith(" Idle")
        assert "set server scheduling = False\n" in ok(d, "qmgr", "-c", "p s")
        comment = ok(d, "qstat", "-f", "2")
        assert "comment = Not Running: Scheduling is turned off" in comment
    with Daemon(tmp_path, "--speed", "1", config=str(conf)) as d:
        assert states(d) == {"1.tiny": "R", "2.tiny": "Q"}
        ok(d, "qmgr", "-c", "set server scheduling = True")
        assert states(d) == {"1.tiny": "R", "2.tiny": "R"}
        assert "    server_state = Active\n    scheduling = True\n" in ok(d, "qstat", "-B", "-f")


def test_limits_set_shown_honoured_and_unset(tmp_path: Path, conf: Path) -> None:
    with Daemon(tmp_path, "--speed", "1", config=str(conf)) as d:
        ok(d, "qmgr", "-c", "set queue workq max_run = 2")
        for _ in range(3):
            ok(d, "qsub", "-l", "nodes=1")
        assert states(d) == {"1.tiny": "R", "2.tiny": "R", "3.tiny": "Q"}
        assert "comment = Not Running: Queue workq job limit has been reached." in ok(
            d, "qstat", "-f", "3"
        )
        row = ok(d, "qstat", "-Q").splitlines()[2].split()
        assert row[:3] == ["workq", "2", "3"]  # Max is max_run, Tot the jobs
        printed = ok(d, "qmgr", "-c", "p s")
        assert "set queue workq max_run = 2\n" in printed
        assert "set queue workq max_user_queued = 3\n" in printed  # from the site file
        # max_user_queued = 3 (site file): a fourth job of the same user is refused
        refused = run(d, "qsub", "-l", "nodes=1")
        assert refused.returncode != 0
        assert refused.stderr == "qsub: would exceed queue generic's per-user limit\n"
        # server limits through qmgr, shown by list server
        ok(d, "qmgr", "-c", "set server max_run = 1, max_user_queued = 10")
        listed = ok(d, "qmgr", "-c", "list server")
        assert "    max_run = 1\n    max_user_queued = 10\n" in listed
        bad = run(d, "qmgr", "-c", "set server max_run = lots")
        assert bad.returncode != 0 and "max_run" in bad.stderr and "lots" in bad.stderr
        # unset: the limits go, the third job starts
        ok(d, "qmgr", "-c", "unset server max_run")
        ok(d, "qmgr", "-c", "unset queue workq max_run")
        assert states(d) == {"1.tiny": "R", "2.tiny": "R", "3.tiny": "R"}
        assert "max_run" not in ok(d, "qmgr", "-c", "list queue workq")
        assert "max_run" not in ok(d, "qmgr", "-c", "list server")
    with Daemon(tmp_path, "--speed", "1", config=str(conf)) as d:  # kept across a restart
        assert "    max_user_queued = 10\n" in ok(d, "qmgr", "-c", "list server")


def test_bad_site_file_limits_name_the_file_and_key(tmp_path: Path) -> None:
    conf = tmp_path / "bad.toml"
    conf.write_text(SITE.replace("max_user_queued = 3", "max_run = -2"))
    d = Daemon(tmp_path, "--speed", "1", config=str(conf))
    with pytest.raises(RuntimeError) as err:
        d.start(timeout=20)
    assert f"{conf}: queue[0].max_run" in str(err.value)
