"""srun in a job's environment, and srun and salloc as jobs of a daemon that runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from local_daemon import LocalDaemon


def command(*argv: str, env: dict[str, str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", f"batchclient.slurm.{argv[0]}", *argv[1:]], input=stdin,
        capture_output=True, text=True, env=env, cwd=cwd, timeout=90,
    )  # fmt: skip


def job_env(tmp_path: Path, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    return dict(env, SLURM_JOB_ID="41", TMPDIR=str(tmp_path), **more)


def test_srun_in_a_job_runs_numbered_tasks_and_counts_steps(tmp_path: Path) -> None:
    env = job_env(tmp_path, SLURM_NTASKS="3")
    task = 'echo "$SLURM_PROCID $SLURM_LOCALID $SLURM_STEP_ID $SLURM_NTASKS"'
    first = command("srun", "sh", "-c", task, env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert sorted(first.stdout.splitlines()) == ["0 0 0 3", "1 1 0 3", "2 2 0 3"]
    second = command("srun", "-n", "2", "-l", "sh", "-c", task, env=env, cwd=tmp_path)
    assert sorted(second.stdout.splitlines()) == ["0: 0 0 1 2", "1: 1 1 1 2"]


def test_srun_in_a_job_writes_each_tasks_output_where_its_patterns_say(tmp_path: Path) -> None:
    """submitit's step: ``srun --unbuffered --output DIR/%j_%t_log.out --error ...``."""
    env = job_env(tmp_path, SLURM_NTASKS="2", SLURM_JOB_NAME="fit")
    task = 'echo "out $SLURM_PROCID"; echo "err $SLURM_PROCID" >&2'
    done = command(
        "srun", "--unbuffered", "--output", f"{tmp_path}/%j_%t_%x.out",
        "--error", f"{tmp_path}/%j_%t_log.err", "sh", "-c", task, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    for t in (0, 1):
        assert (tmp_path / f"41_{t}_fit.out").read_text() == f"out {t}\n"
        assert (tmp_path / f"41_{t}_log.err").read_text() == f"err {t}\n"
    joined = command("srun", "-o", f"{tmp_path}/both-%s-%%.txt", "sh", "-c", task,
                     env=env, cwd=tmp_path)  # fmt: skip
    assert joined.returncode == 0, joined.stderr
    both = (tmp_path / "both-1-%.txt").read_text().splitlines()
    assert sorted(both) == ["err 0", "err 1", "out 0", "out 1"]


def test_srun_exits_with_the_highest_task_exit_code(tmp_path: Path) -> None:
    env = job_env(tmp_path)
    done = command("srun", "-n", "3", "sh", "-c", "exit $((SLURM_PROCID * 2))", env=env, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 4
    killed = command("srun", "sh", "-c", "kill -9 $$", env=env, cwd=tmp_path)
    assert killed.returncode == 128 + 9
    missing = command("srun", "/no/such/program", env=env, cwd=tmp_path)
    assert missing.returncode == 1
    assert missing.stderr.startswith("srun: error: execve(): /no/such/program:")
    assert command("srun", env=env, cwd=tmp_path).stderr == "srun: error: no command to run\n"


def daemon_env(d: LocalDaemon) -> dict[str, str]:
    env = dict(os.environ, BATCHD_SOCKET=str(d.socket))
    for name in ("BATCHD_URL", "SLURM_JOB_ID", "SLURM_NTASKS"):
        env.pop(name, None)
    return env


def test_srun_outside_a_job_runs_as_a_job_and_shows_its_output(local_daemon: LocalDaemon) -> None:
    d = local_daemon
    done = command("srun", "-n", "2", "-l", "sh", "-c", 'echo "hi from $SLURM_PROCID"; exit 5',
                   env=daemon_env(d), cwd=d.work)  # fmt: skip
    assert done.returncode == 5, done.stderr
    assert sorted(done.stdout.splitlines()) == ["0: hi from 0", "1: hi from 1"]
    jobs = d.call("GET", "/jobs?history=true")[1]["jobs"]
    assert [j["name"] for j in jobs] == ["sh"]


def test_salloc_runs_the_command_in_the_allocation_and_releases_it(local_daemon: LocalDaemon) -> None:  # fmt: skip
    d = local_daemon
    done = command("salloc", "-n", "2", "sh", "-c",
                   'echo "job $SLURM_JOB_ID nodes $SLURM_NNODES"; srun -l echo step; exit 7',
                   env=daemon_env(d), cwd=d.work)  # fmt: skip
    assert done.returncode == 7, done.stderr
    seq = done.stderr.splitlines()[0].rpartition(" ")[2]
    assert done.stdout.splitlines()[0] == f"job {seq} nodes 1"
    lines = done.stderr.splitlines()
    assert lines[0] == f"salloc: Pending job allocation {seq}"
    assert f"salloc: Granted job allocation {seq}" in lines
    assert lines[-1] == f"salloc: Relinquishing job allocation {seq}"
    job = d.call("GET", f"/jobs/{seq}")[1]
    assert job["state"] in ("E", "F")
