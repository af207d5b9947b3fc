"""The service's operations: every change a request can make, one module per kind.

A route calls one operation. An operation checks what it is given and who asks,
makes its change inside ``svc.change()`` (which first catches the engine up and
saves, then, after the change, runs one scheduling pass and commits once), and logs
what was done once it is saved. A refusal raises before anything changed. The parts
an operation uses (``Lifecycle``, ``ArrayJobs``, ``JobControl``, ``Nodes``,
``Reservations``, ``QueueAdmin``, ``Scheduler``) change state and never commit.
"""

from batchd.server.service.operations import (
    jobs,
    nodes,
    queues,
    reservations,
    scheduler,
    server_attrs,
)

__all__ = ["jobs", "nodes", "queues", "reservations", "scheduler", "server_attrs"]
