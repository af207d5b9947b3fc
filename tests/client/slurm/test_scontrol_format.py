"""scontrol's layouts and update parsing, from job, node and queue views written by
hand (no daemon)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from batchclient.slurm.command import SlurmError
from batchclient.slurm.joblist import Row
from batchclient.slurm.scontrol_info import config_lines, node_record, partition_record
from batchclient.slurm.scontrol_job import record
from batchclient.slurm.scontrol_update import parse_update

T0 = 1_700_000_000  # 2023-11-14T22:13:20 UTC


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def job(**over: object) -> dict[str, object]:
    view: dict[str, object] = {
        "seq": 12, "name": "x", "owner": "root", "queue": "batch", "state": "R",
        "nodes": 2, "walltime": 3600, "priority": 0, "hold_types": "", "depend": None,
        "ctime": T0, "etime": T0, "stime": T0 + 10, "end_time": None, "est_start": T0 + 10,
        "elapsed": 75, "exec_host": ["node001", "node002"],
        "resource_list": {"ncpus": "2"}, "exit_status": None, "outcome": None,
        "rerunable": True, "output_path": "login1:/home/root/x.out", "error_path": None,
        "join_path": "oe", "array_index": None,
    }  # fmt: skip
    view.update(over)
    return view


RUNNING = """\
JobId=12 JobName=x
   UserId=root(0) GroupId=root(0) MCS_label=N/A
   Priority=1025 Nice=0 Account=(null) QOS=normal
   JobState=RUNNING Reason=None Dependency=(null)
   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0
   RunTime=00:01:15 TimeLimit=01:00:00 TimeMin=N/A
   SubmitTime=2023-11-14T22:13:20 EligibleTime=2023-11-14T22:13:20
   AccrueTime=2023-11-14T22:13:20
   StartTime=2023-11-14T22:13:30 EndTime=2023-11-14T23:13:30 Deadline=N/A
   SuspendTime=None SecsPreSuspend=0 LastSchedEval=Unknown Scheduler=Main
   Partition=batch AllocNode:Sid=login1:0
   ReqNodeList=(null) ExcNodeList=(null)
   NodeList=node[001-002]
   BatchHost=node001
   NumNodes=2 NumCPUs=2 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*
   ReqTRES=cpu=2,node=2,billing=2
   AllocTRES=cpu=2,node=2,billing=2
   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*
   MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0
   Features=(null) DelayBoot=00:00:00
   OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)
   Command=(null)
   WorkDir=(null)
   StdErr=/home/root/x.out
   StdIn=/dev/null
   StdOut=/home/root/x.out
   \n
