"""Operations on nodes (pbsnodes -o, -r, -C): a node out of service ends or requeues
the jobs on it, as the site's ``node_fail`` says."""

from __future__ import annotations

from typing import TYPE_CHECKING

import structlog

from batchd.server.node_schemas import NodeChange
from batchd.server.service.access import Caller, require

if TYPE_CHECKING:
    from batchd.server.service.facade import BatchService

log = structlog.get_logger("batchd")


def set_node(svc: BatchService, caller: Caller, name: str, change: NodeChange) -> tuple[int, int]:
    """A node's state and comment; its (machine, node)."""
    with svc.change():
        where = svc.nodes.find(name)
        require(caller, "operator", "change node states")
        for down in svc.nodes.set(svc.engine, where, change.state, change.comment):
            svc.lifecycle.node_failed(down)
    log.info("node_state", node=name, state=change.state, by=caller.user)
    return where
