"""Two real users of a root daemon, each driving the PBS commands as itself over the Unix
socket: one submits with a secret in ``-v``; the other finds neither the job nor the
secret by any command while ``query_other_jobs`` is off (the default), and sees the job
without its variables once a manager turns it on. The daemon's own user (a manager)
sees everything."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from local_daemon import LocalDaemon, daemon_dir, write_site
from users import User, command, need_root, their_dir

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs Linux pidfds")

SECRET = "hunter2-s3cret"


@pytest.fixture
def daemon(test_users: list[User]) -> Iterator[tuple[LocalDaemon, list[User]]]:
    need_root()
    folder = daemon_dir()
    with LocalDaemon(folder, write_site(folder)) as d:
        yield d, test_users
    shutil.rmtree(folder, ignore_errors=True)


def every_read(d: LocalDaemon, who: str, job: str) -> dict[tuple[str, ...], tuple[int, str]]:
    """What ``who`` gets from each command that shows jobs: (exit status, all it printed)."""
    seq = job.split(".")[0]
    reads = (
        ("qstat",), ("qstat", "-f"), ("qstat", "-x", "-f"), ("qstat", "-f", "-F", "json"),
        ("qstat", "-u", "batchd-alice"), ("qstat", "-a", "-n", "-x"), ("qstat", "-f", job),
        ("qstat", "-x", "-f", seq), ("qselect",), ("qselect", "-u", "batchd-alice"),
        ("tracejob", seq), ("qstat", "-B", "-f"), ("qstat", "-Q"),
    )  # fmt: skip
    out = {}
    for argv in reads:
        done = command(who, argv[0], *argv[1:], socket=d.socket)
        out[argv] = (done.returncode, done.stdout + done.stderr)
    return out


def test_another_users_job_and_its_variables_stay_hidden(daemon) -> None:
    d, (alice, bob) = daemon
    folder = their_dir(alice, "batchd-visible-")
    submitted = command(alice.name, "qsub", "-N", "alicesjob", "-v", f"SECRET={SECRET}",
                        socket=d.socket, cwd=folder, stdin="sleep 900\n")  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    job = submitted.stdout.strip()

    hidden = every_read(d, bob.name, job)
    for argv, (_, text) in hidden.items():
        assert SECRET not in text and "alicesjob" not in text, (argv, text)
        assert "batchd-alice" not in text or argv[-1] == "batchd-alice", (argv, text)
    assert hidden[("qstat", "-f", job)] == (1, f"qstat: Unauthorized Request {job}\n")
    assert hidden[("qstat", "-u", "batchd-alice")][0] == 0
    refused = command(bob.name, "qdel", job, socket=d.socket)
    assert (refused.returncode, refused.stderr) != (0, "")
    assert "Unauthorized Request" in refused.stderr and "batchd-alice" not in refused.stderr

    # The daemon's user (root: a manager) turns it on; bob sees the job, not its variables.
    turned = d.pbs("qmgr", "-c", "set server query_other_jobs = True")
    assert turned.returncode == 0, turned.stderr
    shown = every_read(d, bob.name, job)
    status, text = shown[("qstat", "-f", job)]
    assert status == 0 and "Job_Owner = batchd-alice" in text and "alicesjob" in text
    for argv, (_, text) in shown.items():
        assert SECRET not in text, (argv, text)
    # Its owner and the managers see the variables.
    assert SECRET in command(alice.name, "qstat", "-f", job, socket=d.socket).stdout
    assert SECRET in d.job(job)["Variable_List"]["SECRET"]
    assert "query_other_jobs = True" in d.pbs("qmgr", "-c", "list server").stdout
