"""Everything the dynP study asks of the core: whether a policy can be built, and one replay.

The core is refactored on its own schedule; this is the one module to adapt.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batchd_studies.framework.results import as_plain


def policy_error(policy: str, params: Mapping[str, str]) -> str | None:
    """Why ``policy`` with ``params`` cannot be built (unknown name, bad parameter), or None."""
    from batchd.replay import policy_error as replay_policy_error

    return replay_policy_error(policy, params)


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
