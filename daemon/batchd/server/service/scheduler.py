"""The scheduler of each machine: its policy behind the site's queue windows, and its plan.

Every machine runs the site's policy (``[server] policy``) until a manager sets
another, for one machine or for all. The policy is built for its machine, on the
site's calendar with the emulated clock counting from the epoch, and wrapped in
the queue-window gate of the queues that send jobs to that machine. The planned
starts ``qstat -T`` shows are kept until the next change.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from batchd.engine.core import Engine
from batchd.engine.machine import MachineState
from batchd.model.calendar import PrimeCalendar
from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.model.windows import TimeWindow, make_window
from batchd.sched.gate import WindowGate
from batchd.sched.policy import BuildContext, Policy, PolicyObserver
from batchd.sched.queues import QueueSpec, queue_classes, queue_gate
from batchd.sched.registry import PolicyError, get_spec, make_policy, parse_params, policy_names
from batchd.server.errors import bad_request
from batchd.site.config import SiteConfig


@dataclass
class Choice:
    """The policy a machine runs, by name, with its parameters."""

    name: str
    params: dict[str, str] = field(default_factory=dict)


class Scheduler:
    def __init__(self, site: SiteConfig, calendar: PrimeCalendar) -> None:
        self.site = site
        self.calendar = calendar
        self.choices = [Choice(site.server.policy, site.server.params()) for _ in site.machine]
        self.switches: list[dict[str, Any]] = []
        self.windows: dict[str, TimeWindow] = {}
        self.observers: list[PolicyObserver] = []
        self.gates: list[WindowGate] = []  # each machine's policy, behind its queue windows
        self.engine: Engine | None = None
        self._plans: dict[int, tuple[int, list[tuple[Job, int]]]] = {}
        self.version = 0  # moves with every change; plans are kept for one version
        self._build_windows()

    # -- building -------------------------------------------------------------------
    def _build_windows(self) -> None:
        self.windows = {
            q.name: make_window(q.window, self.calendar) for q in self.site.queues() if q.windowed
        }

    def queue_specs(self, machine: int) -> list[QueueSpec]:
        site = self.site
        return [q.spec() for q in site.queues() if site.machine_index(q.machine) == machine]

    def build(self, machine: int, choice: Choice) -> WindowGate:
        """The policy of ``machine``: the choice, built for it, behind its queues' windows."""
        context = BuildContext(
            machine=machine, nodes=self.site.machine[machine].nodes, calendar=self.calendar
        )
        inner = make_policy(choice.name, choice.params, context)
        gate = queue_gate(
            inner,
            self.queue_specs(machine),
            self.calendar,
            overflow=self.site.server.overflow,
            must_fit=self.site.server.window_must_fit,
        )
        if machine < len(self.observers):
            gate.observe(self.observers[machine])
        return gate

    def policies(self) -> list[Policy]:
        self.gates = [self.build(i, c) for i, c in enumerate(self.choices)]
        return list(self.gates)

    # -- changes --------------------------------------------------------------------
    def choose(self, machine: int, policy: str | None, params: Mapping[str, str] | None) -> Choice:
        """The choice a change asks for: parameters given with a policy replace the old
        ones, alone they update them; refused with the registry's message if bad."""
        old = self.choices[machine]
        name = old.name if policy is None else policy
        if policy is not None and params is not None:
            merged = dict(params)
        elif policy is not None and policy != old.name:
            merged = {}
        else:
            merged = {**old.params, **(params or {})}
        try:
            parse_params(get_spec(name), merged)
        except PolicyError as exc:
            raise bad_request(str(exc)) from None
        return Choice(name, merged)

    def use(self, machine: int, choice: Choice) -> Choice:
        """Run ``choice`` on ``machine`` from now on; its waiting jobs move over."""
        assert self.engine is not None
        old = self.choices[machine]
        gate = self.gates[machine] = self.build(machine, choice)
        self.engine.set_policy(machine, gate)
        self.choices[machine] = choice
        self.changed()
        return old

    def reconfigure(self, site: SiteConfig, calendar: PrimeCalendar) -> None:
        """A re-read configuration: new queue windows and stopped queues for every machine."""
        assert self.engine is not None
        self.site = site
        self.calendar = calendar
        self._build_windows()
        for m, gate in zip(self.engine.machines, self.gates, strict=True):
            gate.overflow = site.server.overflow
            gate.must_fit = site.server.window_must_fit
            gate.reclassify(m, queue_classes(self.queue_specs(m.index), calendar))
        self.changed()

    # -- plans ----------------------------------------------------------------------
    def changed(self) -> None:
        self.version += 1

    def plan(self, machine: int) -> list[tuple[Job, int]]:
        """Every waiting job of a machine in its policy's order, with its planned start."""
        cached = self._plans.get(machine)
        if cached is not None and cached[0] == self.version:
            return cached[1]
        assert self.engine is not None
        m: MachineState = self.engine.machines[machine]
        plan = m.policy.planned_starts(m)
        self._plans[machine] = (self.version, plan)
        return plan

    def planned_starts(self) -> dict[int, int]:
        """Planned start of every waiting job that can start, by job id."""
        assert self.engine is not None
        return {
            job.id: start
            for m in self.engine.machines
            for job, start in self.plan(m.index)
            if start != NEVER
        }

    def window_state(self, queue: str, now: int) -> tuple[bool, int | None]:
        """Whether a queue's window is open now and when that changes (None: never)."""
        win = self.windows.get(queue)
        if win is None:
            return True, None
        return win.is_open(now), win.next_change(now)

    @staticmethod
    def catalog() -> list[dict[str, Any]]:
        out = []
        for name in policy_names():
            spec = get_spec(name)
            out.append(
                {"name": name, "description": spec.description, "params": spec.param_names()}
            )
        return out
