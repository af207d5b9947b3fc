"""Job arrays from the command line: qsub -J, qstat -t/-J/-f, qselect -J/-T, qdel, qhold
and tracejob of arrays and subjobs, against a real ``batchd serve`` through a kill -9."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from batchclient import jobtable, qsub
from batchclient.attrs import job_attrs
from batchclient.cli import UsageError
from daemon_proc import Daemon
from pbs_commands import ok, run

SITE = """
[[machine]]
name = "tiny"
nodes = 4

[server]
policy = "fcfs-easy"
max_array_size = 100

[[queue]]
name = "workq"
default_walltime = "01:00:00"
"""


# -- without a daemon ---------------------------------------------------------------


def test_qsub_j_makes_an_array_request() -> None:
    body, _ = qsub.build_request(["-J", "1-100:2%5", "-l", "nodes=2"], "true\n", "job.sh")
    assert (body["array_indices"], body["max_run_subjobs"], body["nodes"]) == ("1-100:2", 5, 2)
    body, _ = qsub.build_request([], "#PBS -J 0-9\ntrue\n", "job.sh")
    assert body["array_indices"] == "0-9" and "max_run_subjobs" not in body
    body, _ = qsub.build_request(["-J", "3-4"], "#PBS -J 0-9%2\ntrue\n", "job.sh")
    assert body["array_indices"] == "3-4" and "max_run_subjobs" not in body  # the command line wins


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("5-1", "the first index must be below the last"),
        ("5-5", "the first index must be below the last"),
        ("1-9:0", "the step must be at least 1"),
        ("1-9%0", "at least one subjob"),
        ("1-", "give X-Y[:Z][%N]"),
        ("-1-5", "give X-Y[:Z][%N]"),
        ("a-b", "give X-Y[:Z][%N]"),
        ("7", "give X-Y[:Z][%N]"),
    ],
)
def test_qsub_refuses_bad_j_values(value: str, says: str) -> None:
    with pytest.raises(UsageError) as err:
        qsub.build_request([f"-J{value}"], "true\n", "job.sh")
    assert str(err.value).startswith(f"illegal -J value: {value}")
    assert says in str(err.value)


def test_qsub_refuses_a_non_rerunable_array() -> None:
    with pytest.raises(UsageError, match="cannot submit non-rerunable Array Job"):
        qsub.build_request(["-J", "1-3", "-r", "n"], "true\n", "job.sh")
    with pytest.raises(UsageError, match="job.sh:2: #PBS -J 1: illegal -J value"):
        qsub.build_request([], "#PBS -N x\n#PBS -J 1\ntrue\n", "job.sh")


def _view(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "12[].hpcline", "seq": 12, "name": "sweep", "owner": "alice", "queue": "workq",
        "state": "B", "nodes": 1, "walltime": 600, "runtime": None, "priority": 0,
        "hold_types": "", "depend": None, "ctime": 0, "qtime": 0, "etime": 0,
        "exec_time": None, "stime": None, "end_time": None, "est_start": None,
        "elapsed": None, "exec_host": [], "exit_status": None, "comment": None,
        "variables": {}, "array": True, "array_indices_submitted": "1-10",
        "array_indices_remaining": "5-10", "array_state_count":
        "Queued:6 Running:2 Exiting:0 Expired:2", "max_run_subjobs": 2,
        "array_id": None, "array_index": None,
    }  # fmt: skip
    base.update(kw)
    return base


def test_arrays_and_subjobs_in_qstat_layouts() -> None:
    sub = _view(
        id="12[3].hpcline", state="R", elapsed=61, array=False, array_id="12[].hpcline",
        array_index=3, array_indices_submitted=None, array_indices_remaining=None,
        array_state_count=None, max_run_subjobs=None,
        variables={"PBS_ARRAY_INDEX": "3", "PBS_ARRAY_ID": "12[].hpcline"},
    )  # fmt: skip
    assert jobtable.default_table([_view(), sub]) == [
        "Job id            Name             User              Time Use S Queue",
        "----------------  ---------------- ----------------  -------- - -----",
        "12[].hpcline      sweep            alice                    0 B workq           ",
        "12[3].hpcline     sweep            alice             00:01:01 R workq           ",
    ]
    attrs = dict(job_attrs(_view()))
    assert attrs["job_state"] == "B"
    assert attrs["array"] == "True"
    assert attrs["array_state_count"] == "Queued:6 Running:2 Exiting:0 Expired:2"
    assert (attrs["array_indices_submitted"], attrs["array_indices_remaining"]) == ("1-10", "5-10")
    assert attrs["max_run_subjobs"] == "2"
    names = [n for n, _ in job_attrs(_view())]
    assert names[-5:] == [
        "array", "array_state_count", "array_indices_submitted", "array_indices_remaining",
        "max_run_subjobs",
    ]  # fmt: skip
    sub_attrs = dict(job_attrs(sub))
    assert (sub_attrs["array_id"], sub_attrs["array_index"]) == ("12[].hpcline", "3")
    assert "PBS_ARRAY_INDEX=3" in sub_attrs["Variable_List"]
    assert "array" not in sub_attrs


# -- against a daemon ---------------------------------------------------------------


def states(d: Daemon, *args: str) -> dict[str, str]:
    data = json.loads(ok(d, "qstat", "-t", "--json", *args))
    return {j["id"]: j["state"] for j in data["jobs"]}


def full(d: Daemon, job_id: str) -> dict[str, str]:
    text = ok(d, "qstat", "-f", "-w", "-x", job_id)
    lines = [line.strip() for line in text.splitlines()[1:] if " = " in line]
    return dict(line.split(" = ", 1) for line in lines)  # type: ignore[misc]


def wait_for(d: Daemon, job_id: str, state: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if full(d, job_id)["job_state"] == state:
            return
        time.sleep(0.1)
    raise AssertionError(f"{job_id} never reached {state}: {full(d, job_id)}")


def most_at_once(jobs: list[dict[str, Any]]) -> int:
    """The most jobs running at one time, from their start and end times."""
    points = sorted([(j["stime"], 1) for j in jobs] + [(j["end_time"], -1) for j in jobs])
    now = top = 0
    for _, step in points:
        now += step
        top = max(top, now)
    return top


@pytest.fixture
def site(tmp_path: Path) -> Path:
    conf = tmp_path / "tiny.toml"
    conf.write_text(SITE)
    return conf


def test_arrays_through_the_commands_and_a_kill(tmp_path: Path, site: Path) -> None:
    args = ("--speed", "600")
    d = Daemon(tmp_path, *args, config=str(site)).start()
    try:
        # 12 subjobs of one emulated minute, at most 2 at once: done in about 0.6 s.
        first = ok(d, "qsub", "-J", "1-12%2", "-l", "nodes=1,walltime=00:10:00",
                   "-v", "BATCHD_RUNTIME=60", "-N", "sweep")  # fmt: skip
        assert first == "1[].tiny\n"
        wait_for(d, "1[]", "F")
        history = json.loads(ok(d, "qstat", "-x", "-t", "--json", "1[]"))["jobs"]
        subs = [j for j in history if j["id"] != "1[].tiny"]
        assert [j["id"] for j in subs] == [f"1[{i}].tiny" for i in range(1, 13)]
        assert {j["state"] for j in subs} == {"F"}
        assert most_at_once(subs) == 2
        done = full(d, "1[]")
        assert done["array_state_count"] == "Queued:0 Running:0 Exiting:0 Expired:12"
        assert (done["comment"], done["max_run_subjobs"]) == ("Job Array finished", "2")
        assert "Exit_status" not in done  # emulated: no process ran, no exit status
        one = full(d, "1[1].tiny")
        assert one["comment"] == "Job run and finished (no process ran: the job was emulated)"
        assert "Exit_status" not in one

        # A long one: four subjobs on the four nodes, the fifth waits.
        script = "#PBS -J 0-4\n#PBS -l nodes=1,walltime=1000:00:00\ntrue\n"
        assert ok(d, "qsub", "-v", "BATCHD_RUNTIME=3600000", stdin=script) == "2[].tiny\n"
        wait_for(d, "2[]", "B")
        table = ok(d, "qstat").splitlines()
        assert [line.split()[0] for line in table[2:]] == ["2[].tiny"]
        assert table[2].split()[-2:] == ["B", "workq"]
        assert states(d) == {
            "2[].tiny": "B", "2[0].tiny": "R", "2[1].tiny": "R", "2[2].tiny": "R",
            "2[3].tiny": "R", "2[4].tiny": "Q",
        }  # fmt: skip
        assert list(states(d, "-J")) == [f"2[{i}].tiny" for i in range(5)]
        only = json.loads(ok(d, "qstat", "-J", "--json"))["jobs"]
        assert [j["id"] for j in only] == ["2[].tiny"]
        arr = full(d, "2[]")
        assert arr["array"] == "True"
        assert arr["array_indices_submitted"] == "0-4"
        assert arr["array_indices_remaining"] == "4"
        assert arr["array_state_count"] == "Queued:1 Running:4 Exiting:0 Expired:0"
        sub = full(d, "2[3].tiny")
        assert (sub["array_id"], sub["array_index"], sub["job_state"]) == ("2[].tiny", "3", "R")
        assert "PBS_ARRAY_INDEX=3" in sub["Variable_List"]
        assert "PBS_JOBID=2[3].tiny" in sub["Variable_List"]

        assert ok(d, "qselect") == "2[].tiny\n"
        assert ok(d, "qselect", "-J", "-s", "B") == "2[].tiny\n"
        assert ok(d, "qselect", "-T", "-s", "Q") == "2[4].tiny\n"
        assert ok(d, "qselect", "-x", "-J") == "1[].tiny\n2[].tiny\n"

        ok(d, "qdel", "2[1]")
        wait_for(d, "2[4]", "R")
        assert states(d)["2[1].tiny"] == "X"
        refused = run(d, "qhold", "2[3].tiny")
        assert refused.returncode == 1
        assert refused.stderr.startswith("qhold: Invalid request 2[3].tiny")
        trace = ok(d, "tracejob", "2[1]")
        assert "Job: 2[1].tiny" in trace and "Job deleted at request of" in trace

        # Refused submissions change nothing.
        too_big = run(d, "qsub", "-J", "1-101")
        assert too_big.returncode == 1
        assert "Array job exceeds server or queue size limit" in too_big.stderr
        bad = run(d, "qsub", "-J", "9-1")
        assert bad.returncode == 2 and bad.stderr.startswith("qsub: illegal -J value: 9-1")
        before = states(d)
        attrs_before = full(d, "2[]")
    finally:
        d.crash()
    with Daemon(tmp_path, *args, config=str(site)) as again:
        assert states(again) == before
        after = full(again, "2[]")
        for key in ("array_state_count", "array_indices_remaining", "job_state", "stime"):
            assert after[key] == attrs_before[key]
        assert ok(again, "qselect", "-x") == "1[].tiny\n2[].tiny\n"
        ok(again, "qdel", "2[]")
        assert states(again) == {}
        gone = full(again, "2[]")
        assert gone["job_state"] == "F"
        assert gone["array_state_count"] == "Queued:0 Running:0 Exiting:0 Expired:5"
