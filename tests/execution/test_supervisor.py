"""Jobs launched through the executor, the launcher and a supervisor, as their owner.

Each test runs real processes: as one of the tests' own users under a root test run
(the identity change of a root daemon), else as the user running the tests.
"""

from __future__ import annotations

import os
import signal
import stat
import time
from pathlib import Path

import pytest

from batchd.execution import spool
from batchd.execution.codes import (
    JOB_EXEC_FAIL1,
    JOB_EXEC_FAIL2,
    JOB_EXEC_KILL_MEM,
    JOB_EXEC_KILL_WALLTIME,
)
from batchd.execution.local import NEVER, RUNNING, Ended, LocalExecutor
from batchd.execution.spec import EXITED, FAILED, MEM, STOPPED, WALLTIME
from batchd.server.launchspec import shell_argv
from users import as_root

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs Linux pidfds")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return (
        Path(f"/proc/{pid}").exists()
        and "Z" not in Path(f"/proc/{pid}/stat").read_text().split(")")[1][:3]
    )


async def test_a_job_runs_as_its_owner_with_its_files_and_exit_code(
    jobs, owner, monkeypatch
) -> None:
    monkeypatch.setenv("BATCHD_SECRET_OF_THE_DAEMON", "leak")
    spec = jobs.launch(
        'id -u; id -g; pwd; echo "tmp=$TMPDIR"; stat -c %a "$TMPDIR"; cat "$PBS_NODEFILE"\n'
        'env | grep -c BATCHD_SECRET; cat; echo "stdin done"; echo oops >&2; exit 42\n'
    )
    end = await jobs.end_of(spec)
    assert end.report is not None
    assert (end.report.status, end.report.reason) == (42, EXITED)
    out = jobs.output(spec).splitlines()
    assert out[:3] == [str(owner.uid), str(owner.gid), owner.home]
    tmpdir = out[3].removeprefix("tmp=")
    assert tmpdir == spec.env["TMPDIR"] and out[4] == "700" and out[5] == "here"
    assert out[6:] == ["0", "stdin done"]  # nothing of the daemon's environment; stdin empty
    assert jobs.output(spec, "e") == "oops\n"
    for letter in "oe":
        info = os.stat(jobs.out / f"job.{letter}{spec.key}")
        assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (owner.uid, 0o600)
    assert not Path(tmpdir).exists() and not Path(f"{tmpdir}.nodes").exists()
    assert 0 <= end.report.end - end.report.start < 10 and end.report.mem > 0


async def test_over_its_walltime_a_job_is_told_and_killed(jobs) -> None:
    began = time.monotonic()
    spec = jobs.launch("echo started; sleep 30\n", walltime=1, kill_delay=1)
    end = await jobs.end_of(spec)
    assert end.report is not None
    assert (end.report.status, end.report.reason) == (JOB_EXEC_KILL_WALLTIME, WALLTIME)
    assert "=>> PBS: job killed: walltime 1 exceeded limit 1" in jobs.output(spec, "e")
    assert time.monotonic() - began < 10


async def test_a_stop_is_sigterm_then_sigkill_after_the_kill_delay(jobs) -> None:
    ready = jobs.out / "trapped"
    polite = jobs.launch("sleep 30\n")
    stubborn = jobs.launch(  # bash runs a script without #! in its own process: the top
        f"trap '' TERM; touch {ready}; sleep 30 & wait; sleep 30\n",
        kill_delay=2, shell="/bin/bash", argv=shell_argv("/bin/bash"),
    )  # fmt: skip
    await _started(jobs, polite, stubborn)
    import asyncio

    while not ready.exists():  # its trap is set (its login shell's profile has run)
        await asyncio.sleep(0.01)
    began = time.monotonic()
    jobs.executor.stop(polite.key)
    jobs.executor.stop(stubborn.key)
    first = await jobs.end_of(polite)
    assert first.report is not None and (first.report.status, first.report.reason) == (
        256 + signal.SIGTERM, STOPPED,
    )  # fmt: skip
    second = await jobs.end_of(stubborn)
    assert second.report is not None
    assert (second.report.status, second.report.reason) == (256 + signal.SIGKILL, STOPPED)
    assert time.monotonic() - began >= 1.9  # it ignored SIGTERM: killed after the delay


async def _started(jobs, *specs) -> None:
    """Until each job's process runs (its supervisor wrote it down)."""
    import asyncio

    for spec in specs:
        for _ in range(500):
            if spool.read_record(jobs.executor.spool_fd, spec.key, spool.STARTED):
                break
            await asyncio.sleep(0.01)


