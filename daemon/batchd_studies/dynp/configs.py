"""The scheduler configurations of the study and their names in tables and legends."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from batchd_studies.framework import StudyError

POLICIES = ("SJF", "FCFS", "LJF")  # the paper's row order in Tables 4 and 5
CONS_CONFIGS = ("fcfs-cons", "sjf-cons", "ljf-cons")
BASIC_DYNP = "dynp-basic"
BASIC_BOUNDS = (("lower", "7200"), ("upper", "9000"))
DECIDERS = ("simple", "advanced")
PAPER_QUALITIES = ("artww", "art", "ms")
EXTRA_QUALITIES = ("sldww", "awt")
QUALITY_NAMES = {"artww": "ARTwW", "art": "ART", "ms": "MS", "sldww": "SLDwW", "awt": "AWT"}
# dynP's fcfs_candidate: the default first, then the hypotheses of the seed's Table 6.
SORTED = "sorted"
AS_QUEUED = "as-queued"
AS_QUEUED_SJF = "as-queued-sjf"
CANDIDATES = (SORTED, AS_QUEUED, AS_QUEUED_SJF)
CANDIDATE_QUALITIES = {AS_QUEUED: PAPER_QUALITIES, AS_QUEUED_SJF: ("artww",)}


def dynp_label(decider: str, quality: str, candidate: str = SORTED) -> str:
    """Configuration name of self-tuning dynP: decider, quality metric, FCFS candidate."""
    label = f"dynp-{decider}-{quality}"
    return label if candidate == SORTED else f"{label}-{candidate}"


ADVANCED_ARTWW = dynp_label("advanced", "artww")
COMPARISON_CONFIGS = (*CONS_CONFIGS, BASIC_DYNP, ADVANCED_ARTWW)  # Figs. 4, 5, 8


def config_title(config: str) -> str:
    """A readable name of a configuration for tables and legends."""
    if config in CONS_CONFIGS:
        return config.split("-")[0].upper() + " cons."
    if config == BASIC_DYNP:
        return "basic dynP"
    parts = config.split("-", 3)
    if len(parts) >= 3 and parts[0] == "dynp":
        title = f"dynP {parts[1]} {QUALITY_NAMES.get(parts[2], parts[2])}"
        return title if len(parts) == 3 else f"{title} ({parts[3]})"
    return config


@dataclass(frozen=True)
class Config:
    """One scheduler configuration: a registered policy and its parameters."""

    name: str
    policy: str
    params: tuple[tuple[str, str], ...] = ()
    weight: float = 1.0  # rough relative cost of a replay, to start the longest first

    @property
    def param_dict(self) -> dict[str, str]:
        return dict(self.params)


def _cons(order: str) -> Config:
    return Config(f"{order}-cons", f"{order}-cons")


def _dynp(decider: str, quality: str, candidate: str = SORTED) -> Config:
    params: tuple[tuple[str, str], ...] = (("decider", decider), ("quality", quality))
    if candidate != SORTED:  # the default stays out of the name and the parameters
        params += (("fcfs_candidate", candidate),)
    return Config(dynp_label(decider, quality, candidate), "dynp", params, weight=4.0)


def config_set(which: str) -> list[Config]:
    """``basic``: the three single policies; ``default``: the paper's 10; ``all``: + SLDwW, AWT;
    ``as-queued``: the paper's 10 and dynP again with the FCFS candidate as the queue stands
    (three qualities) and as it stands with LJF walking SJF's order (ARTwW)."""
    basic = [_cons(order) for order in ("fcfs", "sjf", "ljf")]
    if which == "basic":
        return basic
    qualities: tuple[str, ...] = PAPER_QUALITIES
    if which == "all":
        qualities = (*qualities, *EXTRA_QUALITIES)
    elif which not in ("default", AS_QUEUED):
        raise StudyError(f"--configs: expected basic, default, all or as-queued, got {which!r}")
    dynp_basic = Config(BASIC_DYNP, "dynp-basic", BASIC_BOUNDS, weight=1.5)
    tuned = [_dynp(d, q) for q in qualities for d in DECIDERS]
    if which == AS_QUEUED:
        tuned += [
            _dynp(d, q, candidate)
            for candidate, candidate_qualities in CANDIDATE_QUALITIES.items()
            for q in candidate_qualities
            for d in DECIDERS
        ]
    return [*basic, dynp_basic, *tuned]


def check_policies(configs: Iterable[Config]) -> None:
    """Build each configuration once here, so a missing policy fails before any work."""
    from batchd_studies.dynp.replays import policy_error

    for config in configs:
        error = policy_error(config.policy, config.param_dict)
        if error is not None:
            hint = " (or use --configs basic)" if config.policy.startswith("dynp") else ""
            raise StudyError(f"configuration {config.name}: {error}{hint}")
