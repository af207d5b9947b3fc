"""The protocol is given the registry's builder; it never imports the registry."""

from __future__ import annotations

import pytest

from batchd.sched.core.policy import BuildContext
from batchd.sched.policies.primetime import PrimeTime
from batchd.sched.registry import PolicyError, make_policy


def test_a_context_without_a_builder_says_so() -> None:
    with pytest.raises(ValueError, match="cannot build policy 'fcfs'.*given no builder"):
        BuildContext().build("fcfs")


def test_the_registry_gives_its_builder_to_the_wrapper() -> None:
    policy = make_policy("primetime", {"discipline": "sjf-easy"}, BuildContext(nodes=64))
    assert isinstance(policy, PrimeTime)
    assert policy.inner.name == "sjf-easy"


def test_giving_the_builder_does_not_seed_the_generator_again() -> None:
    ctx = BuildContext(seed=5)
    ctx.rng.random()  # drawn from: a second seeding would start the sequence again
    state = ctx.rng.getstate()
    twin = ctx.given(make_policy)
    assert twin.builder is make_policy and ctx.builder is None
    assert twin.rng is ctx.rng and twin.rng.getstate() == state
    assert twin.given(make_policy) is twin


def test_an_unknown_discipline_is_named_with_the_choices() -> None:
    with pytest.raises(PolicyError) as err:
        make_policy("primetime", {"discipline": "nosuch"})
    text = str(err.value)
    assert "parameter discipline='nosuch': discipline: unknown policy 'nosuch'" in text
    assert "fcfs-easy" in text and text.endswith("(or fcfs, easy)")
