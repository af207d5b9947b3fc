"""The scheduler of each machine: its policy behind the site's queue windows, and its plan.

Every machine runs the site's policy (``[server] policy``) until a manager sets
another, for one machine or for all. The policy is built for its machine, on the
site's calendar with the emulated clock counting from the epoch, and wrapped in
the queue-window gate of the queues that send jobs to that machine. The planned
starts ``qstat -T`` shows are kept until the next change.

A site file with a ``[grid]`` table runs a grid structure instead (docs/grid.md,
"Live"): the machines' policies are the ports of one grid layer, built by
``make_grid`` as ``batchd replay --grid`` builds it, and a manager changes the
structure and its parameters (``use_grid``); a machine's local policy is the
parameter ``local.MACHINE``. The layer reaches the machines only through the
engine's machine views and its placements.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from batchd.engine.core import Engine
from batchd.engine.machine import MachineState
from batchd.model.calendar import PrimeCalendar
from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.model.windows import TimeWindow, make_window
from batchd.sched.core.outline import PlanOutline
from batchd.sched.core.policy import BuildContext, Offload, Policy, PolicyObserver
from batchd.sched.grid import GridError, GridLayer, make_grid
from batchd.sched.policies.gate import WindowGate
from batchd.sched.policies.limits import NO_LIMITS, SCHEDULING_OFF, LimitGate, RunBook, RunLimits
from batchd.sched.policies.queues import QueueSpec, queue_classes, queue_gate
from batchd.sched.registry import PolicyError, get_spec, make_policy, parse_params, policy_names
from batchd.server.collector import collector_paused
from batchd.server.errors import bad_request
from batchd.site.config import SiteConfig


@dataclass
class Choice:
    """The policy a machine runs, by name, with its parameters."""

    name: str
    params: dict[str, str] = field(default_factory=dict)


@dataclass
class GridChoice:
    """The grid structure the machines run under, with its parameters (as strings)."""

    structure: str
    params: dict[str, str] = field(default_factory=dict)


def grid_refusal(site: SiteConfig, structure: str | None = None) -> str | None:
    """Why the daemon cannot serve ``structure`` (default: the site's [grid]) on ``site``,
    as "KEY: reason", or None."""
    table = site.grid_table
    structure = structure or (table.structure if table is not None else None)
    if structure is None:
        return None
    shared = [(i, m.name) for i, m in enumerate(site.machine) if m.shared]
    if shared:
        i, name = shared[0]
        return (
            f"machine[{i}].shared: machine {name} shares its nodes; the machines of a grid "
            "give whole nodes, as jobs move between them by their number of nodes"
        )
    windowed = [(i, q.name) for i, q in enumerate(site.queues()) if q.spec().gated]
    if windowed:
        i, name = windowed[0]
        return (
            f"queue[{i}].window: queue {name} has a window; a grid structure does not run "
            "behind queue windows (remove the window, or the [grid] table)"
        )
    return None


class Scheduler:
    def __init__(
        self, site: SiteConfig, calendar: PrimeCalendar, offload: Offload | None = None
    ) -> None:
        self.site = site
        self.calendar = calendar
        self.offload = offload  # where searching policies search (the service's worker)
        self.choices = [Choice(site.server.policy, site.server.params()) for _ in site.machine]
        table = site.grid_table
        self.grid = GridChoice(table.structure, table.raw()) if table is not None else None
        self.layer: GridLayer | None = None
        self.switches: list[dict[str, Any]] = []
        self.windows: dict[str, TimeWindow] = {}
        self.observers: list[PolicyObserver] = []
        self.gates: list[WindowGate] = []  # each machine's policy, behind its queue windows
        # The run limits and the scheduling switch (the service says what is in force);
        # the running jobs they count are shared by every machine's limit gate.
        self.limits: Callable[[], RunLimits] = lambda: NO_LIMITS
        self.run_book = RunBook()
        self.engine: Engine | None = None
        # Each machine's plan as its jobs and their starts, the version it was made at,
        # and its earliest planned start. Not as (job, start) pairs: kept while requests
        # and passes run, 100,000 pairs outlived young collections, and the daemon's
        # collector walked and froze them at every version (server/collector.py).
        self._plans: dict[int, tuple[int, list[Job], list[int], int]] = {}
        self._central: tuple[int, list[tuple[Job, int, int]]] | None = None
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
            machine=machine,
            nodes=self.site.machine[machine].slots,
            calendar=self.calendar,
            offload=self.offload,
        )
        inner = make_policy(choice.name, choice.params, context)
        limited = LimitGate(inner, lambda: self.limits(), self.run_book)
        gate = queue_gate(
            limited,
            self.queue_specs(machine),
            self.calendar,
            overflow=self.site.server.overflow,
            must_fit=self.site.server.window_must_fit,
        )
        if machine < len(self.observers):
            gate.observe(self.observers[machine])
        return gate

    def policies(self) -> list[Policy]:
        if self.grid is not None:
            self.layer = self.build_grid(self.grid)
            self._grid_choices()
            return [self.paused_port(port) for port in self.layer.ports]
        self.gates = [self.build(i, c) for i, c in enumerate(self.choices)]
        return list(self.gates)

    def paused_port(self, port: Policy) -> Policy:
        """A grid port behind the scheduling switch: the run limits do not apply under a
        grid (its layer places the jobs), scheduling off does."""
        return LimitGate(port, lambda: self.switch_only(), self.run_book)

    def switch_only(self) -> RunLimits:
        return NO_LIMITS if self.limits().scheduling else SCHEDULING_OFF

    def attach(self, engine: Engine) -> None:
        """The engine runs these policies: a grid layer sees its machines from now on."""
        self.engine = engine
        if self.layer is not None:
            self.layer.attach(engine.machines)

    def build_grid(self, choice: GridChoice) -> GridLayer:
        """The grid layer of ``choice`` over the site's machines (400 if it is refused)."""
        site = self.site
        refused = grid_refusal(site, choice.structure)
        if refused is not None:
            raise bad_request(refused)
        contexts = [
            BuildContext(machine=i, nodes=m.nodes, calendar=self.calendar, offload=self.offload)
            for i, m in enumerate(site.machine)
        ]
        try:
            return make_grid(
                choice.structure,
                choice.params,
                [(m.name, m.nodes) for m in site.machine],
                contexts,
            )
        except GridError as exc:
            raise bad_request(f"grid: {exc}") from None

    def _grid_choices(self) -> None:
        """What each machine runs under the grid, as its policy shows: its local policy
        (hierarchical, decentral, pool), else the structure's port (grid-central)."""
        layer = self.layer
        assert layer is not None
        self.choices = [
            Choice((layer.local_policy(i) or port).name) for i, port in enumerate(layer.ports)
        ]

    def choose_grid(self, structure: str | None, params: Mapping[str, str] | None) -> GridChoice:
        """The grid a change asks for: parameters given with a new structure replace the old
        ones (a new structure alone starts from its defaults), alone they update them
        (an empty value removes a parameter); checked by building it (400 if bad)."""
        old = self.grid
        assert old is not None
        name = old.structure if structure is None else structure
        if structure is not None and params is not None:
            merged = dict(params)
        elif structure is not None and structure != old.structure:
            merged = {}
        else:
            merged = {**old.params, **(params or {})}
        merged = {k: v for k, v in merged.items() if v != ""}
        choice = GridChoice(name, merged)
        self.build_grid(choice)
        return choice

    def too_wide(self, structure: str, widths: Mapping[int, int]) -> str | None:
        """Why jobs not yet run (id -> width) cannot go to ``structure``: only multisite runs
        a job wider than the widest machine. None if they can."""
        if structure == "multisite":
            return None
        widest = max(m.nodes for m in self.site.machine)
        wide = sorted(seq for seq, w in widths.items() if w > widest)
        if not wide:
            return None
        return (
            f"grid.structure: {structure} runs no job wider than the widest machine "
            f"({widest} nodes); job {wide[0]} (and {len(wide) - 1} more) asks for "
            f"{widths[wide[0]]}: delete or qalter it first, or keep multisite"
        )

    def use_grid(self, choice: GridChoice) -> GridChoice:
        """Run the grid ``choice`` from now on: the waiting jobs move to the new layer (in
        submission order, placed by it as new arrivals); running jobs run on where they are."""
        engine = self.engine
        assert engine is not None and self.grid is not None
        layer = self.build_grid(choice)
        layer.attach(engine.machines)
        waiting = sorted(engine.waiting(), key=lambda j: (j.submit, j.id))
        for job in waiting:
            engine.withdraw(job)
        for i, port in enumerate(layer.ports):
            engine.set_policy(i, self.paused_port(port))
        old, self.grid, self.layer = self.grid, choice, layer
        for m in engine.machines:
            for held in m.holders():
                if isinstance(held, Job):
                    layer.resumed(m.index, held)
        for job in waiting:
            job.machine = 0  # the grid's ports take any width; the layer places it
            engine.enqueue(job)
        self._grid_choices()
        self.changed()
        return old

    def grid_width(self, nodes: int) -> str | None:
        """Under a grid: why a job of ``nodes`` nodes can never run on it, or None."""
        return self.layer.width_refusal(nodes) if self.layer is not None else None

    def forget(self, job: Job) -> None:
        """A finished job left memory: the grid layer drops what it kept of it."""
        if self.layer is not None:
            self.layer.forget(job.id)

    def assigned(self, job: Job) -> int | None:
        """Under a grid: the machine a waiting job was given, or None (not yet)."""
        return self.layer.assigned(job) if self.layer is not None else job.machine

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
        if self.layer is not None:  # no gates under a grid (no queue windows)
            self.changed()
            return
        for m, gate in zip(self.engine.machines, self.gates, strict=True):
            gate.overflow = site.server.overflow
            gate.must_fit = site.server.window_must_fit
            gate.reclassify(m, queue_classes(self.queue_specs(m.index), calendar))
        self.changed()

    # -- plans ----------------------------------------------------------------------
    def changed(self) -> None:
        self.version += 1

    def clock_moved(self, now: int) -> None:
        """The clock moved on to ``now`` and no event was due: the plans made since the
        last change stand, unless time alone can change them. A plan places each job at
        its earliest start from the time it was made; while no planned start has been
        reached, the same starts are the earliest from ``now``. A job past its estimate
        (its end moves with the clock) or a grid's layer makes them again."""
        assert self.engine is not None
        if self.layer is not None or any(m.overrun for m in self.engine.machines):
            self.changed()
            return
        for version, _, _, first in self._plans.values():
            if version == self.version and first <= now:
                self.changed()
                return

    def plan(self, machine: int, keep: bool = True) -> list[tuple[Job, int]]:
        """Every waiting job of a machine in its policy's order, with its planned start;
        kept for the version unless ``keep`` is false (a plan made once, then dropped)."""
        cached = self._plans.get(machine)
        if keep or (cached is not None and cached[0] == self.version):
            return list(zip(*self.plan_columns(machine), strict=True))
        return self._made_plan(machine)

    def plan_columns(self, machine: int) -> tuple[list[Job], list[int]]:
        """``plan(machine)`` as the jobs in order and their planned starts, kept for the
        version."""
        cached = self._plans.get(machine)
        if cached is not None and cached[0] == self.version:
            return cached[1], cached[2]
        with collector_paused():  # the pairs are made and dropped: no collection walks them
            plan = self._made_plan(machine)
            jobs, starts = [job for job, _ in plan], [start for _, start in plan]
        self._plans[machine] = (self.version, jobs, starts, min(starts, default=NEVER))
        return jobs, starts

    def _made_plan(self, machine: int) -> list[tuple[Job, int]]:
        assert self.engine is not None
        m: MachineState = self.engine.machines[machine]
        return self._grid_plan(m) if self.layer is not None else m.policy.planned_starts(m)

    def plan_outline(self, machine: int) -> PlanOutline:
        """The outline of ``plan(machine)``: told by the machine's policy where it keeps
        its plan (no plan made, no queue walked), else walked from a plan made once and
        dropped (or the plan kept for the version)."""
        assert self.engine is not None
        if self.layer is None:
            m = self.engine.machines[machine]
            outline = m.policy.plan_outline(m)
            if outline is not None:
                return outline
        return PlanOutline.of(self.plan(machine, keep=False))

    def _grid_plan(self, m: MachineState) -> list[tuple[Job, int]]:
        """A grid machine's plan: its local policy's for the jobs in its own queue, then the
        jobs waiting for any machine (a central queue, the pool) that the layer plans on
        it (``GridLayer.planned``); those it does not plan are listed, with no planned
        start, where the layer reports them waiting (a central queue on the first machine)."""
        layer = self.layer
        assert layer is not None
        local = layer.local_policy(m.index)
        plan = local.planned_starts(m) if local is not None else []
        central = self._central_plan()
        plan += [(job, start) for job, start, where in central if where == m.index]
        known = {job.id for job, _ in plan} | {job.id for job, _, _ in central}
        return plan + [(j, NEVER) for j in layer.waiting_on(m.index) if j.id not in known]

    def _central_plan(self) -> list[tuple[Job, int, int]]:
        """The layer's planned starts of jobs waiting for any machine, kept for one version."""
        cached = self._central
        if cached is not None and cached[0] == self.version:
            return cached[1]
        assert self.layer is not None
        planned = self.layer.planned()
        self._central = (self.version, planned)
        return planned

    def planned_start(self, job: Job) -> int | None:
        """The planned start of one waiting job (None: it has none), as ``planned_starts``
        gives it; told by its policy alone where it can (a submission's answer), so
        that a deep queue is not planned whole for one job."""
        assert self.engine is not None
        machines = self.engine.machines
        cached = self._plans.get(job.machine)
        if (
            self.layer is None
            and 0 <= job.machine < len(machines)
            and (cached is None or cached[0] != self.version)
        ):
            m = machines[job.machine]
            start = m.policy.planned_start(m, job)
            if start is not None:
                return None if start == NEVER else start
        return self.planned_starts().get(job.id)

    def next_in_line(self, machine: int) -> int | None:
        """The id of the job first in the order of the machine's plan (None: none waits)."""
        assert self.engine is not None
        cached = self._plans.get(machine)
        if self.layer is None and (cached is None or cached[0] != self.version):
            first = self.engine.machines[machine].policy.head()
            return None if first is None else first.id
        jobs, _ = self.plan_columns(machine)
        return jobs[0].id if jobs else None

    def planned_starts(self) -> dict[int, int]:
        """Planned start of every waiting job that can start, by job id."""
        assert self.engine is not None
        return {
            job.id: start
            for m in self.engine.machines
            for job, start in zip(*self.plan_columns(m.index), strict=True)
            if start != NEVER
        }

    def window_state(self, queue: str, now: int) -> tuple[bool, int | None]:
        """Whether a queue's window is open now and when that changes (None: never)."""
        win = self.windows.get(queue)
        if win is None:
            return True, None
        return win.is_open(now), win.next_change(now)

    @staticmethod
    def served_structures() -> list[str]:
        from batchd.sched.grid import STRUCTURES

        return list(STRUCTURES)

    @staticmethod
    def catalog() -> list[dict[str, Any]]:
        out = []
        for name in policy_names():
            spec = get_spec(name)
            out.append(
                {"name": name, "description": spec.description, "params": spec.param_names()}
            )
        return out
