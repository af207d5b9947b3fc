"""Nodes by name across the machines, and their states: offline, down, back in service.

Node names are unique across a site's machines (the config refuses clashes); every
operation resolves a name to (machine, node) and acts on that machine.
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

    def all(self) -> list[Where]:
        return [(mi, ni) for mi, names in enumerate(self.names) for ni in range(len(names))]

    def set(self, engine: Engine, where: Where, state: str, comment: str | None) -> Job | None:
        """Put a node in service ("online"), or out ("offline", "down").

        Returns the job running on a node that went down, for the caller to requeue or kill.
        """
        machine, node = where
        old = self.states.get(where)
        if state == "online":
            if old is not None:
                del self.states[where]
                engine.node_in(machine, node)
            self.journal.put_node(machine, node, None, None)
            return None
        if old is None:
            engine.node_out(machine, node)
        self.states[where] = (state, comment)
        self.journal.put_node(machine, node, state, comment)
        if state == "down":
            holder = engine.machines[machine].holder_of(node)
            if isinstance(holder, Job):
                return holder
        return None

    def restore(self, engine: Engine, saved: list[tuple[int, int, str, str | None]]) -> None:
        for machine, node, state, comment in saved:
            if 0 <= machine < len(self.names) and 0 <= node < len(self.names[machine]):
                self.states[(machine, node)] = (state, comment)
                engine.node_out(machine, node)

    @staticmethod
    def holders(engine: Engine, machine: int) -> dict[int, Job | Reservation]:
        """What holds each busy node of a machine: a running job or an open reservation."""
        out: dict[int, Job | Reservation] = {}
        for h in engine.machines[machine].holders():
            for n in h.nodes:
                out[n] = h
        return out
