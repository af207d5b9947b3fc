"""Grid meta-scheduling (Hamscher et al.'s grid paper): structures over the machines of one engine.

``make_grid`` builds the ``GridLayer`` of a structure for a grid's machines; its
``ports`` are the engine's policies, one per machine (``Engine(grid, layer.ports)``,
then ``layer.attach(engine.machines)``). docs/grid.md describes every structure,
strategy and overhead model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from batchd.sched.core.policy import BuildContext
from batchd.sched.grid.layer import GridLayer, GridPort, GridStats
from batchd.sched.grid.params import (
    STRUCTURES,
    GridError,
    GridParams,
    parse_grid_param_args,
    parse_grid_params,
)

__all__ = [
    "STRUCTURES",
    "GridError",
    "GridLayer",
    "GridParams",
    "GridPort",
    "GridStats",
    "make_grid",
    "parse_grid_param_args",
    "parse_grid_params",
    "widest_job",
]


def widest_job(structure: str, nodes: Sequence[int]) -> int:
    """The most nodes a job may ask for on a grid of machines of ``nodes``: the widest
    machine's, or under multisite all of them together (the layer in force may still
    refuse a width: ``GridLayer.width_refusal``)."""
    return sum(nodes) if structure == "multisite" else max(nodes)


def make_grid(
    structure: str,
    raw: Mapping[str, str],
    machines: Sequence[tuple[str, int]],
    contexts: Sequence[BuildContext] = (),
    seed: int = 0,
) -> GridLayer:
    """The layer of ``structure`` for ``machines`` (name, nodes) in config order.

    ``contexts`` (one per machine) build the local policies of hierarchical,
    decentral and pool grids; ``seed`` seeds the layer's own generator (random
    selection, the random central scheduler, home machines).
    """
    from batchd.sched.registry import PolicyError, make_policy, policy_names

    names = [name for name, _ in machines]
    nodes = [size for _, size in machines]
    params = parse_grid_params(structure, raw, names, policy_names())
    if structure == "central":
        from batchd.sched.grid.central import CentralGrid

        return CentralGrid(params, nodes, names, seed)
    if structure == "multisite":
        from batchd.sched.grid.multisite import MultisiteGrid

        return MultisiteGrid(params, nodes, names, seed)
    if len(contexts) != len(machines):
        contexts = [BuildContext(machine=i, nodes=n, seed=seed) for i, n in enumerate(nodes)]
    local = []
    for i, ctx in enumerate(contexts):
        if structure == "pool":
            name = "fcfs" if params.discipline == "fcfs" else "fcfs-easy"
        else:
            name = params.local_policy(i)
        try:
            policy = make_policy(name, None, ctx)
        except PolicyError as exc:
            raise GridError(f"grid {structure}: machine {names[i]}: {exc}") from None
        if policy.wakes:
            raise GridError(
                f"grid {structure}: machine {names[i]}: policy {name} keeps time windows of "
                "its own, which a grid's local policy cannot (choose another local policy)"
            )
        local.append(policy)
    from batchd.sched.grid.local import DecentralGrid, HierarchicalGrid, LocalGrid, PoolGrid

    kinds: dict[str, type[LocalGrid]] = {
        "hierarchical": HierarchicalGrid,
        "decentral": DecentralGrid,
        "pool": PoolGrid,
    }
    return kinds[structure](params, nodes, names, seed, local)