async def test_a_signal_reaches_the_job(jobs) -> None:
    flag = jobs.out / "usr1"
    script = f"trap 'echo got > {flag}; exit 7' USR1\ntouch {flag}.ready\n"
    script += "while :; do sleep 0.05; done\n"
    bash = jobs.launch(script, shell="/bin/bash", argv=shell_argv("/bin/bash"))
    shebang = "#!/bin/sh\n" + script.replace(str(flag), f"{flag}2")
    sh = jobs.launch(shebang, argv=shell_argv("/bin/sh", shebang))  # exec'd: the top process
    import asyncio

    while not (Path(f"{flag}.ready").exists() and Path(f"{flag}2.ready").exists()):
        await asyncio.sleep(0.01)  # their traps are set
    for spec in (bash, sh):
        jobs.executor.signal(spec.key, signal.SIGUSR1)
        end = await jobs.end_of(spec)
        assert end.report is not None and end.report.status == 7
    assert flag.read_text() == "got\n" and Path(f"{flag}2").read_text() == "got\n"


async def test_nothing_the_job_started_outlives_it(jobs) -> None:
    # Three sleepers that leave the script: in a session of their own, immune to
    # hangups, and orphaned by a subshell. Each writes its own pid before it becomes
    # the sleep; the script ends once all three have.
    pids = jobs.out / "pids"
    sleeper = f"sh -c 'echo $$ >> {pids}; exec sleep 300'"
    spec = jobs.launch(
        f"setsid {sleeper} &\nnohup {sleeper} >/dev/null 2>&1 &\n( {sleeper} & )\n"
        f"until [ -f {pids} ] && [ $(wc -l < {pids}) -ge 3 ]; do sleep 0.02; done\nexit 0\n"
    )
    end = await jobs.end_of(spec)
    assert end.report is not None and end.report.status == 0
    started = [int(pid) for pid in pids.read_text().split()]
    assert len(started) == 3
    assert [pid for pid in started if alive(pid)] == []


async def test_a_job_over_its_mem_is_killed(jobs) -> None:
    spec = jobs.launch(
        "exec /usr/bin/python3 -c 'x = bytearray(300 << 20); import time; time.sleep(30)'\n",
        mem=64 << 20,
        kill_delay=1,
    )
    end = await jobs.end_of(spec)
    assert end.report is not None
    assert (end.report.status, end.report.reason) == (JOB_EXEC_KILL_MEM, MEM)
    assert "=>> PBS: job killed: mem" in jobs.output(spec, "e")
    assert end.report.mem > 64 << 20


async def test_jobs_that_cannot_start_say_why(jobs) -> None:
    nowhere = jobs.launch("true\n", stdout="/nonexistent/dir/out")
    homeless = jobs.launch("true\n", home="/nonexistent")
    shell = jobs.launch("true\n", shell="/bin/no-such-shell", argv=["-no-such-shell", "-c", "x"])
    first = await jobs.end_of(nowhere)
    assert first.report is not None and first.report.reason == FAILED
    assert first.report.status == JOB_EXEC_FAIL1
    assert "cannot open the output file /nonexistent/dir/out" in first.report.message
    second = await jobs.end_of(homeless)
    assert second.report is not None and second.report.status == JOB_EXEC_FAIL2
    assert "Could not chdir to home directory" in jobs.output(homeless, "e")
    third = await jobs.end_of(shell)
    assert third.report is not None and third.report.status == JOB_EXEC_FAIL2
    assert "no-such-shell" in third.report.message


async def test_a_shebang_and_an_interpreter_shell(jobs) -> None:
    shebang = jobs.launch("#!/usr/bin/env python3\nimport os\nprint(os.environ['PBS_JOBID'])\n")
    python = jobs.launch(
        "import sys\nprint('argv', sys.argv[1:])\nsys.exit(3)\n",
        shell="/usr/bin/python3", argv=shell_argv("/usr/bin/python3"),
    )  # fmt: skip
    assert (await jobs.end_of(shebang)).report.status == 0  # type: ignore[union-attr]
    assert jobs.output(shebang) == f"{shebang.job_id}\n"
    assert (await jobs.end_of(python)).report.status == 3  # type: ignore[union-attr]
    assert jobs.output(python) == "argv []\n"


async def test_joined_streams_and_an_output_directory(jobs) -> None:
    joined = jobs.launch("echo out; echo err >&2\n", stderr=None)
    folder = jobs.launch("echo here\n", stdout=str(jobs.out), stdout_name="named.o7")
    await jobs.end_of(joined)
    await jobs.end_of(folder)
    assert jobs.output(joined) == "out\nerr\n"
    assert (jobs.out / "named.o7").read_text() == "here\n"


