"""sbatch's options and #SBATCH lines, and the request they make (no daemon)."""

from __future__ import annotations

from typing import Any

import pytest

from batchclient.slurm.command import SlurmError
from batchclient.slurm.sbatch import build_request

SCRIPT = "#!/bin/sh\necho hi\n"


def body_of(*argv: str, script: str = SCRIPT, env: dict[str, str] | None = None) -> dict[str, Any]:
    return build_request(list(argv), script=script, cwd="/tmp", environ=env or {})[0]


def refusal(*argv: str, script: str = SCRIPT) -> str:
    with pytest.raises(SlurmError) as info:
        build_request(list(argv), script=script, cwd="/tmp", environ={})
    return str(info.value)


def test_a_plain_script_is_one_task_on_one_cpu_in_the_current_directory() -> None:
    body = body_of("job.sh")
    assert body["front_end"] == "slurm"
    assert body["name"] == "job.sh"
    assert body["select"] == [{"count": 1, "ncpus": 1, "mpiprocs": 1}]
    assert "place" not in body
    assert body["workdir"] == "/tmp"
    assert body["shell"] == "/bin/sh"
    assert body["slurm"] == {"ntasks": 1, "cpus_per_task": 1, "ntasks_per_node": None,
                             "mem_per_node_mb": None, "mem_per_cpu_mb": None,
                             "exclusive": False}  # fmt: skip
    assert body_of()["name"] == "sbatch"  # stdin


def test_nodes_tasks_and_cpus_become_chunks_on_nodes() -> None:
    body = body_of("-N", "2", "-n", "8", "-c", "3", "--mem=2G", "--exclusive")
    assert body["select"] == [
        {"count": 2, "ncpus": 12, "mpiprocs": 4, "ompthreads": 3, "mem": "2048mb"}
    ]
    assert body["place"] == "scatter:excl"
    assert body["slurm"]["ntasks"] == 8 and body["slurm"]["exclusive"] is True
    free = body_of("-n", "4", "--mem-per-cpu=100")
    assert free["select"] == [{"count": 4, "ncpus": 1, "mpiprocs": 1, "mem": "100mb"}]
    assert free["place"] == "free"
    per_node = body_of("--ntasks-per-node=2", "-n", "6")
    assert per_node["select"] == [{"count": 3, "ncpus": 2, "mpiprocs": 2}]
    assert per_node["slurm"]["ntasks_per_node"] == 2
    only_nodes = body_of("--nodes=3")
    assert only_nodes["select"] == [{"count": 3, "ncpus": 1, "mpiprocs": 1}]
    assert only_nodes["slurm"]["ntasks"] == 3
    moldable = body_of("-N", "2-6")
    assert (moldable["nodes"], moldable["nodes_max"]) == (2, 6)
    assert "select" not in moldable


def test_memory_sizes_read_as_slurm_reads_them() -> None:
    mems = {m: body_of(f"--mem={m}")["slurm"]["mem_per_node_mb"] for m in ("100", "2G", "1T", "2048K", "3M")}  # fmt: skip
    assert mems == {"100": 100, "2G": 2048, "1T": 1048576, "2048K": 2, "3M": 3}


def test_every_other_option_reaches_its_field() -> None:
    body = body_of(
        "-J", "named", "-t", "1-02:03:04", "-p", "short", "-A", "proj", "-H", "--nice=5",
        "-o", "out-%j.txt", "-e", "err-%x.txt", "--array=0-10:2%3", "-D", "/",
        "--export=NONE", "--no-requeue",
        env={"SECRET": "x"},
    )  # fmt: skip
    assert body["name"] == "named"
    assert body["walltime"] == 86400 + 2 * 3600 + 3 * 60 + 4
    assert (body["queue"], body["account"], body["hold"]) == ("short", "proj", True)
    assert body["priority"] == -5
    assert (body["output_path"], body["error_path"]) == ("out-%j.txt", "err-%x.txt")
    assert (body["array_indices"], body["max_run_subjobs"]) == ("0-10:2", 3)
    assert body["workdir"] == "/"
    assert "SECRET" not in body["variables"]
    assert body["variables"]["SLURM_SUBMIT_DIR"] == "/tmp"
    assert body["rerunable"] is False
    assert body_of("--nice")["priority"] == -100


def test_export_all_is_the_environment_but_slurm_job_variables() -> None:
    env = {"A": "1", "SLURM_JOB_ID": "9", "B": "2"}
    assert {"A", "B"} <= set(body_of(env=env)["variables"])
    assert "SLURM_JOB_ID" not in body_of(env=env)["variables"]
    listed = body_of("--export=A,C=3", env=env)["variables"]
    assert (listed["A"], listed["C"]) == ("1", "3") and "B" not in listed
    both = body_of("--export=ALL,C=3", env=env)["variables"]
    assert (both["B"], both["C"]) == ("2", "3")


def test_array_lists_go_as_one_range_or_as_a_list() -> None:
    assert body_of("--array=1,3,5")["array_indices"] == "1-5:2"
    assert body_of("--array=1-3,4")["array_indices"] == "1-4"
    assert body_of("--array=1,2,7")["array_indices"] == "1-2,7"
    assert body_of("--array=4")["array_indices"] == "4"
    assert body_of("--array=9,1-3,2%2")["array_indices"] == "1-3,9"
    assert "ranges run upwards" in refusal("--array=3-1")


