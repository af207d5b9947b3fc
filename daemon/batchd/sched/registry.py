"""The one registry of scheduling policies, by name.

Built-in policies register here; a site adds its own through the
``batchd.policies`` entry-point group (the entry point is a ``PolicySpec``).
Parameters arrive as strings (``--param key=value``) and are validated by the
policy's pydantic model, so a bad value is refused with a message that names it.
A policy's module, and pydantic, load only when that policy is built: a replay
imports what it runs and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from batchd.sched.core.policy import KNOWN_POLICY, BuildContext, Policy

if TYPE_CHECKING:
    from pydantic import BaseModel

Builder = Callable[[Any, BuildContext], Policy]
ParamsModel = Callable[[], "type[BaseModel]"]
Replan = Literal["rebuild", "compress", "guarded"]


class PolicyError(ValueError):
    """An unknown policy or a bad parameter."""


@dataclass(frozen=True)
class PolicySpec:
    """A policy by name: ``build(params, context)`` makes one.

    ``params`` gives the pydantic model of its parameters (a class, or a function
    returning it, so that the model's module loads only when needed); None: it
    takes none.
    """

    name: str
    description: str
    build: Builder
    params: type[BaseModel] | ParamsModel | None = None

    def params_model(self) -> type[BaseModel] | None:
        model = self.params
        if model is None:
            return None
        from pydantic import BaseModel

        if isinstance(model, type) and issubclass(model, BaseModel):
            return model
        loader = cast("ParamsModel", model)
        return loader()

    def param_names(self) -> list[str]:
        model = self.params_model()
        return [] if model is None else list(model.model_fields)


_REGISTRY: dict[str, PolicySpec] = {}
_PLUGINS_LOADED = False


def register(spec: PolicySpec) -> PolicySpec:
    if spec.name in _REGISTRY:
        raise PolicyError(f"policy {spec.name!r} is registered twice")
    _REGISTRY[spec.name] = spec
    return spec


def _load_plugins() -> None:
    global _PLUGINS_LOADED
    if _PLUGINS_LOADED:
        return
    _PLUGINS_LOADED = True
    from importlib.metadata import entry_points

    for ep in entry_points(group="batchd.policies"):
        spec = ep.load()
        if not isinstance(spec, PolicySpec):
            raise PolicyError(f"entry point {ep.name!r} is not a batchd PolicySpec")
        if spec.name not in _REGISTRY:
            register(spec)


def policy_names() -> list[str]:
    _load_plugins()
    return list(_REGISTRY)


def get_spec(name: str) -> PolicySpec:
    spec = _REGISTRY.get(name)
    if spec is None:
        _load_plugins()  # only a name that is not built in needs the installed plugins
        spec = _REGISTRY.get(name)
    if spec is None:
        raise PolicyError(f"unknown policy {name!r}; choose one of: {', '.join(_REGISTRY)}")
    return spec


def parse_params(spec: PolicySpec, raw: Mapping[str, str]) -> Any:
    """The validated parameters of a policy (None for a policy that takes none)."""
    model = spec.params_model()
    if model is None:
        if raw:
            key = next(iter(raw))
            raise PolicyError(f"policy {spec.name}: unknown parameter {key!r} (allowed: none)")
        return None
    from pydantic import ValidationError

    try:
        return model.model_validate(dict(raw), context={KNOWN_POLICY: get_spec})
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"]) or "?"
        if err["type"] == "extra_forbidden":
            allowed = ", ".join(model.model_fields) or "none"
            raise PolicyError(
                f"policy {spec.name}: unknown parameter {key!r} (allowed: {allowed})"
            ) from None
        msg = err["msg"].removeprefix("Value error, ")
        if not err["loc"]:
            raise PolicyError(f"policy {spec.name}: {msg}") from None
        raise PolicyError(
            f"policy {spec.name}: parameter {key}={raw.get(key, '')!r}: {msg}"
        ) from None


def make_policy(
    name: str, params: Mapping[str, str] | None = None, context: BuildContext | None = None
) -> Policy:
    """A fresh policy instance by registered name, with validated parameters."""
    spec = get_spec(name)
    ctx = (context if context is not None else BuildContext()).given(make_policy)
    policy = spec.build(parse_params(spec, params or {}), ctx)
    policy.machine = ctx.machine
    return policy


def parse_param_args(items: list[str]) -> dict[str, str]:
    """``["decider=simple", "quality=ms"]`` -> dict; refuses items without '='."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise PolicyError(f"--param {item!r}: expected KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


# -- the built-in policies: each module loads when its policy is first built -----------


def _in_order(order: str) -> Builder:
    def build(_params: Any, _ctx: BuildContext) -> Policy:
        from batchd.sched.core.order import ORDERS
        from batchd.sched.policies.inorder import InOrderPolicy

        return InOrderPolicy(order, ORDERS[order])

    return build


def _easy(order: str) -> Builder:
    def build(_params: Any, _ctx: BuildContext) -> Policy:
        from batchd.sched.core.order import ORDERS
        from batchd.sched.policies.easy import EasyPolicy

        return EasyPolicy(f"{order}-easy", ORDERS[order])

    return build


def _conservative(order: str, default: Replan) -> Builder:
    def build(params: Any, _ctx: BuildContext) -> Policy:
        from batchd.sched.core.order import ORDERS
        from batchd.sched.policies.conservative import ConservativePolicy

        name = f"{order}-cons"
        return ConservativePolicy(name, ORDERS[order], params.replan or default, params.depth)

    return build


def _conservative_params() -> type[BaseModel]:
    from batchd.sched.policies.conservative import ConservativeParams

    return ConservativeParams


def _dynp_basic(params: Any, _ctx: BuildContext) -> Policy:
    from batchd.sched.policies.dynp import DynPBasic

    return DynPBasic(params)


def _dynp_basic_params() -> type[BaseModel]:
    from batchd.sched.policies.dynp import DynPBasicParams

    return DynPBasicParams


def _dynp(params: Any, _ctx: BuildContext) -> Policy:
    from batchd.sched.policies.dynp import DynP

    return DynP(params)


def _dynp_params() -> type[BaseModel]:
    from batchd.sched.policies.dynp import DynPParams

    return DynPParams


def _primetime(params: Any, ctx: BuildContext) -> Policy:
    from batchd.sched.policies.primetime import PrimeTime

    return PrimeTime(params, ctx)


def _primetime_params() -> type[BaseModel]:
    from batchd.sched.policies.primetime import PrimeTimeParams

    return PrimeTimeParams


def _prio_fifo(_params: Any, _ctx: BuildContext) -> Policy:
    from batchd.sched.core.order import prio_key
    from batchd.sched.policies.easy import EasyPolicy

    return EasyPolicy("prio-fifo", prio_key)


def _utility_easy(_params: Any, _ctx: BuildContext) -> Policy:
    from batchd.sched.policies.utility_easy import UtilityEasy

    return UtilityEasy()


def _moldable_greedy(_params: Any, _ctx: BuildContext) -> Policy:
    from batchd.sched.policies.moldable_greedy import MoldableGreedy

    return MoldableGreedy()


def _moldable_fairshare(params: Any, ctx: BuildContext) -> Policy:
    from batchd.sched.policies.moldable_fairshare import MoldableFairshare

    return MoldableFairshare("moldable-fairshare", params.obf, 0.0, ctx.nodes)


def _moldable_efficiency(params: Any, ctx: BuildContext) -> Policy:
    from batchd.sched.policies.moldable_fairshare import MoldableFairshare

    return MoldableFairshare("moldable-efficiency", params.obf, params.ef, ctx.nodes)


def _fairshare_params() -> type[BaseModel]:
    from batchd.sched.policies.moldable_fairshare import FairshareParams

    return FairshareParams


def _efficiency_params() -> type[BaseModel]:
    from batchd.sched.policies.moldable_fairshare import EfficiencyParams

    return EfficiencyParams


def _moldable_iterative(_params: Any, _ctx: BuildContext) -> Policy:
    from batchd.sched.policies.moldable_iterative import MoldableIterative

    return MoldableIterative()


def _ga(params: Any, ctx: BuildContext) -> Policy:
    from batchd.sched.ga.policy import GeneticPolicy

    return GeneticPolicy(params, ctx)


def _ga_params() -> type[BaseModel]:
    from batchd.sched.ga.policy import GAParams

    return GAParams


def _builtin() -> None:
    register(
        PolicySpec(
            "fcfs",
            "first come first served, no backfilling: start in order while the head fits",
            _in_order("fcfs"),
        )
    )
    for order in ("fcfs", "sjf", "ljf"):
        upper = order.upper()
        register(
            PolicySpec(
                f"{order}-easy",
                f"{upper} order with EASY backfilling (one reservation)",
                _easy(order),
            )
        )
        default: Replan = "guarded" if order == "fcfs" else "rebuild"
        register(
            PolicySpec(
                f"{order}-cons",
                f"{upper} order with conservative backfilling on a full plan "
                f"(replan=rebuild|compress|guarded, default {default})",
                _conservative(order, default),
                _conservative_params,
            )
        )
    register(
        PolicySpec(
            "dynp-basic",
            "basic dynP: AERT of the waiting queue against bounds picks SJF/FCFS/LJF "
            "(lower=7200, upper=9000, threshold=5)",
            _dynp_basic,
            _dynp_basic_params,
        )
    )
    register(
        PolicySpec(
            "dynp",
            "self-tuning dynP: plans FCFS, SJF and LJF at every step and keeps the best "
            "(decider=simple|advanced, quality=ms|art|artww|sldww|awt, slackness=PCT, "
            "reduced_future=K|6h, min_backlog=2, fcfs_candidate=sorted|as-queued|as-queued-sjf)",
            _dynp,
            _dynp_params,
        )
    )
    register(
        PolicySpec(
            "primetime",
            "prime/non-prime time (Lo and Mache's prime-time paper): jobs over the prime limits wait for non-prime "
            "time (prime_nodes=N|P%, prime_runtime=HH:MM:SS|P%, discipline=fcfs|easy|POLICY, "
            "overflow=kill|requeue, calendar=default|HOLIDAYS_FILE, timezone=ZONE, must_fit=true)",
            _primetime,
            _primetime_params,
        )
    )
    register(
        PolicySpec(
            "prio-fifo",
            "strict priority classes (the trace's priority_class, 0 first; after qsub -p), "
            "FCFS within each, EASY backfilling (Lee's utility paper)",
            _prio_fifo,
        )
    )
    register(
        PolicySpec(
            "utility-easy",
            "EASY backfilling on the order by current utility per node-hour: what a job "
            "earns if it starts now and runs its estimate (Lee's utility paper)",
            _utility_easy,
        )
    )
    register(
        PolicySpec(
            "ga",
            "EASY backfilling on the queue order a genetic search finds for aggregate "
            "utility at every step (Lee's utility paper; population=20, generations=100, "
            "mutation=0.1, searched=200, budget=SECONDS, seed=S)",
            _ga,
            _ga_params,
        )
    )
    register(
        PolicySpec(
            "moldable-greedy",
            "moldable jobs (Sabin et al.'s moldable paper): each takes, when it arrives, the width of its range "
            "that ends it soonest on the conservative plan (Cirne), then FCFS conservative "
            "backfilling",
            _moldable_greedy,
        )
    )
    register(
        PolicySpec(
            "moldable-fairshare",
            "moldable jobs (Sabin et al.'s moldable paper): FCFS with EASY backfilling; a job's width, decided "
            "when it starts or is reserved, is the one that ends it soonest up to its "
            "fair-share limit: obf x its square-root weight fraction x the system (obf=1)",
            _moldable_fairshare,
            _fairshare_params,
        )
    )
    register(
        PolicySpec(
            "moldable-efficiency",
            "moldable-fairshare with Sabin et al.'s moldable paper's efficiency factor: limits move from jobs "
            "with a flat speedup to jobs with a steep one, by up to ef x the fair share "
            "(obf=1, ef=0.5)",
            _moldable_efficiency,
            _efficiency_params,
        )
    )
    register(
        PolicySpec(
            "moldable-iterative",
            "moldable jobs (Sabin et al.'s moldable paper, Fig. 6): at every step each waiting job from its "
            "minimum width, one node at a time to the job gaining most while the FCFS "
            "conservative plan's average turnaround improves",
            _moldable_iterative,
        )
    )


_builtin()
