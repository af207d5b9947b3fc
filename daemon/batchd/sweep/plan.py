"""An experiment expanded into runs, in declaration order, each keyed by its content.

The order is the file's: for each trace, each machine size (``nodes`` or
``machines``), each policy, each combination of its parameters (keys in the order
given), each shrink or load factor, each ``first``, each estimates mode, each seed.
A run's key is the SHA-256 of its identity: the trace's checksum (not its path),
the policy and parameters, the node count or the site file's checksum, the factors,
the seed, kill and double, and the batchd version; so a moved trace keeps its runs
and a changed one gets new ones.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from batchd.sweep import SweepError
from batchd.sweep.experiment import GRID_PREFIX, SweepTable, param_text
from batchd.sweep.files import FileRef, is_synthetic, read_ref


def content_key(identity: Mapping[str, Any]) -> str:
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Run:
    """One replay of a sweep (pickled to the worker that runs it)."""

    index: int  # position in declaration order
    trace: str  # as the experiment file gives it
    trace_ref: FileRef | None  # None: the built-in synthetic workload
    nodes: int | None
    machine: str | None  # as the experiment file gives it
    machine_ref: FileRef | None  # with its bytes inline
    policy: str
    params: tuple[tuple[str, str], ...]
    shrink: float | None
    load: float | None
    first: int | None
    perfect_estimates: bool
    seed: int
    kill: bool
    double: bool
    version: str

    @property
    def grid(self) -> str | None:
        """The grid structure of a ``grid-STRUCTURE`` policy, else None."""
        return (
            self.policy.removeprefix(GRID_PREFIX) if self.policy.startswith(GRID_PREFIX) else None
        )

    def replay_shrink(self) -> float:
        """The replay's factor on inter-arrival times: ``shrink``, or 1 / ``load``."""
        if self.load is not None:
            return 1.0 / self.load
        return 1.0 if self.shrink is None else self.shrink

    def coordinates(self) -> dict[str, Any]:
        """Where the run sits in the sweep, as its row shows it."""
        return {
            "trace": self.trace,
            "nodes": self.nodes,
            "machine": self.machine,
            "policy": self.policy,
            "params": dict(self.params),
            "shrink": self.shrink,
            "load": self.load,
            "first": self.first,
            "perfect_estimates": self.perfect_estimates,
            "seed": self.seed,
            "kill": self.kill,
            "double": self.double,
        }

    def identity(self) -> dict[str, Any]:
        """Everything that determines the result; its digest is the key."""
        ident = self.coordinates()
        ident["trace"] = self.trace_sha256() if self.trace_ref is not None else self.trace
        ident["machine"] = None if self.machine_ref is None else self.machine_ref.sha256
        ident["batchd"] = self.version
        return ident

    def trace_sha256(self) -> str | None:
        return None if self.trace_ref is None else self.trace_ref.sha256

    def key(self) -> str:
        return content_key(self.identity())

    def label(self) -> str:
        where = self.machine or (f"{self.nodes} nodes" if self.nodes else "header size")
        params = " ".join(f"{k}={v}" for k, v in self.params)
        factor = (
            f"load {self.load:g}" if self.load is not None else f"shrink {self.replay_shrink():g}"
        )
        parts = [Path(self.trace).name, where, self.policy, params, factor, f"seed {self.seed}"]
        return " ".join(p for p in parts if p)


def param_grid(grid: Mapping[str, list[Any]]) -> Iterator[tuple[tuple[str, str], ...]]:
    """Every combination of a policy's parameter values, keys in the order given."""
    keys = list(grid)
    for values in itertools.product(*(grid[k] for k in keys)):
        yield tuple(sorted(zip(keys, (param_text(v) for v in values), strict=True)))


def check_policy(policy: str, params: Mapping[str, str]) -> None:
    """Fail now on a policy or parameter the replay would refuse."""
    if policy.startswith(GRID_PREFIX):
        from batchd.sched.grid.params import STRUCTURES

        structure = policy.removeprefix(GRID_PREFIX)
        if structure not in STRUCTURES:
            raise SweepError(
                f"policy {policy}: unknown grid structure; choose one of "
                + ", ".join(GRID_PREFIX + s for s in STRUCTURES)
            )
        return
    from batchd.sched.registry import make_policy

    try:
        make_policy(policy, dict(params))
    except ValueError as exc:
        raise SweepError(str(exc)) from None


def plan_runs(table: SweepTable, base: Path, source: str = "") -> list[Run]:
    """The runs of an experiment (``base``: the directory its paths are relative to)."""
    from batchd import __version__

    def where(path: str) -> str:
        return str(base / path)

    traces = [(t, None if is_synthetic(t) else read_ref(where(t))) for t in table.traces]
    sizes: list[tuple[int | None, str | None, FileRef | None]]
    if table.machines is not None:
        sizes = [(None, m, read_ref(where(m), inline=True)) for m in table.machines]
    else:
        node_counts: list[int | None] = list(table.nodes) if table.nodes else [None]
        sizes = [(n, None, None) for n in node_counts]
    policies: list[tuple[str, tuple[tuple[str, str], ...]]] = []
    for policy in table.policies:
        for params in param_grid(table.params.get(policy, {})):
            try:
                check_policy(policy, dict(params))
            except SweepError as exc:
                raise SweepError(f"{source}: policies: {exc}" if source else str(exc)) from None
            policies.append((policy, params))
    factors: list[tuple[float | None, float | None]] = (
        [(None, load) for load in table.load]
        if table.load is not None
        else [(s, None) for s in table.shrink]
        if table.shrink is not None
        else [(None, None)]
    )
    firsts: list[int | None] = list(table.first) if table.first else [None]
    runs: list[Run] = []
    for (trace, ref), (nodes, machine, machine_ref), (policy, params) in itertools.product(
        traces, sizes, policies
    ):
        for (shrink, load), first, perfect, seed in itertools.product(
            factors, firsts, table.perfect_estimates, table.seed_values()
        ):
            runs.append(
                Run(
                    len(runs), trace, ref, nodes, machine, machine_ref, policy, params,
                    shrink, load, first, perfect, seed, table.kill, table.double, __version__,
                )
            )  # fmt: skip
    return runs
