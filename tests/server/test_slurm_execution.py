"""Jobs from sbatch on a daemon whose machine runs scripts for real: they start in their
working directory with Slurm's variables, write where Slurm's filename patterns say, are
stopped at their time limit as Slurm stops them, and tell the signal that ended them.

The requests are the API's (``front_end: "slurm"``), as the sbatch command sends them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from local_daemon import SITE, LocalDaemon, daemon_dir, wait_until

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs Linux pidfds")

ENV_SCRIPT = """#!/bin/sh
echo "cwd=$(pwd)"
env | grep -E '^(SLURM|PBS)_' | sort
echo oops >&2
"""


@pytest.fixture
def slurmd() -> Iterator[LocalDaemon]:
    """One node of 4 cores named ws; a time limit's SIGKILL 1 s after its SIGTERM."""
    folder = daemon_dir()
    site = folder / "site.toml"
    text = SITE.format(name="ws", cores=4, kill_delay=2, roots='["root"]')
    site.write_text(text.replace("kill_delay = 2", "kill_delay = 2\nkill_wait = 1"))
    try:
        with LocalDaemon(folder, site) as d:
            yield d
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def sbatch(d: LocalDaemon, script: str, **fields: Any) -> dict[str, Any]:
    body = {"front_end": "slurm", "workdir": str(d.work), "script": script, **fields}
    status, job = d.call("POST", "/jobs", body)
    assert status == 201, job
    return job  # type: ignore[no-any-return]


def ended(d: LocalDaemon, job_id: str, timeout: float = 60) -> dict[str, Any]:
    def get() -> dict[str, Any]:
        return d.call("GET", f"/jobs/{job_id}")[1]  # type: ignore[no-any-return]

    return wait_until(get, lambda j: j["state"] in "FX", timeout)  # type: ignore[no-any-return]


def variables(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def test_a_job_runs_in_its_workdir_with_slurms_variables(slurmd: LocalDaemon) -> None:
    d = slurmd
    sub = d.work / "sub"
    sub.mkdir()
    slurm = {"ntasks": 3, "cpus_per_task": 1, "ntasks_per_node": None, "mem_per_node_mb": 512,
             "mem_per_cpu_mb": None, "exclusive": False}  # fmt: skip
    job = sbatch(d, ENV_SCRIPT, workdir=str(sub), name="envy", account="proj",
                 select=[{"count": 1, "ncpus": 3}], slurm=slurm)  # fmt: skip
    seq = job["seq"]
    done = ended(d, job["id"])
    assert (done["outcome"], done["exit_status"], done["term_signal"]) == ("ok", 0, None)
    out = (sub / f"slurm-{seq}.out").read_text()  # the default name, in the workdir
    assert "oops" in out  # stderr joined into the output
    env = variables(out)
    assert env["cwd"] == str(sub)
    assert not [k for k in env if k.startswith("PBS_")]
    want = {
        "SLURM_JOB_ID": str(seq), "SLURM_JOBID": str(seq), "SLURM_JOB_NAME": "envy",
        "SLURM_JOB_USER": "root", "SLURM_SUBMIT_DIR": str(sub),
        "SLURM_JOB_NODELIST": "node001", "SLURM_NODELIST": "node001",
        "SLURM_JOB_NUM_NODES": "1", "SLURM_NNODES": "1", "SLURM_NTASKS": "3",
        "SLURM_NPROCS": "3", "SLURM_CPUS_PER_TASK": "1", "SLURM_CPUS_ON_NODE": "3",
        "SLURM_JOB_CPUS_PER_NODE": "3", "SLURM_TASKS_PER_NODE": "3",
        "SLURM_MEM_PER_NODE": "512", "SLURM_JOB_PARTITION": "workq",
        "SLURM_JOB_ACCOUNT": "proj", "SLURM_CLUSTER_NAME": d.call("GET", "/server")[1]["name"],
    }  # fmt: skip
    assert {k: env.get(k) for k in want} == want
    assert env["SLURM_SUBMIT_HOST"]


def test_patterns_name_the_files_relative_to_the_workdir(slurmd: LocalDaemon) -> None:
    d = slurmd
    job = sbatch(d, "#!/bin/sh\necho out\necho err >&2\n", name="pat",
                 output_path="%x-%j-%u-%N-%5j.txt", error_path="err/%x.%%.e")  # fmt: skip
    (d.work / "err").mkdir()
    seq = job["seq"]
    ended(d, job["id"])
    assert (d.work / f"pat-{seq}-root-node001-{seq:05d}.txt").read_text() == "out\n"
    assert (d.work / "err" / "pat.%.e").read_text() == "err\n"


def test_an_array_writes_one_default_file_per_task(slurmd: LocalDaemon) -> None:
    d = slurmd
    script = "#!/bin/sh\necho $SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_MIN "
    script += "$SLURM_ARRAY_TASK_MAX $SLURM_ARRAY_TASK_STEP $SLURM_ARRAY_TASK_COUNT $SLURM_JOB_ID\n"
    job = sbatch(d, script, array_indices="1-7:3")
    seq = job["seq"]
    for index in (1, 4, 7):
        ended(d, f"{seq}[{index}]")
        text = (d.work / f"slurm-{seq}_{index}.out").read_text()
        assert text == f"{seq} {index} 1 7 3 3 {seq}_{index}\n"


def test_a_workdir_it_cannot_enter_fails_the_job(slurmd: LocalDaemon) -> None:
    d = slurmd
    out = d.work / "gone.out"
    job = sbatch(d, "#!/bin/sh\necho ran\n", workdir=str(d.work / "nowhere"), output_path=str(out))
    done = ended(d, job["id"])
    assert (done["outcome"], done["exit_status"]) == ("failed", -2)
    assert "could not chdir to" in done["comment"]
    assert out.read_text().startswith("slurmstepd: error: couldn't chdir to")
    assert "ran" not in out.read_text()


def test_the_time_limit_sends_sigterm_then_sigkill_after_kill_wait(slurmd: LocalDaemon) -> None:
    d = slurmd
    script = "#!/bin/sh\ntrap 'echo got TERM' TERM\necho started\nwhile :; do sleep 0.2; done\n"
    job = sbatch(d, script, walltime=2)
    done = ended(d, job["id"], timeout=30)
    assert (done["outcome"], done["exit_status"]) == ("walltime", -29)
    assert done["term_signal"] == 9  # it ignored SIGTERM: SIGKILL after KillWait
    text = (d.work / f"slurm-{job['seq']}.out").read_text()
    assert "got TERM" in text
    assert f"slurmstepd: error: *** JOB {job['seq']} ON " in text
    assert "DUE TO TIME LIMIT ***" in text
    assert 2 + 1 <= done["resources_used"]["walltime"] < 2 + 1 + 3  # limit, KillWait, margin


def test_a_signal_reaches_the_job_and_the_ending_signal_is_told(slurmd: LocalDaemon) -> None:
    d = slurmd
    script = "#!/bin/sh\ntrap 'echo got USR1; kill -USR2 $$' USR1\necho up\n"
    script += "while :; do sleep 0.2; done\n"
    job = sbatch(d, script)
    out = d.work / f"slurm-{job['seq']}.out"
    wait_until(lambda: out.exists() and out.read_text(), bool, 30)
    status, _ = d.call("POST", f"/jobs/{job['id']}/signal", {"signal": "USR1"})
    assert status == 200
    done = ended(d, job["id"])
    assert (done["exit_status"], done["term_signal"]) == (256 + 12, 12)
    text = out.read_text()  # every process got it: the shell's sleep too, killed by it
    assert text.startswith("up\n") and text.endswith("got USR1\n")
