"""Starting jobs on a machine whose nodes are shared (``batchd.model.cores``).

The policies count cores; the engine places each job's pieces on nodes. A job whose
pieces find no node although enough cores are free is *unplaced*: it does not start,
goes back to its policy's queue (noted in ``MachineState.unplaced`` for qstat) and
waits for cores to free up; the cores it was planned on stay free until the next pass.
Under an in-order policy every job placed after it in that pass goes back too, so
nothing passes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from batchd.model.states import JobState
from batchd.sched.core.policy import Placement

if TYPE_CHECKING:
    from batchd.engine.core import Engine
    from batchd.engine.machine import MachineState


def start_shared(engine: Engine, m: MachineState, placements: list[Placement]) -> None:
    """Start a pass's placements on shared nodes; the unplaced wait (see the module)."""
    m.unplaced.clear()
    policy = m.policy
    in_order = policy.serves_in_order
    held = False
    for placement in placements:
        job = placement[0]
        if held:
            policy.job_submitted(m, job)
            continue
        engine._start(m, placement)
        if job.state is JobState.QUEUED:  # unplaced: back to the queue
            policy.job_submitted(m, job)
            policy.invalidate()
            held = in_order