async def test_jobs_go_on_while_the_executor_is_away(jobs, tmp_path) -> None:
    """The daemon stops (its executor closes): running jobs go on; a new executor finds
    each again: running, ended meanwhile, never launched, or lost."""
    longer = jobs.launch("sleep 10; exit 3\n")
    quick = jobs.launch("exit 5\n")
    doomed = jobs.launch("sleep 30\n")
    await _started(jobs, longer, quick, doomed)
    jobs.executor.close()
    spool_fd = spool.open_spool(str(tmp_path / "spool"))
    supervisor = spool.lock_pid(spool_fd, doomed.key) or 0
    started = spool.read_record(spool_fd, doomed.key, spool.STARTED) or ""
    os.close(spool_fd)
    os.kill(supervisor, signal.SIGKILL)  # lost: its end is never written
    time.sleep(0.3)
    import asyncio
    import json

    again = LocalExecutor(str(tmp_path / "spool"), jobs.executor.cgroup)
    woke = asyncio.Event()
    again.start(asyncio.get_running_loop(), woke.set)
    jobs.executor, jobs.woke = again, woke
    assert again.attach(longer.key) == RUNNING
    ended = again.attach(quick.key)
    assert isinstance(ended, Ended) and ended.report is not None and ended.report.status == 5
    assert again.attach("999") == NEVER
    lost = again.attach(doomed.key)
    assert isinstance(lost, Ended) and lost.report is None and "without" in lost.why
    job_pid = json.loads(started)["pid"]
    time.sleep(0.2)
    assert not alive(job_pid)  # the lost supervisor's job was killed, its files removed
    assert not Path(doomed.env["TMPDIR"]).exists()
    assert not Path(doomed.env["PBS_NODEFILE"]).exists()
    end = await jobs.end_of(longer)
    assert end.report is not None and end.report.status == 3


@pytest.mark.skipif(not as_root(), reason="the identity change of a root daemon")
async def test_a_job_of_a_root_daemon_has_none_of_its_rights(jobs, owner) -> None:
    spec = jobs.launch(  # the supervisor is the parent of the job's session leader
        "leader=$(ps -o sid= -p $$ | tr -d ' '); sup=$(ps -o ppid= -p $leader | tr -d ' ')\n"
        "cat /etc/shadow >/dev/null 2>&1 && echo read-shadow\n"
        'kill -0 "$sup" 2>/dev/null && echo can-signal-supervisor\n'
        "grep -E '^(Uid|Gid|Groups):' /proc/self/status\n"
        "cat /proc/$sup/environ >/dev/null 2>&1 && echo read-supervisor\n"
        'echo "sup=$sup"\n'
    )
    await jobs.end_of(spec)
    out = jobs.output(spec)
    assert "read-shadow" not in out and "can-signal" not in out and "read-supervisor" not in out
    lines = dict(line.replace("=", ":", 1).split(":", 1) for line in out.splitlines())
    assert lines["sup"].isdigit() and int(lines["sup"]) > 1
    assert lines["Uid"].split() == [str(owner.uid)] * 4
    assert lines["Gid"].split() == [str(owner.gid)] * 4
    assert "0" not in lines["Groups"].split()


async def test_a_warning_signal_reaches_the_steps_before_the_walltime(jobs) -> None:
    """Slurm's --signal=USR2@2 on a 3 s walltime: the step (a child of the script, which
    has a #! line as sbatch's must) gets SIGUSR2 a second in; the script does not (it
    would die of it), then the walltime ends it."""
    step = "trap 'echo step-warned; exit 0' USR2; while :; do sleep 0.1; done"
    script = f'#!/bin/sh\nsh -c "{step}" &\nwait\necho script-alive\nsleep 30\n'
    spec = jobs.launch(
        script, argv=shell_argv("/bin/sh", script),
        walltime=3, kill_delay=1, warn_signal=signal.SIGUSR2, warn_before=2,
    )  # fmt: skip
    end = await jobs.end_of(spec)
    assert end.report is not None and end.report.reason == "walltime"
    out = jobs.output(spec)
    assert out.splitlines()[:2] == ["step-warned", "script-alive"], out


async def test_a_warning_signal_with_b_goes_to_the_script_alone(jobs) -> None:
    script = "#!/bin/sh\ntrap 'echo script-warned; exit 4' USR1\nsleep 30 &\nwait\n"
    spec = jobs.launch(
        script, argv=shell_argv("/bin/sh", script),
        walltime=3, kill_delay=1, warn_signal=signal.SIGUSR1, warn_before=2, warn_script=True,
    )  # fmt: skip
    end = await jobs.end_of(spec)
    assert end.report is not None and end.report.status == 4
    assert jobs.output(spec) == "script-warned\n"


async def test_output_is_appended_when_asked(jobs) -> None:
    first = jobs.launch("echo one\n")
    await jobs.end_of(first)
    again = jobs.launch("echo two\n", stdout=first.stdout, append_output=True)
    await jobs.end_of(again)
    assert Path(first.stdout or "").read_text() == "one\ntwo\n"
    truncated = jobs.launch("echo three\n", stdout=first.stdout)
    await jobs.end_of(truncated)
    assert Path(first.stdout or "").read_text() == "three\n"
