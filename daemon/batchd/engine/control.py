"""What a live batch system changes in the machines while jobs run: a machine's policy,
nodes out of and back in service, advance reservations; and what runs and waits."""

from __future__ import annotations

from batchd.engine.machine import MachineState
from batchd.engine.reservations import ReservationRunner
from batchd.model.job import Job
from batchd.model.reservation import Reservation
from batchd.sched.core.policy import Policy


def check_machine(policy: Policy, index: int) -> None:
    if policy.machine != index:
        raise ValueError(
            f"policy {policy.name} was built for machine {policy.machine}, not {index} "
            "(build it with BuildContext(machine=...))"
        )


class MachineControl:
    """The engine's machines as a live daemon changes them (``Engine`` is one)."""

    machines: list[MachineState]
    reserved: ReservationRunner

    def set_policy(self, machine: int, policy: Policy) -> Policy:
        """Replace a machine's policy; its waiting jobs move over in FCFS order."""
        check_machine(policy, machine)
        m = self.machines[machine]
        old = m.policy
        waiting = sorted(old.waiting(), key=lambda j: (j.submit, j.id))
        for job in waiting:
            old.withdraw(m, job)
        m.policy = policy
        for job in waiting:
            policy.job_submitted(m, job)
        return old

    def node_out(self, machine: int, node: int) -> None:
        """Take a node out of service; a job on it keeps running (drain)."""
        m = self.machines[machine]
        m.pool.take_out(node)
        m.refresh_widths()
        m.policy.invalidate()

    def node_in(self, machine: int, node: int) -> None:
        m = self.machines[machine]
        m.pool.put_back(node)
        m.refresh_widths()
        m.policy.invalidate()

    def add_reservation(self, resv: Reservation) -> None:
        """Hold ``resv.width`` nodes from ``resv.start`` to ``resv.end``; the caller checked the fit."""
        self.reserved.add(resv)

    def remove_reservation(self, resv: Reservation) -> None:
        """Delete a reservation now; its jobs end and its nodes go back at once."""
        self.reserved.remove(resv)

    def waiting(self) -> list[Job]:
        return [j for m in self.machines for j in m.policy.waiting()]

    def running(self) -> list[Job]:
        """Running and exiting jobs, by start."""
        jobs = [h for m in self.machines for h in m.holders() if isinstance(h, Job)]
        jobs += [j for run in self.reserved.runs.values() for j in run.running.values()]
        return sorted(jobs, key=lambda j: (j.start, j.id))
