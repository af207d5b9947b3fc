"""The policy registry: the names it knows, what it builds by each, and what it refuses."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel, Json

from batchd.sched import registry
from batchd.sched.core.order import fcfs_key, ljf_key, prio_key, sjf_key
from batchd.sched.core.policy import BuildContext, Policy
from batchd.sched.policies.conservative import ConservativeParams, ConservativePolicy
from batchd.sched.policies.easy import EasyPolicy
from batchd.sched.policies.inorder import InOrderPolicy
from batchd.sched.registry import (
    PolicyError,
    PolicySpec,
    get_spec,
    make_policy,
    parse_param_args,
    parse_params,
    policy_names,
    register,
)

# The policy catalog the daemon serves: every built-in policy, in this order, with its line.
BUILT_IN = {
    "fcfs": "first come first served, no backfilling: start in order while the head fits",
    "fcfs-easy": "FCFS order with EASY backfilling (one reservation)",
    "fcfs-cons": "FCFS order with conservative backfilling on a full plan "
    "(replan=rebuild|compress|guarded, default guarded)",
    "sjf-easy": "SJF order with EASY backfilling (one reservation)",
    "sjf-cons": "SJF order with conservative backfilling on a full plan "
    "(replan=rebuild|compress|guarded, default rebuild)",
    "ljf-easy": "LJF order with EASY backfilling (one reservation)",
    "ljf-cons": "LJF order with conservative backfilling on a full plan "
    "(replan=rebuild|compress|guarded, default rebuild)",
    "dynp-basic": "basic dynP: AERT of the waiting queue against bounds picks SJF/FCFS/LJF "
    "(lower=7200, upper=9000, threshold=5)",
    "dynp": "self-tuning dynP: plans FCFS, SJF and LJF at every step and keeps the best "
    "(decider=simple|advanced, quality=ms|art|artww|sldww|awt, slackness=PCT, "
    "reduced_future=K|6h, min_backlog=2, fcfs_candidate=sorted|as-queued|as-queued-sjf)",
    "primetime": "prime/non-prime time (Lo and Mache's prime-time paper): jobs over the "
    "prime limits wait for non-prime time (prime_nodes=N|P%, prime_runtime=HH:MM:SS|P%, "
    "discipline=fcfs|easy|POLICY, overflow=kill|requeue, calendar=default|HOLIDAYS_FILE, "
    "timezone=ZONE, must_fit=true)",
    "prio-fifo": "strict priority classes (the trace's priority_class, 0 first; after "
    "qsub -p), FCFS within each, EASY backfilling (Lee's utility paper)",
    "utility-easy": "EASY backfilling on the order by current utility per node-hour: what "
    "a job earns if it starts now and runs its estimate (Lee's utility paper)",
    "ga": "EASY backfilling on the queue order a genetic search finds for aggregate "
    "utility at every step (Lee's utility paper; population=20, generations=100, "
    "mutation=0.1, searched=200, budget=SECONDS, seed=S)",
    "moldable-greedy": "moldable jobs (Sabin et al.'s moldable paper): each takes, when it "
    "arrives, the width of its range that ends it soonest on the conservative plan "
    "(Cirne), then FCFS conservative backfilling",
    "moldable-fairshare": "moldable jobs (Sabin et al.'s moldable paper): FCFS with EASY "
    "backfilling; a job's width, decided when it starts or is reserved, is the one that "
    "ends it soonest up to its fair-share limit: obf x its square-root weight fraction x "
    "the system (obf=1)",
    "moldable-efficiency": "moldable-fairshare with Sabin et al.'s moldable paper's "
    "efficiency factor: limits move from jobs with a flat speedup to jobs with a steep "
    "one, by up to ef x the fair share (obf=1, ef=0.5)",
    "moldable-iterative": "moldable jobs (Sabin et al.'s moldable paper, Fig. 6): at every "
    "step each waiting job from its minimum width, one node at a time to the job gaining "
    "most while the FCFS conservative plan's average turnaround improves",
}
NAMES = ", ".join(BUILT_IN)


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """The built-in policies registered anew, as at import (where no test sees it happen)."""
    monkeypatch.setattr(registry, "_REGISTRY", {})
    monkeypatch.setattr(registry, "_PLUGINS_LOADED", True)
    registry._builtin()


def test_every_built_in_policy_is_listed_with_its_description() -> None:
    assert {n: get_spec(n).description for n in policy_names()} == BUILT_IN
    assert [get_spec(n).name for n in BUILT_IN] == list(BUILT_IN)


def test_parameter_names_come_from_each_policys_model() -> None:
    assert get_spec("fcfs").param_names() == []
    assert get_spec("fcfs-easy").params_model() is None
    assert get_spec("sjf-cons").param_names() == ["replan", "depth"]
    assert get_spec("ljf-cons").params_model() is ConservativeParams
    assert get_spec("moldable-efficiency").param_names() == ["obf", "ef"]
    assert get_spec("dynp-basic").param_names() == ["lower", "upper", "threshold"]


def test_a_params_model_given_as_a_class_is_used_as_it_is() -> None:
    spec = PolicySpec("x", "x", lambda p, c: make_policy("fcfs"), ConservativeParams)
    assert spec.params_model() is ConservativeParams
    assert spec.param_names() == ["replan", "depth"]


@pytest.mark.parametrize(
    ("name", "kind", "key"),
    [
        ("fcfs", InOrderPolicy, fcfs_key),
        ("fcfs-easy", EasyPolicy, fcfs_key),
        ("sjf-easy", EasyPolicy, sjf_key),
        ("ljf-easy", EasyPolicy, ljf_key),
        ("prio-fifo", EasyPolicy, prio_key),
    ],
)
def test_ordered_policies_are_built_in_their_order(name: str, kind: type, key: Any) -> None:
    policy = make_policy(name)
    assert type(policy) is kind
    assert policy.name == name
    assert policy.queue.key is key  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("name", "key", "default"),
    [("fcfs-cons", fcfs_key, "guarded"), ("sjf-cons", sjf_key, "rebuild"),
     ("ljf-cons", ljf_key, "rebuild")],
)  # fmt: skip
def test_conservative_policies_replan_by_default_or_as_told(
    name: str, key: Any, default: str
) -> None:
    policy = make_policy(name)
    assert isinstance(policy, ConservativePolicy)
    assert (policy.name, policy.queue.key, policy.replan_mode) == (name, key, default)
    told = make_policy(name, {"replan": "compress"})
    assert isinstance(told, ConservativePolicy) and told.replan_mode == "compress"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("dynp-basic", "DynPBasic"),
        ("dynp", "DynP"),
        ("primetime", "PrimeTime"),
        ("utility-easy", "UtilityEasy"),
        ("ga", "GeneticPolicy"),
        ("moldable-greedy", "MoldableGreedy"),
        ("moldable-iterative", "MoldableIterative"),
    ],
)
def test_the_other_policies_are_built_by_their_names(name: str, kind: str) -> None:
    policy = make_policy(name, context=BuildContext(machine=2))
    assert (type(policy).__name__, policy.name, policy.machine) == (kind, name, 2)


def test_the_moldable_fairshare_policies_take_their_factors_and_the_size() -> None:
    fair = make_policy("moldable-fairshare", {"obf": "2"}, BuildContext(machine=3, nodes=7))
    assert (fair.name, fair.obf, fair.ef, fair.nodes, fair.machine) == (  # type: ignore[attr-defined]
        "moldable-fairshare", 2.0, 0.0, 7, 3)  # fmt: skip
    eff = make_policy("moldable-efficiency", {"ef": "0.25"}, BuildContext(nodes=5))
    assert (eff.name, eff.obf, eff.ef, eff.nodes, eff.machine) == (  # type: ignore[attr-defined]
        "moldable-efficiency", 1.0, 0.25, 5, 0)  # fmt: skip


def test_the_parameters_reach_the_policy() -> None:
    dynp = make_policy("dynp", {"decider": "simple", "min_backlog": "3"})
    assert dynp.params.decider == "simple" and dynp.params.min_backlog == 3  # type: ignore[attr-defined]
    basic = make_policy("dynp-basic", {"lower": "100"})
    assert basic.params.lower == 100  # type: ignore[attr-defined]
    ga = make_policy("ga", {"population": "7"})
    assert ga.params.population == 7  # type: ignore[attr-defined]


def test_an_unknown_policy_is_refused_with_the_names_to_choose_from() -> None:
    with pytest.raises(PolicyError) as err:
        make_policy("nope")
    assert str(err.value) == f"unknown policy 'nope'; choose one of: {NAMES}"


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("fcfs", {"a": "1", "b": "2"}, "policy fcfs: unknown parameter 'a' (allowed: none)"),
        ("fcfs-cons", {"x": "1"}, "policy fcfs-cons: unknown parameter 'x' (allowed: replan, depth)"),
        ("moldable-efficiency", {"x": "1"},
         "policy moldable-efficiency: unknown parameter 'x' (allowed: obf, ef)"),
        ("fcfs-cons", {"replan": "x"},
         "policy fcfs-cons: parameter replan='x': Input should be 'rebuild', 'compress' or "
         "'guarded'"),
        ("moldable-fairshare", {"obf": "0"},
         "policy moldable-fairshare: parameter obf='0': Input should be greater than 0"),
        ("dynp-basic", {"lower": "9000", "upper": "7200"},
         "policy dynp-basic: lower (9000) must not exceed upper (7200)"),
        ("primetime", {"discipline": "nope"},
         f"policy primetime: parameter discipline='nope': discipline: unknown policy 'nope'; "
         f"choose one of: {NAMES} (or fcfs, easy)"),
    ],
)  # fmt: skip
def test_bad_parameters_are_refused_by_name(
    name: str, params: dict[str, str], message: str
) -> None:
    with pytest.raises(PolicyError) as err:
        make_policy(name, params)
    assert str(err.value) == message


def test_an_extra_parameter_of_a_model_without_fields_says_none_are_allowed() -> None:
    class NoFields(BaseModel):
        model_config = {"extra": "forbid"}

    spec = PolicySpec("bare", "bare", lambda p, c: make_policy("fcfs"), NoFields)
    with pytest.raises(PolicyError) as err:
        parse_params(spec, {"k": "v"})
    assert str(err.value) == "policy bare: unknown parameter 'k' (allowed: none)"
    assert parse_params(get_spec("fcfs"), {}) is None


def test_a_name_registered_twice_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_REGISTRY", {})
    spec = PolicySpec("mine", "mine", lambda p, c: make_policy("fcfs"))
    assert register(spec) is spec
    with pytest.raises(PolicyError, match=r"^policy 'mine' is registered twice$"):
        register(PolicySpec("mine", "other", spec.build))
    assert dict(registry._REGISTRY) == {"mine": spec}


def _plugins(monkeypatch: pytest.MonkeyPatch, *specs: object) -> list[str]:
    """The entry points the registry will find: each loads one of ``specs``."""
    asked: list[str] = []

    def entry_points(group: str) -> list[Any]:
        asked.append(group)
        return [SimpleNamespace(name=f"ep{i}", load=lambda s=s: s) for i, s in enumerate(specs)]

    monkeypatch.setattr("importlib.metadata.entry_points", entry_points)
    monkeypatch.setattr(registry, "_PLUGINS_LOADED", False)
    return asked


def _site_policy(_params: Any, _ctx: BuildContext) -> Policy:
    return InOrderPolicy("site", fcfs_key)


def test_a_site_policy_comes_from_an_entry_point_once(monkeypatch: pytest.MonkeyPatch) -> None:
    site = PolicySpec("site", "a site's own", _site_policy)
    clash = PolicySpec("fcfs", "not the built-in one", _site_policy)
    asked = _plugins(monkeypatch, site, clash)
    policy = make_policy("site", context=BuildContext(machine=1))
    assert (policy.name, policy.machine) == ("site", 1)
    assert asked == ["batchd.policies"]
    assert get_spec("fcfs").description == BUILT_IN["fcfs"]  # a built-in name stays built-in
    assert policy_names() == [*BUILT_IN, "site"]
    assert asked == ["batchd.policies"]  # loaded once


def test_built_in_names_do_not_load_the_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _plugins(monkeypatch)
    get_spec("fcfs")
    assert asked == []
    policy_names()
    assert asked == ["batchd.policies"]


def test_an_entry_point_that_is_not_a_spec_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    _plugins(monkeypatch, "not a spec")
    with pytest.raises(PolicyError, match=r"^entry point 'ep0' is not a batchd PolicySpec$"):
        policy_names()


def test_param_args_are_split_at_the_first_equals_and_stripped() -> None:
    assert parse_param_args([" a = 1 ", "b=x=y", "c="]) == {"a": "1", "b": "x=y", "c": ""}
    assert parse_param_args([]) == {}
    for bad in ("novalue", "=1", " =1"):
        with pytest.raises(PolicyError) as err:
            parse_param_args(["ok=1", bad])
        assert str(err.value) == f"--param {bad!r}: expected KEY=VALUE"


def test_an_error_inside_a_parameter_names_its_place() -> None:
    class Pairs(BaseModel):
        pair: Json[list[int]]

    spec = PolicySpec("paired", "paired", lambda p, c: make_policy("fcfs"), Pairs)
    assert parse_params(spec, {"pair": "[1, 2]"}).pair == [1, 2]
    with pytest.raises(PolicyError) as err:
        parse_params(spec, {"pair": '[1, "a"]'})
    assert str(err.value) == (
        "policy paired: parameter pair.1='': Input should be a valid integer, unable to "
        "parse string as an integer"
    )
