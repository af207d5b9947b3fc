"""``batchd.replay.policy_error``: whether a replay could build a policy, and why not."""

from __future__ import annotations

from batchd.replay import policy_error


def test_a_policy_a_replay_can_build_has_no_error() -> None:
    assert policy_error("fcfs-easy", {}) is None
    assert policy_error("dynp", {"decider": "advanced", "quality": "artww"}) is None


def test_an_unknown_policy_or_parameter_is_named() -> None:
    unknown = policy_error("no-such-policy", {})
    assert unknown is not None and "no-such-policy" in unknown
    bad = policy_error("dynp", {"decider": "sideways"})
    assert bad is not None and "sideways" in bad
