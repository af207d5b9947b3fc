"""``make run``'s demo: the daemon starts, the commands answer, the daemon stops cleanly."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from daemon_proc import ROOT


def test_demo_runs_and_stops_cleanly() -> None:
    batchd = Path(sys.executable).parent / "batchd"
    out = subprocess.run(
        [str(batchd), "demo", "--speed", "600", "--jobs", "300"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    text = out.stdout
    ids = re.findall(r"^(\d+)\.hpcline$", text, re.M)
    assert len(ids) == 3, text  # three qsub answers
    assert "Job id            Name             User              Time Use S Queue" in text
    assert f"Job Id: {ids[0]}.hpcline" in text
    assert "    scheduler_policy = dynp" in text
    slurm_job = re.search(r"^Submitted batch job (\d+)$", text, re.M)
    assert slurm_job is not None and int(slurm_job[1]) > int(ids[-1]), text  # one sequence
    assert re.search(rf"^ +{slurm_job[1]} +workq +slurmjob ", text, re.M), text  # in squeue
    assert "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST" in text
    assert "daemon exited with status 0" in text
    assert "Traceback" not in text + out.stderr
