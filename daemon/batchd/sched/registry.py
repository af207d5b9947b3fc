"""The one registry of scheduling policies, by name.

Built-in policies register here; a site adds its own through the
``batchd.policies`` entry-point group (the entry point is a ``PolicySpec``).
Parameters arrive as strings (``--param key=value``) and are validated by the
policy's pydantic model, so a bad value is refused with a message that names it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from batchd.sched.conservative import ConservativeParams, ConservativePolicy
from batchd.sched.dynp import DynP, DynPBasic, DynPBasicParams, DynPParams
from batchd.sched.easy import EasyPolicy
from batchd.sched.nobackfill import InOrderPolicy
from batchd.sched.order import ORDERS
from batchd.sched.policy import Policy


class PolicyError(ValueError):
    """An unknown policy or a bad parameter."""


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class PolicySpec:
    name: str
    description: str
    build: Callable[[Any], Policy]
    params: type[BaseModel] = NoParams


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
    _load_plugins()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise PolicyError(
            f"unknown policy {name!r}; choose one of: {', '.join(_REGISTRY)}"
        ) from None


def parse_params(spec: PolicySpec, raw: Mapping[str, str]) -> BaseModel:
    try:
        return spec.params.model_validate(dict(raw))
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"]) or "?"
        if err["type"] == "extra_forbidden":
            allowed = ", ".join(spec.params.model_fields) or "none"
            raise PolicyError(
                f"policy {spec.name}: unknown parameter {key!r} (allowed: {allowed})"
            ) from None
        msg = err["msg"].removeprefix("Value error, ")
        if not err["loc"]:
            raise PolicyError(f"policy {spec.name}: {msg}") from None
        raise PolicyError(
            f"policy {spec.name}: parameter {key}={raw.get(key, '')!r}: {msg}"
        ) from None


def make_policy(name: str, params: Mapping[str, str] | None = None) -> Policy:
    """A fresh policy instance by registered name, with validated parameters."""
    spec = get_spec(name)
    return spec.build(parse_params(spec, params or {}))


def parse_param_args(items: list[str]) -> dict[str, str]:
    """``["decider=simple", "quality=ms"]`` -> dict; refuses items without '='."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise PolicyError(f"--param {item!r}: expected KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def _builtin() -> None:
    register(
        PolicySpec(
            "fcfs",
            "first come first served, no backfilling: start in order while the head fits",
            lambda _p: InOrderPolicy("fcfs", ORDERS["fcfs"]),
        )
    )
    for order in ("fcfs", "sjf", "ljf"):
        key = ORDERS[order]
        upper = order.upper()
        register(
            PolicySpec(
                f"{order}-easy",
                f"{upper} order with EASY backfilling (one reservation)",
                lambda _p, n=f"{order}-easy", k=key: EasyPolicy(n, k),
            )
        )
        default = "guarded" if order == "fcfs" else "rebuild"
        register(
            PolicySpec(
                f"{order}-cons",
                f"{upper} order with conservative backfilling on a full plan "
                f"(replan=rebuild|compress|guarded, default {default})",
                lambda p, n=f"{order}-cons", k=key, d=default: ConservativePolicy(
                    n, k, p.replan or d
                ),
                ConservativeParams,
            )
        )
    register(
        PolicySpec(
            "dynp-basic",
            "basic dynP: AERT of the waiting queue against bounds picks SJF/FCFS/LJF "
            "(lower=7200, upper=9000, threshold=5)",
            DynPBasic,
            DynPBasicParams,
        )
    )
    register(
        PolicySpec(
            "dynp",
            "self-tuning dynP: plans FCFS, SJF and LJF at every step and keeps the best "
            "(decider=simple|advanced, quality=ms|art|artww|sldww|awt, slackness=PCT, "
            "reduced_future=K|6h, min_backlog=2)",
            DynP,
            DynPParams,
        )
    )

    from batchd.sched.primetime import PrimeTime, PrimeTimeParams

    register(
        PolicySpec(
            "primetime",
            "prime/non-prime time (seed 001): jobs over the prime limits wait for non-prime "
            "time (prime_nodes=N|P%, prime_runtime=HH:MM:SS|P%, discipline=fcfs|easy|POLICY, "
            "overflow=kill|requeue, calendar=default|HOLIDAYS_FILE, timezone=ZONE, must_fit=true)",
            PrimeTime,
            PrimeTimeParams,
        )
    )


_builtin()
