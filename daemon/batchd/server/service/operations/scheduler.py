"""Operations on the scheduler: a manager changes a machine's policy, or a grid's
structure, live.

Each change is kept in the switch history (the last 100, saved with the state) and
is counted and logged once it is saved. The compiled kernels a change needs are
loaded off the loop before it is made (``kernels_for``), so that no pass compiles.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import structlog

from batchd.engine.warm import UNITS, units_for
from batchd.model.states import JobState
from batchd.server.admin_schemas import SchedulerChange
from batchd.server.errors import bad_request
from batchd.server.service.access import Caller, require

if TYPE_CHECKING:
    from batchd.server.service.facade import BatchService

log = structlog.get_logger("batchd")

SWITCHES_KEPT = 100


def kernel_units(svc: BatchService, caller: Caller, change: SchedulerChange) -> list[str]:
    """The kernel units (``batchd.engine.warm``) a change may run: a policy's, or on a grid
    site every unit (its structures and local policies use any). A caller who may not
    change the scheduler is refused here, before anything is compiled for him."""
    require(caller, "manager", "change the scheduler")
    if svc.scheduler.grid is not None:
        return list(UNITS)
    return units_for([change.policy]) if change.policy is not None else []


def kernels_for(svc: BatchService, caller: Caller, change: SchedulerChange) -> list[Future[None]]:
    """The compiled kernels a change of the scheduler needs that are still being loaded
    (off the loop): the route waits for them before it makes the change."""
    if svc.kernels is None:
        return []
    return svc.kernels.ready(kernel_units(svc, caller, change))


def set_scheduler(svc: BatchService, caller: Caller, change: SchedulerChange) -> None:
    """A manager's change of policy (per machine), or of a grid site's structure."""
    if svc.scheduler.grid is not None:
        set_grid(svc, caller, change)
    else:
        set_policies(svc, caller, change)


def set_policies(svc: BatchService, caller: Caller, change: SchedulerChange) -> None:
    """The policy (and parameters) of one machine, or of every machine."""
    if change.grid is not None:
        raise bad_request(
            "grid: this site runs no grid structure (a [grid] table in the site file, "
            "then a restart, makes it a grid)"
        )
    entries: list[dict[str, Any]] = []
    with svc.change():
        require(caller, "manager", "change the scheduler")
        sched = svc.scheduler
        machines = svc.site.machine
        targets = (
            range(len(machines)) if change.machine is None else [svc.machine_named(change.machine)]
        )
        chosen = {i: sched.choose(i, change.policy, change.params) for i in targets}
        for i, choice in chosen.items():
            old = sched.use(i, choice)
            entries.append(
                _switch(svc, caller, machines[i].name, old.name, choice.name, choice.params)
            )
        sched.switches = (sched.switches + entries)[-SWITCHES_KEPT:]
        svc.save_meta(
            policies={
                m.name: {"policy": c.name, "params": c.params}
                for m, c in zip(machines, sched.choices, strict=True)
            },
            switches=sched.switches,
        )
    for entry in entries:
        if entry["from"] != entry["to"]:
            svc.metrics.policy_switched(entry["machine"], entry["from"], entry["to"])
        log.info("policy_set", **{k: v for k, v in entry.items() if k != "time"})


def grid_request(
    svc: BatchService, change: SchedulerChange
) -> tuple[str | None, dict[str, str] | None]:
    """The structure and grid parameters a change asks for: ``grid``, and ``policy``
    (with ``machine``) as the local policy (``local`` or ``local.MACHINE``)."""
    if change.params is not None:
        raise bad_request(
            "params: a grid's local policies run with their default parameters; set the "
            "grid's parameters with grid.params"
        )
    structure = change.grid.structure if change.grid is not None else None
    params = dict(change.grid.params) if change.grid and change.grid.params is not None else None
    if change.policy is not None:
        key = "local"
        if change.machine is not None:
            key = f"local.{svc.site.machine[svc.machine_named(change.machine)].name}"
        params = {**(params or {}), key: change.policy}
    elif change.machine is not None:
        raise bad_request(
            "machine: on a grid site it names the machine whose local policy changes, with policy"
        )
    if structure is None and params is None:
        raise bad_request("give grid (structure and/or params), or policy")
    return structure, params


def set_grid(svc: BatchService, caller: Caller, change: SchedulerChange) -> None:
    """A grid site's structure, parameters or a machine's local policy: the waiting jobs
    move to the new layer, the running ones run on where they are."""
    with svc.change():
        require(caller, "manager", "change the scheduler")
        sched = svc.scheduler
        structure, params = grid_request(svc, change)
        choice = sched.choose_grid(structure, params)
        waiting = (JobState.QUEUED, JobState.HELD, JobState.WAITING)
        unrun = {r.seq: r.job.width for r in svc.records.values() if r.state in waiting}
        refused = sched.too_wide(choice.structure, unrun)
        if refused is not None:
            raise bad_request(refused)
        old = sched.use_grid(choice)
        entry = _switch(svc, caller, "grid", old.structure, choice.structure, choice.params)
        sched.switches = [*sched.switches, entry][-SWITCHES_KEPT:]
        for rec in svc.records.values():
            if rec.state is JobState.QUEUED:
                svc.journal.touch(rec)  # its machine in the new layer is saved
        svc.save_meta(
            grid={"structure": choice.structure, "params": choice.params},
            switches=sched.switches,
        )
    if old.structure != choice.structure:
        svc.metrics.policy_switched("grid", old.structure, choice.structure)
        svc.metrics.grid_structure(choice.structure)
    log.info("grid_set", **{k: v for k, v in entry.items() if k != "time"})


def _switch(
    svc: BatchService, caller: Caller, where: str, old: str, new: str, params: dict[str, str]
) -> dict[str, Any]:
    """One entry of the switch history."""
    return {
        "time": svc.now,
        "machine": where,
        "from": old,
        "to": new,
        "params": dict(params),
        "by": caller.user,
    }
