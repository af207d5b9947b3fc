"""The daemon's file descriptors: how many it may open, and how many its connections may hold.

Connections are the one thing callers can multiply at will. The rest of the
descriptors stay for the daemon's own work: the state file and its journal, the
job spool, the log, the supervisors of jobs that run for real.
"""

from __future__ import annotations

import resource

# Descriptors kept out of the connections' reach: at least this many, at least a
# quarter of the limit.
RESERVED_MIN = 128
# A soft limit raised to an unlimited hard limit stops here.
RAISE_CAP = 1 << 20


def raise_nofile() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard limit where it is lower; the soft limit
    in force afterwards."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = RAISE_CAP if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass  # the soft limit stays as it was
    return RAISE_CAP if soft == resource.RLIM_INFINITY else soft


def connection_budget(nofile: int) -> int:
    """How many descriptors connections may hold under a limit of ``nofile``."""
    return max(0, nofile - max(RESERVED_MIN, nofile // 4))
