"""A root daemon runs other users' code: attacks of ordinary users and of nobody.

The daemon runs as root (the tests run as root, as CI does); its users are the tests'
own accounts (batchd-alice, batchd-bob: tests/users.py) and the host's nobody, each
driving the PBS commands as itself. What is checked: a job runs as its submitter and
never as anyone else; nobody acts on, signals or reads another's job; no path, name,
variable or shell a user gives makes the daemon open, create or run anything for them
(the files in question stay as they were); a job reaches neither the state file, the
spool nor the tokens, nor the daemon's or its supervisor's processes.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from local_daemon import LocalDaemon, daemon_dir, wait_until, write_site
from users import User, command, need_root, their_dir

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs Linux pidfds")


@pytest.fixture
def rooted(test_users: list[User]) -> Iterator[tuple[LocalDaemon, list[User]]]:
    """A root daemon with a TCP listener and a token file (which must stay secret), whose
    acl_roots is empty (root's own jobs are refused)."""
    need_root()
    folder = daemon_dir()
    tokens = folder / "tokens"
    tokens.write_text(f"batchd-alice:{secrets.token_hex(16)}\nghost:{secrets.token_hex(16)}\n")
    tokens.chmod(0o600)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    site = write_site(folder, roots=())
    with LocalDaemon(
        folder, site, "--listen", f"127.0.0.1:{port}", "--token-file", str(tokens)
    ) as d:
        d.port = port  # type: ignore[attr-defined]
        d.tokens = tokens  # type: ignore[attr-defined]
        yield d, test_users
    shutil.rmtree(folder, ignore_errors=True)


def submit(d: LocalDaemon, who: str, script: str, *options: str, cwd: Path) -> str:
    done = command(who, "qsub", *options, socket=d.socket, cwd=cwd, stdin=script)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def ended(d: LocalDaemon, job: str) -> dict:
    return wait_until(lambda: d.call("GET", f"/jobs/{job}")[1], lambda j: j["state"] == "F", 60)


def test_a_job_runs_as_its_submitter_and_no_one_else(rooted) -> None:
    d, (alice, bob) = rooted
    jobs = {}
    for who in (alice, bob):
        folder = their_dir(who, "batchd-own-")
        jobs[who.name] = (folder, submit(d, who.name, "id -un\nid -u\npwd\n", cwd=folder))
    for who in (alice, bob):
        folder, job = jobs[who.name]
        attrs = ended(d, job)
        assert (attrs["exit_status"], attrs["euser"]) == (0, who.name)
        out = folder / f"STDIN.o{job.split('.')[0]}"
        assert out.read_text() == f"{who.name}\n{who.uid}\n{who.home}\n"  # its home, PBS's rule
        info = out.stat()
        assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (who.uid, 0o600)
    refused = command(alice.name, "qsub", socket=d.socket, cwd=jobs["batchd-alice"][0],
                      stdin="true\n")  # fmt: skip
    assert refused.returncode == 0  # alice may submit for herself...
    status, body = d.call("POST", "/jobs", {"script": "id", "user": "batchd-bob"})
    assert status == 403 and "run as their owner" in body["message"]  # ...not even root for bob
    status, body = d.call("POST", "/jobs", {"script": "id"})
    assert status == 403 and "acl_roots" in body["message"]  # root's own: refused


def test_nobody_acts_on_or_reads_another_users_job(rooted) -> None:
    d, (alice, bob) = rooted
    folder = their_dir(alice, "batchd-alice-")
    job = submit(d, alice.name, "echo secret-output\nsleep 30\n", cwd=folder)
    wait_until(lambda: d.call("GET", f"/jobs/{job}")[1]["state"], lambda s: s == "R", 30)
    out = folder / f"STDIN.o{job.split('.')[0]}"
    wait_until(lambda: out.exists() and out.read_text(), bool, 30)
    for argv in (("qdel", job), ("qsig", "-s", "KILL", job), ("qrerun", job),
                 ("qalter", "-N", "x", job), ("qhold", job), ("qmove", "workq", job)):  # fmt: skip
        for who in (bob.name, "nobody"):
            done = command(who, *argv, socket=d.socket, cwd=Path("/tmp"))
            assert done.returncode != 0, (who, argv)
            # Another's job is not even shown (query_other_jobs is off by default).
            refused = f"Unauthorized Request {job}" in done.stderr
            assert refused or "invalid" in done.stderr.lower(), done.stderr
    peek = command(bob.name, "qstat", "-f", job, socket=d.socket, cwd=Path("/tmp"))
    assert "secret-output" not in peek.stdout
    import subprocess

    read = subprocess.run(["runuser", "-u", bob.name, "--", "cat", str(out)], capture_output=True)
    assert read.returncode != 0 and b"secret" not in read.stdout
    assert d.call("GET", f"/jobs/{job}")[1]["state"] == "R"  # untouched by all of that
    assert command(alice.name, "qdel", job, socket=d.socket, cwd=folder).returncode == 0
    assert ended(d, job)["outcome"] == "cancelled"


def test_no_path_name_or_shell_opens_anything_for_a_user(rooted, tmp_path: Path) -> None:
    """nobody (home /nonexistent) names root's files and directories as its output, its
    working directory and its shell; a symlink points its output at a root-owned file."""
    d, _ = rooted
    victim = Path("/etc") / f"batchd-victim-{secrets.token_hex(4)}"
    victim.write_text("root's\n")
    victim.chmod(0o644)
    lair = Path(f"/tmp/batchd-lair-{secrets.token_hex(4)}")
    lair.mkdir()
    lair.chmod(0o1777)
    link = lair / "out"
    os.symlink(victim, link)
    protected = Path(f"/root/batchd-never-{secrets.token_hex(4)}")
    try:
        attempts = [
            ("-o", str(victim)),
            ("-o", str(link)),
            ("-e", str(protected)),
            ("-o", "/root/"),
            ("-v", "PBS_O_WORKDIR=/root"),
            ("-S", "/root/.bashrc"),
            ("-N", "x/../../etc/passwd"),
        ]
        jobs = [submit(d, "nobody", "id > /dev/null\n", *a, cwd=lair) for a in attempts]
        for job in jobs:
            attrs = ended(d, job)
            assert attrs["exit_status"] in (-1, -2), attrs  # could not open / could not start
            assert attrs["euser"] in (None, "nobody")
        assert victim.read_text() == "root's\n" and victim.stat().st_uid == 0
        assert os.readlink(link) == str(victim)
        assert not protected.exists()
        assert not any(p.name.startswith(("STDIN.", "passwd.")) for p in Path("/root").iterdir())
        assert not Path("/etc/passwd.o1").exists()
    finally:
        victim.unlink()
        shutil.rmtree(lair, ignore_errors=True)


def test_a_job_reaches_neither_the_daemons_files_nor_its_processes(rooted) -> None:
    d, (alice, _) = rooted
    folder = their_dir(alice, "batchd-probe-")
    daemon_pid = d.proc.pid  # type: ignore[union-attr]
    probe = (
        f"cat {d.state} >/dev/null 2>&1 && echo read-state\n"
        f"cat {d.tokens} >/dev/null 2>&1 && echo read-tokens\n"  # type: ignore[attr-defined]
        f"ls {d.spool} >/dev/null 2>&1 && echo listed-spool\n"
        f"kill -0 {daemon_pid} 2>/dev/null && echo can-signal-daemon\n"
        f"cat /proc/{daemon_pid}/environ >/dev/null 2>&1 && echo read-daemon-env\n"
        "leader=$(ps -o sid= -p $$ | tr -d ' '); sup=$(ps -o ppid= -p $leader | tr -d ' ')\n"
        'kill -0 "$sup" 2>/dev/null && echo can-signal-supervisor\n'
        "env | grep -c -E '^(BATCHD_|XDG_|SUDO_|STATE_DIRECTORY)' || true\n"
        "echo probed\n"
    )
    job = submit(
        d, alice.name, probe, "-v", "LD_PRELOAD=/tmp/none.so,BASH_ENV=/tmp/none", cwd=folder
    )
    attrs = ended(d, job)
    out = (folder / f"STDIN.o{job.split('.')[0]}").read_text()
    assert out == "0\nprobed\n", out
    assert attrs["exit_status"] == 0
    assert d.proc.poll() is None  # type: ignore[union-attr]


def test_a_token_user_without_an_account_runs_nothing(rooted) -> None:
    d, _ = rooted
    token = next(
        line.split(":", 1)[1]
        for line in d.tokens.read_text().splitlines()  # type: ignore[attr-defined]
        if line.startswith("ghost:")
    )
    env = {"BATCHD_URL": f"http://127.0.0.1:{d.port}", "BATCHD_TOKEN": token}  # type: ignore[attr-defined]
    done = d.pbs("qsub", stdin="true\n", env=env)
    assert done.returncode != 0 and "ghost has no account on this host" in done.stderr
    time.sleep(0.1)
    assert d.call("GET", "/jobs")[1]["jobs"] == []
