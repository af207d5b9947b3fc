"""Each machine's nodes by state, its policy and order in force: the pools the
Prometheus exporter and the status views show."""

from __future__ import annotations

from batchd.engine.core import Engine
from batchd.metrics.catalog import NODE_STATES
from batchd.metrics.exporter import PoolState
from batchd.model.job import Job
from batchd.server.service.nodes import Nodes
from batchd.server.service.scheduler import Scheduler
from batchd.site.config import SiteConfig


def pool_states(
    engine: Engine, site: SiteConfig, nodes: Nodes, scheduler: Scheduler
) -> list[PoolState]:
    out = []
    for m, conf in zip(engine.machines, site.machine, strict=True):
        by_state = dict.fromkeys(NODE_STATES, 0)
        holders = nodes.holders(engine, m.index)
        for i in range(conf.nodes):
            state = nodes.states.get((m.index, i))
            if state is not None:
                by_state[state[0]] += 1
            elif i in holders:
                job = any(isinstance(h, Job) for h in holders[i])
                by_state["allocated" if job else "reserved"] += 1
            else:
                by_state["idle"] += 1
        out.append(
            PoolState(
                name=conf.name,
                nodes=conf.nodes,
                by_state=by_state,
                cores_per_node=conf.cores_per_node,
                policy=scheduler.choices[m.index].name,
                order=m.policy.order(),
                cores_by_state=_cores_by_state(engine, m.index, nodes) if conf.shared else None,
                units=conf.slots,
            )
        )
    return out


def _cores_by_state(engine: Engine, machine: int, nodes: Nodes) -> dict[str, int]:
    """A machine of shared nodes, core by core: its node's state when out of service,
    else allocated (a job's), reserved or idle."""
    per = nodes.per_node[machine]
    held: dict[int, bool] = {}
    for h in engine.machines[machine].holders():
        for unit in h.nodes:
            held[unit] = isinstance(h, Job)
    out = dict.fromkeys(NODE_STATES, 0)
    for unit in range(len(nodes.names[machine]) * per):
        state = nodes.states.get((machine, unit // per))
        if state is not None:
            out[state[0]] += 1
        elif unit in held:
            out["allocated" if held[unit] else "reserved"] += 1
        else:
            out["idle"] += 1
    return out
