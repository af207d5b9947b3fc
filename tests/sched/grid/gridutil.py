"""Helpers for the grid tests: tiny grids run through the engine with a grid layer."""

from __future__ import annotations

from batchd.engine.core import Engine
from batchd.model.job import Job, TraceLine
from batchd.model.machine import Grid, Machine
from batchd.sched.grid import GridLayer, make_grid

N_FIELDS = 18


def job(
    jid: int, submit: int, width: int, runtime: int, estimate: int | None = None, home: int = 0
) -> Job:
    """A job; ``home`` (1-based, 0: none) goes to the SWF partition field 16."""
    record = None
    if home:
        rec: list[int | float] = [-1] * N_FIELDS
        rec[15] = home
        record = tuple(rec)
    est = runtime if estimate is None else estimate
    return Job(
        id=jid,
        submit=submit,
        width=width,
        estimate=est,
        runtime=runtime,
        trace=None if record is None else TraceLine(record),
    )


def run_grid(
    structure: str, sizes: list[int], jobs: list[Job], seed: int = 0, **params: str
) -> tuple[GridLayer, list[Job], list[Job]]:
    """Run ``jobs`` on machines m0, m1, ... of ``sizes``: (layer, runs, merged jobs)."""
    names = [f"m{i}" for i in range(len(sizes))]
    layer = make_grid(structure, params, list(zip(names, sizes, strict=True)), seed=seed)
    engine = Engine(Grid([Machine(n, s) for n, s in zip(names, sizes, strict=True)]), layer.ports)
    layer.attach(engine.machines)
    engine.load(jobs)
    engine.run()
    runs = sorted(engine.finished, key=lambda j: (j.id, j.machine))
    return layer, runs, layer.merge_parts(runs)


def table(jobs: list[Job]) -> dict[int, tuple[int, int, int]]:
    """id -> (machine, start, end)."""
    return {j.id: (j.machine, j.start, j.end) for j in jobs}


def idle_grid(
    structure: str, sizes: list[int], seed: int = 0, **params: str
) -> tuple[GridLayer, Engine]:
    """The layer of ``structure`` on idle machines m0, m1, ... of ``sizes`` at second 0,
    attached to an engine that has run nothing: events go to the layer directly."""
    names = [f"m{i}" for i in range(len(sizes))]
    layer = make_grid(structure, params, list(zip(names, sizes, strict=True)), seed=seed)
    engine = Engine(Grid([Machine(n, s) for n, s in zip(names, sizes, strict=True)]), layer.ports)
    layer.attach(engine.machines)
    return layer, engine
