"""Acting on jobs by id (qdel, qhold, qrls, qalter): go on past failures, one line each."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from .cli import EXIT_REFUSED, EXIT_UNKNOWN_JOB, UsageError, say
from .jobattrs import is_job_id
from .transport import ApiError, Client, quote


def check_ids(ids: Sequence[str]) -> list[str]:
    """All ids well formed (``12`` or ``12.server``), or a usage error before anything is sent."""
    for jid in ids:
        if not is_job_id(jid):
            raise UsageError(f"illegally formed job identifier: {jid}")
    return list(ids)


def job_path(jid: str, suffix: str = "") -> str:
    return f"/jobs/{quote(jid)}{suffix}"


def refusal(message: str, jid: str) -> str:
    """PBS's ``<message> <job id>``, unless the message names the job already."""
    if re.search(rf"(?<![\w.]){re.escape(jid)}(?!\w)", message):
        return message
    return f"{message} {jid}"


def for_each_job(
    prog: str,
    ids: Sequence[str],
    action: Callable[[Client, str], object],
    client: Client | None = None,
) -> int:
    """Apply ``action`` to every job; 0 if all succeeded, else the last failure's code."""
    client = client or Client()
    code = 0
    for jid in ids:
        try:
            action(client, jid)
        except ApiError as exc:
            if exc.status == 404:
                say(prog, f"Unknown Job Id {jid}")
                code = EXIT_UNKNOWN_JOB
            else:
                say(prog, refusal(exc.message, jid))
                code = EXIT_REFUSED
    return code
