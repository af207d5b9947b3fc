"""``qsub -W block=true``: wait for the job to end and exit with its exit status.

The client asks for the job at growing intervals (a fifth of a second, doubling to
two seconds), never in a busy loop. It exits as PBS's qsub does: with the job's
exit status as a process can return it (the status's low 8 bits: 0 for a job that
ran to its end, 271 for a deleted running job gives 15, a walltime kill's -29 gives
227), and with 3 for a job that was deleted, or otherwise ended, without running.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from .cli import UsageError
from .hints import Any
from .transport import Client, quote

NEVER_RAN = 3
FIRST_WAIT, LONGEST_WAIT = 0.2, 2.0


def split_block(values: Sequence[str]) -> tuple[list[str], bool]:
    """The ``-W`` values other than ``block=...``, and whether blocking was asked for."""
    rest: list[str] = []
    block = False
    for value in values:
        name, eq, flag = value.partition("=")
        if name.strip() != "block":
            rest.append(value)
            continue
        word = flag.strip().lower()
        if not eq or word not in ("true", "false", "t", "f", "y", "n", "1", "0"):
            raise UsageError(f"-W {value}: give block=true or block=false")
        block = word in ("true", "t", "y", "1")
    return rest, block


def exit_code(job: dict[str, Any]) -> int:
    """What ``qsub -W block=true`` exits with for a finished job."""
    status = job.get("exit_status")
    if job.get("stime") is None or status is None:
        return NEVER_RAN
    return int(status) & 0xFF


def wait_for(client: Client, job_id: str, sleep: Callable[[float], None] = time.sleep) -> int:
    wait = FIRST_WAIT
    while True:
        job: dict[str, Any] = client.get(f"/jobs/{quote(job_id)}")
        if job["state"] == "F":
            return exit_code(job)
        sleep(wait)
        wait = min(wait * 2, LONGEST_WAIT)