"""


def test_a_running_job_in_slurms_layout() -> None:
    assert record(Row(job()), one_liner=False) == RUNNING


def test_one_liner_is_the_same_pairs_on_one_line() -> None:
    line = record(Row(job()), one_liner=True)
    assert line.endswith(" \n") and line.count("\n") == 1
    assert line.split() == RUNNING.split()


def test_a_held_task_of_an_array_and_its_folded_siblings() -> None:
    held = job(state="H", hold_types="u", stime=None, est_start=None, elapsed=None,
               exec_host=[], array_index=3, workdir="/w", output_path=None,
               slurm={"ntasks": 4, "cpus_per_task": 2, "ntasks_per_node": 2,
                      "mem_per_node_mb": 100})  # fmt: skip
    text = record(Row(held, [3, 4, 5, 7]), one_liner=False)
    lines = [line.strip() for line in text.splitlines()]
    assert lines[0] == "JobId=12 ArrayJobId=12 ArrayTaskId=3-5,7 JobName=x"
    assert "Priority=0 Nice=0 Account=(null) QOS=normal" in lines
    assert "JobState=PENDING Reason=JobHeldUser Dependency=(null)" in lines
    assert "StartTime=Unknown EndTime=Unknown Deadline=N/A" in lines
    assert "NodeList=(null)" in lines and not any(x.startswith("BatchHost") for x in lines)
    assert "NumNodes=2 NumCPUs=8 NumTasks=4 CPUs/Task=2 ReqB:S:C:T=0:0:*:*" in lines
    assert "ReqTRES=cpu=8,mem=200M,node=2,billing=8" in lines
    assert "AllocTRES=(null)" in lines
    assert "NtasksPerN:B:S:C=2:0:*:*" in lines[lines.index("AllocTRES=(null)") + 1]
    assert "MinCPUsNode=2 MinMemoryNode=200M MinTmpDiskNode=0" in lines
    assert "StdOut=/w/slurm-12_3.out" in lines and "WorkDir=/w" in lines


def test_an_ended_job_shows_its_exit_code_and_reason() -> None:
    done = job(state="F", outcome="failed", exit_status=3, end_time=T0 + 70, elapsed=60)
    lines = [line.strip() for line in record(Row(done), False).splitlines()]
    assert "JobState=FAILED Reason=NonZeroExitCode Dependency=(null)" in lines
    assert "Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=3:0" in lines
    assert "StartTime=2023-11-14T22:13:30 EndTime=2023-11-14T22:14:30 Deadline=N/A" in lines
    assert "RunTime=00:01:00 TimeLimit=01:00:00 TimeMin=N/A" in lines


NODE = {"name": "node003", "machine": "m", "state": "free", "jobs": ["7.m"],
        "resources_available": {"ncpus": "8", "mem": "16gb"},
        "resources_assigned": {"ncpus": "3", "mem": "2gb"}, "comment": None}  # fmt: skip
QUEUES = [
    {"name": "batch", "machine": "m", "default": True, "enabled": True, "started": True,
     "max_nodes": None, "max_walltime": None, "default_walltime": 3600},
    {"name": "short", "machine": "m", "default": False, "enabled": False, "started": True,
     "max_nodes": 2, "max_walltime": 1800, "default_walltime": 600},
    {"name": "other", "machine": "n", "default": False, "enabled": True, "started": False,
     "max_nodes": None, "max_walltime": None, "default_walltime": 60},
]  # fmt: skip


def test_a_shared_node() -> None:
    assert node_record(NODE, QUEUES, one_liner=False) == (
        "NodeName=node003 Arch=(null) CoresPerSocket=8 \n"
        "   CPUAlloc=3 CPUEfctv=8 CPUTot=8 CPULoad=N/A\n"
        "   AvailableFeatures=(null)\n"
        "   ActiveFeatures=(null)\n"
        "   Gres=(null)\n"
        "   NodeAddr=node003 NodeHostName=node003 \n"
        "   RealMemory=16384 AllocMem=2048 FreeMem=N/A Sockets=1 Boards=1\n"
        "   State=MIXED ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
        "   Partitions=batch,short \n"
        "   BootTime=None SlurmdStartTime=None\n"
        "   LastBusyTime=Unknown ResumeAfterTime=None\n"
        "   CfgTRES=cpu=8,mem=16384M,billing=8\n"
        "   AllocTRES=cpu=3,mem=2048M\n"
        "   CurrentWatts=0 AveWatts=0\n\n"
    )


def test_a_drained_node_shows_its_reason() -> None:
    node = dict(NODE, state="offline", jobs=[], comment="disk  failed")
    text = node_record(node, QUEUES, one_liner=True)
    assert " State=IDLE+DRAIN " in text and " CPUAlloc=0 " in text
    assert text.endswith(" Reason=disk failed\n")


def test_partitions_and_their_states() -> None:
    nodes = [dict(NODE, name=f"node00{i}") for i in (1, 2, 3)]
    text = partition_record(QUEUES[1], nodes, one_liner=False)
    assert text.splitlines()[:6] == [
        "PartitionName=short",
        "   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL",
        "   AllocNodes=ALL Default=NO QoS=N/A",
        "   DefaultTime=00:10:00 DisableRootJobs=NO ExclusiveUser=NO ExclusiveTopo=NO "
        "GraceTime=0 Hidden=NO",
        "   MaxNodes=2 MaxTime=00:30:00 MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED "
        "MaxCPUsPerSocket=UNLIMITED",
        "   Nodes=node[001-003]",
    ]
    assert "   State=DRAIN TotalCPUs=24 TotalNodes=3 SelectTypeParameters=NONE" in text
    assert "   TRES=cpu=24,mem=49152M,node=3,billing=24" in text
    assert "MaxTime=UNLIMITED" in partition_record(QUEUES[0], nodes, False)
    other = partition_record(QUEUES[2], nodes, one_liner=True)
    assert "Nodes=(null)" in other and "State=DOWN TotalCPUs=0 TotalNodes=0" in other


def test_config_lines_as_snakemake_reads_them() -> None:
    text = config_lines({"name": "hpc", "version": "1.2", "now": T0, "policy": "easy"})
    assert text.splitlines() == [
        "Configuration data as of 2023-11-14T22:13:20",
        "BatchdVersion           = 1.2",
        "ClusterName             = hpc",
        "MinJobAge               = 300 sec",
        "SchedulerType           = batchd/easy",
    ]


def test_update_keys_batchd_supports() -> None:
    sels, body = parse_update(
        ["JobId=12,13_2", "TimeLimit=1-2", "name=n", "Partition=short", "NumNodes=3-3"]
    )
    assert [(s.seq, s.tasks) for s in sels] == [(12, None), (13, (2,))]
    assert body == {"walltime": 93600, "name": "n", "queue": "short", "nodes": 3}
    assert parse_update(["jobid=5", "JobName=a"])[1] == {"name": "a"}


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["JobId=1", "StartTime=now"], "Update of this parameter is not supported: StartTime=now"),
        (["JobId=1", "Nice=5"], "Update of this parameter is not supported: Nice=5"),
        (["JobId=1", "TimeLimit=abc"], "Invalid TimeLimit value: abc"),
        (
            ["JobId=1", "TimeLimit=UNLIMITED"],
            "Invalid TimeLimit value: UNLIMITED (batchd needs a limit)",
        ),
        (["JobId=1", "NumNodes=2-4"], "Invalid node count specified: 2-4"),
        (["JobId=x", "TimeLimit=5"], "Invalid JobId value: x"),
        (["TimeLimit=5"], "No valid entity in update command"),
        (["JobId=1"], "No changes specified"),
    ],
)
def test_update_refusals(words: list[str], message: str) -> None:
    with pytest.raises(SlurmError) as err:
        parse_update(words)
    assert str(err.value) == message
