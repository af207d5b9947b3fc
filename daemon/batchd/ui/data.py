"""What the page reads: a job's facts as one array (``GET /plan`` and a replay's chart
send the same; nodes as runs, ``model.machine.node_runs``), and the time zone by name."""

from __future__ import annotations

import datetime as dt
import os

# A job row: seq, state letter, machine index (None: waiting for any machine), width,
# walltime, start (running: when it started; waiting: its planned start, None if none),
# end (a finished job's, in a replay's chart), its nodes as runs per part
# ([machine, first, count, first, count, ...]), why it waits (an index into the
# answer's reasons).
JOB_FIELDS = ("seq", "state", "machine", "nodes", "walltime", "start", "end", "alloc", "reason")
# Beside it, what users wrote: the job's name, its owner, its queue.
INFO_FIELDS = ("seq", "name", "owner", "queue")


def zone_name(tz: dt.tzinfo | None) -> str:
    """The IANA name of a time zone for the page's clock: the host's zone (read from
    /etc/localtime, key "localtime") by the file it links to; UTC when it has none."""
    key = getattr(tz, "key", None)
    if key == "localtime":
        target = os.path.realpath("/etc/localtime")
        _, sep, name = target.partition("/zoneinfo/")
        return name if sep and name else "UTC"
    return key if isinstance(key, str) else "UTC"


def utc_offset(tz: dt.tzinfo | None, t: int) -> int:
    """Seconds east of UTC at ``t``: the page's clock when its browser lacks the zone."""
    if tz is None:
        return 0
    delta = dt.datetime.fromtimestamp(t, tz).utcoffset()
    return int(delta.total_seconds()) if delta is not None else 0
