"""qsub -A, -m and -M: checked as OpenPBS checks them, kept by the daemon (across a
restart, into an array's subjobs) and shown by qstat -f; qsub -I refused in qsub's words."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from batchclient import qsub
from batchclient.cli import UsageError
from daemon_proc import Daemon
from pbs_commands import ok, run


def request(*argv: str, script: str = "true\n") -> dict[str, object]:
    return qsub.build_request(list(argv), script=script)[0]


def test_account_and_mail_go_into_the_request() -> None:
    body = request("-A", "proj1", "-m", " abe", "-M", "me@host,you")
    assert (body["account"], body["mail_points"], body["mail_users"]) == (
        "proj1",
        "abe",
        "me@host,you",
    )
    assert "mail_points" not in request()
    script = "#PBS -m aj\n#PBS -J 1-3\ntrue\n"  # j checked once the array is known
    assert request(script=script)["mail_points"] == "aj"
    assert request("-m", "ej", script=script)["mail_points"] == "ej"


@pytest.mark.parametrize(
    "argv,message",
    [
        (["-m", "x"], "illegal -m value"),
        (["-m", "j", "-J", "1-2"], "illegal -m value"),  # j alone is refused
        (["-m", "nb"], "illegal -m value"),
        (["-m", ""], "illegal -m value"),
        (["-m", "aj"], "mail option 'j' can not be used without array job"),
        (["-M", "a,,b"], "illegal -M value"),
        (["-M", "a b"], "illegal -M value"),
        (["-A", ""], "illegal -A value"),
        (["-I"], "interactive jobs are not supported"),
    ],
)
def test_bad_values_are_refused_in_qsubs_words(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError) as exc:
        request(*argv)
    assert str(exc.value) == message


def test_a_directive_names_its_line() -> None:
    with pytest.raises(UsageError) as exc:
        request(script="#!/bin/sh\n#PBS -I\ntrue\n")
    assert str(exc.value) == "STDIN:2: #PBS -I: interactive jobs are not supported"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with Daemon(Path(tmp_path_factory.mktemp("mail")), "--speed", "1") as d:
        yield d


def attrs_of(d: Daemon, job_id: str) -> list[str]:
    return ok(d, "qstat", "-f", job_id).splitlines()


def test_qstat_f_shows_account_and_mail(daemon: Daemon) -> None:
    d = daemon
    job = ok(d, "qsub", "-A", "proj1", "-m", "abe", "-M", "me@example.org", "-h").strip()
    lines = attrs_of(d, job)
    assert lines[5:7] == [f"    server = {job.partition('.')[2]}", "    Account_Name = proj1"]
    at = lines.index("    Mail_Points = abe")
    assert lines[at + 1] == "    Mail_Users = me@example.org"
    doc = json.loads(ok(d, "qstat", "-f", "-F", "json", job))["Jobs"][job]
    assert (doc["Account_Name"], doc["Mail_Points"], doc["Mail_Users"]) == (
        "proj1",
        "abe",
        "me@example.org",
    )
    plain = ok(d, "qsub", "-h").strip()
    assert not any(
        line.startswith(("    Account_Name", "    Mail_")) for line in attrs_of(d, plain)
    )


def test_an_arrays_subjobs_keep_them(daemon: Daemon) -> None:
    array = ok(daemon, "qsub", "-J", "1-2", "-m", "ej", "-A", "proj2", "-h").strip()
    subjob = array.replace("[]", "[1]")
    lines = attrs_of(daemon, subjob)
    assert "    Account_Name = proj2" in lines and "    Mail_Points = ej" in lines


def test_bad_values_reach_no_daemon(daemon: Daemon) -> None:
    before = ok(daemon, "qstat")
    out = run(daemon, "qsub", "-I")
    assert (out.returncode, out.stdout, out.stderr) == (
        2,
        "",
        "qsub: interactive jobs are not supported\n",
    )
    out = run(daemon, "qsub", "-m", "abc")
    assert (out.returncode, out.stderr) == (2, "qsub: illegal -m value\n")
    assert ok(daemon, "qstat") == before


def test_they_survive_a_restart(tmp_path: Path) -> None:
    with Daemon(tmp_path, "--speed", "1") as d:
        job = ok(d, "qsub", "-A", "proj3", "-m", "n", "-M", "a@b,c", "-h").strip()
    with Daemon(tmp_path, "--speed", "1") as d:
        lines = attrs_of(d, job)
    assert "    Account_Name = proj3" in lines
    assert "    Mail_Points = n" in lines and "    Mail_Users = a@b,c" in lines
