"""The study's scenarios and runs: what is replayed, with which workload, how often.

A scenario is the runtimes the schedulers see (the users' requests, or exact), the
inter-arrival factor, the deadline factor of the utility functions and which
priority's bin holds the highest start values (``batchd utility --value-order``):

- the base (users' runtimes, factor 1, deadline factor 2): Table 1, Figs. 5, 7, 8, 9;
- exact runtimes at factor 1: Table 2 and Fig. 9;
- each other inter-arrival factor (users' runtimes): Fig. 7;
- each other deadline factor (new augmentations): Fig. 8;
- the heavy factor with the users' and with exact runtimes: Fig. 10;
- the base with the highest values on the highest priority (``priority``, the seed's
  text) instead of the lowest (``formula``, the seed's formula and the default);
- the base with the decay and the deadline counted from each job's start instead of
  its submission (``batchd utility --deadline-from start``).

In each scenario every scheduler runs once on each utility augmentation, and ``ga``
once per GA seed on each (the seed's 2 x 2 = 4 trials).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from batchd_studies.utility.options import BASE_DEADLINE, BASE_FACTOR, GA

USERS, EXACT = "users", "exact"
FORMULA, PRIORITY = "formula", "priority"  # batchd.workload.utility_gen.VALUE_ORDERS
SUBMIT, START = "submit", "start"  # batchd.workload.utility_gen.DEADLINE_FROM


@dataclass(frozen=True, order=True)
class Scenario:
    estimates: str  # USERS or EXACT
    factor: float  # inter-arrival times multiplied by it
    deadline: float  # the utility functions' deadline factor
    values: str = FORMULA  # the value order of the utility functions
    deadline_from: str = SUBMIT  # where their decay and deadline count from

    @property
    def key(self) -> str:
        values = "" if self.values == FORMULA else f"/{self.values}"
        start = "" if self.deadline_from == SUBMIT else f"/from-{self.deadline_from}"
        return f"{self.estimates}/f{self.factor:g}/d{self.deadline:g}{values}{start}"

    @property
    def kind(self) -> tuple[float, str, str]:
        """What its augmentations are made with: deadline factor, value order, from."""
        return (self.deadline, self.values, self.deadline_from)


BASE = Scenario(USERS, BASE_FACTOR, BASE_DEADLINE)


def scenarios(
    factors: Sequence[float],
    deadlines: Sequence[float],
    heavy: float,
    value_orders: Sequence[str] = (FORMULA,),
    deadline_froms: Sequence[str] = (SUBMIT,),
) -> list[Scenario]:
    """Every scenario the tables and figures need, each once, the base first."""
    wanted = [BASE, Scenario(EXACT, BASE_FACTOR, BASE_DEADLINE)]
    wanted += [Scenario(USERS, f, BASE_DEADLINE) for f in factors]
    wanted += [Scenario(USERS, BASE_FACTOR, d) for d in deadlines]
    wanted += [Scenario(USERS, heavy, BASE_DEADLINE), Scenario(EXACT, heavy, BASE_DEADLINE)]
    wanted += [Scenario(USERS, BASE_FACTOR, BASE_DEADLINE, v) for v in value_orders]
    wanted += [Scenario(USERS, BASE_FACTOR, BASE_DEADLINE, FORMULA, d) for d in deadline_froms]
    return list(dict.fromkeys(wanted))


@dataclass(frozen=True)
class Workload:
    """One utility augmentation of the slice: its seed, deadline factor, value order,
    where the deadline counts from, file."""

    seed: int
    deadline: float
    values: str
    path: str
    digest: str
    deadline_from: str = SUBMIT

    @property
    def kind(self) -> tuple[float, str, str]:
        return (self.deadline, self.values, self.deadline_from)


@dataclass(frozen=True)
class Run:
    """One replay: a scheduler (and GA seed) in a scenario on one augmentation."""

    trace: str
    jobs: tuple[int, int]
    nodes: int
    scenario: Scenario
    workload: Workload
    policy: str
    ga_seed: int | None
    generations: int
    population: int
    cost: float = 1.0

    @property
    def params(self) -> dict[str, str]:
        if self.policy != GA:
            return {}
        return {
            "seed": str(self.ga_seed),
            "generations": str(self.generations),
            "population": str(self.population),
        }

    def identity(self) -> dict[str, Any]:
        """What determines the result; ``deadline_from`` only when not the submission, so
        that the keys of runs made before it existed stay as they were."""
        found = {
            "trace": self.trace,
            "jobs": list(self.jobs),
            "nodes": self.nodes,
            "estimates": self.scenario.estimates,
            "factor": self.scenario.factor,
            "deadline": self.scenario.deadline,
            "values": self.scenario.values,
            "seed": self.workload.seed,
            "workload_sha256": self.workload.digest,
            "policy": self.policy,
            "params": self.params,
        }
        return with_deadline_from(found, self.scenario.deadline_from)

    def label(self) -> str:
        ga = f" seed {self.ga_seed}" if self.ga_seed is not None else ""
        return f"{self.scenario.key} u{self.workload.seed} {self.policy}{ga}"


def with_deadline_from(identity: dict[str, Any], deadline_from: str) -> dict[str, Any]:
    return identity if deadline_from == SUBMIT else {**identity, "deadline_from": deadline_from}


def entry_identity(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The identity of the run that made ``entry``."""
    found = {
        "trace": entry["trace"],
        "jobs": list(entry["jobs"]),
        "nodes": entry["nodes"],
        "estimates": entry["estimates"],
        "factor": entry["factor"],
        "deadline": entry["deadline"],
        "values": entry["values"],
        "seed": entry["seed"],
        "workload_sha256": entry["workload_sha256"],
        "policy": entry["policy"],
        "params": entry["params"],
    }
    return with_deadline_from(found, entry.get("deadline_from", SUBMIT))


def scenario_of(entry: Mapping[str, Any]) -> Scenario:
    return Scenario(
        entry["estimates"],
        float(entry["factor"]),
        float(entry["deadline"]),
        entry["values"],
        entry.get("deadline_from", SUBMIT),
    )


def plan_runs(
    trace: str,
    jobs: tuple[int, int],
    nodes: int,
    wanted: Sequence[Scenario],
    workloads: Sequence[Workload],
    schedulers: Sequence[str],
    ga_seeds: Sequence[int],
    *,
    generations: int,
    population: int,
) -> list[Run]:
    """Every run, the costliest first (GA, heavier load; so the pool ends with short ones).

    ``workloads``: every augmentation; a scenario runs on those of its deadline factor,
    value order and deadline origin.
    """
    runs = []
    for scenario in wanted:
        for workload in workloads:
            if workload.kind != scenario.kind:
                continue
            for policy in schedulers:
                for ga_seed in ga_seeds if policy == GA else [None]:
                    cost = (50.0 if policy == GA else 1.0) / scenario.factor**3
                    runs.append(
                        Run(
                            trace,
                            jobs,
                            nodes,
                            scenario,
                            workload,
                            policy,
                            ga_seed,
                            generations,
                            population,
                            cost,
                        )
                    )
    return sorted(runs, key=lambda r: r.cost, reverse=True)
