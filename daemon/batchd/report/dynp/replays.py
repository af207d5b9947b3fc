"""Everything the dynP study asks of the core: the policy registry and one replay.

The core is refactored on its own schedule; this is the one module to adapt.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batchd.report.framework.results import as_plain


def policy_error(policy: str, params: Mapping[str, str]) -> str | None:
    """Why ``policy`` with ``params`` cannot be built (unknown name, bad parameter), or None."""
    from batchd.sched.registry import make_policy

    try:
        make_policy(policy, dict(params))
    except ValueError as exc:
        return str(exc)
    return None


def replay_summary(
    jobset: str,
    policy: str,
    params: Mapping[str, str],
    *,
    nodes: int,
    shrink: float,
    perfect_estimates: bool,
) -> dict[str, Any]:
    """Replay a job set and return the summary as plain JSON data."""
    from batchd.replay import ReplayOptions, run_replay

    opts = ReplayOptions(
        trace=jobset,
        policy=policy,
        params=dict(params),
        nodes=nodes,
        shrink=shrink,
        perfect_estimates=perfect_estimates,
    )
    summary: dict[str, Any] = as_plain(run_replay(opts).summary)
    return summary
