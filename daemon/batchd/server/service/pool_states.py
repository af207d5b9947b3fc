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
                cores_by_state=_count(nodes.unit_states(engine, m.index)) if conf.shared else None,
                units=conf.slots,
            )
        )
    return out


def _count(states: list[str]) -> dict[str, int]:
    out = dict.fromkeys(NODE_STATES, 0)
    for state in states:
        out[state] += 1
    return out