def test_sbatch_lines_are_read_until_the_first_command_and_the_command_line_wins() -> None:
    script = (
        "#!/bin/bash\n"
        "# a comment\n\n"
        "#SBATCH -J inscript --time=5  # trailing comment\n"
        "#SBATCH --ntasks=4\n"
        "#SBATCH --mem=1G\n"
        "echo start\n"
        "#SBATCH --partition=never\n"
    )
    body = body_of("-n", "2", "--mem-per-cpu=10", script=script)
    assert body["name"] == "inscript"
    assert body["walltime"] == 300
    assert body["slurm"]["ntasks"] == 2
    assert (body["slurm"]["mem_per_node_mb"], body["slurm"]["mem_per_cpu_mb"]) == (None, 10)
    assert "queue" not in body
    assert body_of("-J", "cli", script=script)["name"] == "cli"


def test_a_bad_sbatch_line_is_named_by_its_script_and_line() -> None:
    text = refusal("job.sh", script="#!/bin/sh\n#SBATCH -J ok\n#SBATCH --ntasks=zero\ntrue\n")
    assert text == 'job.sh:3: #SBATCH --ntasks=zero: Invalid numeric value "zero" for --ntasks'
    text = refusal("job.sh", script="#!/bin/sh\n#SBATCH --qos=high\n")
    assert text == "job.sh:2: #SBATCH --qos=high: --qos: not supported by batchd"


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--qos=high"], "--qos: not supported by batchd"),
        (["-C", "gpu"], "--constraint: not supported by batchd"),
        (["--gres=gpu:1"], "--gres: not supported by batchd"),
        (["--frobnicate"], "unrecognized option '--frobnicate'"),
        (["-N", "0"], 'Invalid node count specification "0"'),
        (["-N", "4-2"], "the maximum 2 is below the minimum 4"),
        (["-t", "soon"], 'Invalid time limit specification "soon" for --time'),
        (["--mem=lots"], "Invalid --mem specification"),
        (["--mem=1G", "--mem-per-cpu=1"], "mutually exclusive"),
        (["-d", "afterok:1?afterok:2"], "'?' (any one of them) is not supported"),
        (["-d", "aftercorr:1"], "'aftercorr': batchd knows"),
        (["-d", "afterok:12.batch"], "'12.batch' is not a job id"),
        (["--begin=whenever"], 'Invalid time specification "whenever" for --begin'),
        (["-J", "two words"], "no blanks"),
        (["-D", "/no/such/dir"], "--chdir=/no/such/dir: no such directory"),
        (["--export=NONE,A"], "NONE takes no variables"),
        (["-N", "2", "-n", "1"], "--ntasks=1 is below --nodes=2"),
    ],
)
def test_bad_options_are_refused_by_name(argv: list[str], words: str) -> None:
    assert words in refusal(*argv)


def test_scripts_are_checked_as_slurm_checks_them() -> None:
    assert refusal(script="") == "Batch script is empty!"
    assert refusal(script="echo hi\n").startswith("This does not look like a batch script.")
    assert "DOS line breaks" in refusal(script="#!/bin/sh\r\necho\r\n")


def test_wrap_and_script_arguments() -> None:
    body = build_request(["--wrap", "echo a b"], cwd="/tmp", environ={})[0]
    assert body["script"] == "#!/bin/sh\n# This script was created by sbatch --wrap.\n\necho a b\n"
    assert body["name"] == "wrap"
    args = body_of("job.sh", "x y", "-v")["script"]
    assert args == "#!/bin/sh\nset -- 'x y' -v\necho hi\n"
    assert "sh-family scripts only" in refusal("job.py", "1", script="#!/usr/bin/python3\n")


def test_dependencies_name_the_daemons_ids() -> None:
    from batchclient.slurm.request import depend_text
    from batchclient.slurm.values import dependency

    deps = dependency("afterok:12:13_4,afterany:14,singleton")
    assert depend_text(deps) == "afterok:12:13[4],afterany:14,singleton"


def test_submitits_options_signal_open_mode_and_wckey() -> None:
    script = "#!/bin/bash\n#SBATCH --open-mode=append\n#SBATCH --signal=USR2@90\n#SBATCH --wckey=submitit\nx\n"  # fmt: skip
    body = body_of(script=script)
    assert body["slurm"]["signal"] == {"number": 12, "before": 90, "script": False}
    assert body["slurm"]["open_mode"] == "append"
    assert body_of("--signal=B:10")["slurm"]["signal"] == {"number": 10, "before": 60, "script": True}  # fmt: skip
    assert body_of("--signal=SIGTERM@5")["slurm"]["signal"]["number"] == 15
    assert "signal" not in body_of()["slurm"] and "open_mode" not in body_of()["slurm"]
    for bad in ("--signal=NOPE", "--signal=USR1@x", "--signal=0", "--open-mode=sometimes"):
        assert refusal(bad)
    assert "R:" in refusal("--signal=R:USR1@30")
