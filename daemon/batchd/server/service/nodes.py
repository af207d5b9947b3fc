"""Nodes by name across the machines, and their states: offline, down, back in service.

Node names are unique across a site's machines (the config refuses clashes); every
operation resolves a name to (machine, node) and acts on that machine. On a machine
whose nodes are shared the engine counts cores (``batchd.model.cores``): node ``n``
is units ``n*c .. n*c+c-1``, and a node's state applies to each of them.
"""

from __future__ import annotations

from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.reservation import Reservation
from batchd.server.errors import not_found
from batchd.server.service.journal import Journal
from batchd.site.config import SiteConfig

Where = tuple[int, int]  # (machine, node)


class Nodes:
    def __init__(self, site: SiteConfig, journal: Journal) -> None:
        self.names: list[list[str]] = [m.node_names() for m in site.machine]
        self.per_node = [m.slots_per_node for m in site.machine]
        # The node name of each of the engine's units (the same list for whole nodes).
        self.unit_names: list[list[str]] = [
            names if per == 1 else [n for n in names for _ in range(per)]
            for names, per in zip(self.names, self.per_node, strict=True)
        ]
        self.machine_names = [m.name for m in site.machine]
        self.index = {
            name: (mi, ni) for mi, names in enumerate(self.names) for ni, name in enumerate(names)
        }
        self.states: dict[Where, tuple[str, str | None]] = {}
        self.journal = journal

    def find(self, name: str) -> Where:
        try:
            return self.index[name]
        except KeyError:
            raise not_found(f"Unknown node {name!r}") from None

    def name(self, machine: int, node: int) -> str:
        return self.names[machine][node]

    def units(self, machine: int, node: int) -> range:
        """The engine's units of a node: the node, or its cores when shared."""
        per = self.per_node[machine]
        return range(node * per, node * per + per)

    def hosts_of(self, machine: int, units: list[int]) -> list[int]:
        """The nodes of these units, each once, in order."""
        per = self.per_node[machine]
        return list(dict.fromkeys(u // per for u in units)) if per > 1 else list(units)

    def all(self) -> list[Where]:
        return [(mi, ni) for mi, names in enumerate(self.names) for ni in range(len(names))]

    def set(self, engine: Engine, where: Where, state: str, comment: str | None) -> list[Job]:
        """Put a node in service ("online"), or out ("offline", "down").

        Returns the jobs running on a node that went down, for the caller to requeue or kill.
        """
        machine, node = where
        old = self.states.get(where)
        if state == "online":
            if old is not None:
                del self.states[where]
                for unit in self.units(machine, node):
                    engine.node_in(machine, unit)
            self.journal.put_node(machine, node, None, None)
            return []
        if old is None:
            for unit in self.units(machine, node):
                engine.node_out(machine, unit)
        self.states[where] = (state, comment)
        self.journal.put_node(machine, node, state, comment)
        if state != "down":
            return []
        m = engine.machines[machine]
        holders = (m.holder_of(unit) for unit in self.units(machine, node))
        return list(dict.fromkeys(h for h in holders if isinstance(h, Job)))

    def restore(self, engine: Engine, saved: list[tuple[int, int, str, str | None]]) -> None:
        for machine, node, state, comment in saved:
            if 0 <= machine < len(self.names) and 0 <= node < len(self.names[machine]):
                self.states[(machine, node)] = (state, comment)
                for unit in self.units(machine, node):
                    engine.node_out(machine, unit)

    def unit_states(self, engine: Engine, machine: int) -> list[str]:
        """The state of each of the engine's units of a machine, by the names of
        ``metrics.catalog.NODE_STATES``: its node's when out of service, else allocated
        (a job's), reserved or idle."""
        per = self.per_node[machine]
        m = engine.machines[machine]
        held = {unit: isinstance(h, Job) for h in m.holders() for unit in h.units}
        out = []
        for unit in range(m.pool.size):
            state = self.states.get((machine, unit // per))
            if state is not None:
                out.append(state[0])
            elif unit in held:
                out.append("allocated" if held[unit] else "reserved")
            else:
                out.append("idle")
        return out

    def holders(self, engine: Engine, machine: int) -> dict[int, list[Job | Reservation]]:
        """What holds each busy node of a machine: running jobs (several on a shared
        node) or an open reservation, in the order they started."""
        per = self.per_node[machine]
        out: dict[int, list[Job | Reservation]] = {}
        for h in engine.machines[machine].holders():
            for unit in h.units:
                held = out.setdefault(unit // per, [])
                if h not in held:
                    held.append(h)
        return out
