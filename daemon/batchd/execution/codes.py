"""Exit statuses as OpenPBS reports them (``src/include/job.h``, ``JOB_EXEC_*``).

A job's ``Exit_status`` is its script's exit code (0..255) when the script ended
on its own; 256 + N when its top process was killed by signal N; a negative
``JOB_EXEC_*`` value when the system ended it or could not start it. Only the values
batchd gives are here; job.h has the others (-3 retry, -4, -11, -21, -28...).
"""

from __future__ import annotations

import os

JOB_EXEC_FAIL1 = -1  # job exec failed, before files, no retry
JOB_EXEC_FAIL2 = -2  # job exec failed, after files, no retry
JOB_EXEC_FAILUID = -10  # invalid uid/gid for job
JOB_EXEC_KILL_MEM = -27  # job exec failed due to exceeding mem
JOB_EXEC_KILL_WALLTIME = -29  # job exec failed due to exceeding walltime

SIGNAL_BASE = 256  # Exit_status of a job whose top process a signal killed: 256 + signal


def exit_status(wait_status: int) -> int:
    """The Exit_status of a job from the wait status of its top process."""
    if os.WIFSIGNALED(wait_status):
        return SIGNAL_BASE + os.WTERMSIG(wait_status)
    if os.WIFEXITED(wait_status):
        return os.WEXITSTATUS(wait_status)
    return JOB_EXEC_FAIL2  # neither exited nor killed: cannot happen for a reaped process
