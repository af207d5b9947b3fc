"""The scheduling kernels compiled ahead: each unit's policies run on a small workload.

The compiled loops (``sched.kernels.profile`` and the modules built on it) are compiled by numba
at their first call, for the argument types of that call, and kept in numba's on-disk
cache (``NUMBA_CACHE_DIR``, else ``__pycache__`` beside the sources). A cold compile
takes seconds, and loading a process's first kernel from the cache about half a second:
work that must not happen inside a scheduling pass of the daemon's event loop. So the
kernels are warmed ahead, one unit at a time: a unit is the policies that share a kernel
module, run through the engine on a small fixed workload (rigid and moldable jobs, with
utility functions, plus one lone job) with a plan asked for on the way, which calls the
kernels with the types the daemon's passes call them with.

``batchd warm`` (run by ``make``) fills the cache; the daemon warms the units of the
policies it starts with before it serves, and the others when a manager first asks for
one of their policies (``server.service.kernels``). Run as a module
(``python -m batchd.engine.warm UNIT...``) it warms the units given: the daemon does that
in a child process, so a cold compile never holds its interpreter.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Iterable
from types import ModuleType

from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.moldable import FIXED, Moldable, Speedup
from batchd.model.utility import Utility
from batchd.sched.registry import make_policy, policy_names

# Each unit: its kernel modules, and the policies (with parameters) that call them.
# ``profile`` also runs every policy no other unit names: all of them plan with it.
UNITS: dict[str, tuple[tuple[str, ...], tuple[tuple[str, dict[str, str]], ...]]] = {
    "profile": (
        ("batchd.sched.kernels.profile", "batchd.sched.kernels.sums"),
        (
            ("fcfs-cons", {"replan": "rebuild"}),
            ("fcfs-cons", {"replan": "compress"}),
            ("fcfs-cons", {"replan": "guarded"}),
            # dynP's qualities weighted by width (the default) and not (its other sums).
            ("dynp", {}),
            ("dynp", {"quality": "art"}),
        ),
    ),
    "moldable": (("batchd.sched.kernels.moldable",), (("moldable-greedy", {}),)),
    "fairshare": (
        ("batchd.sched.kernels.fairshare",),
        (("moldable-fairshare", {}), ("moldable-efficiency", {})),
    ),
    "iterative": (("batchd.sched.kernels.iterative",), (("moldable-iterative", {}),)),
    "ga": (
        ("batchd.sched.kernels.whatif", "batchd.sched.ga.kernels"),
        (("ga", {"generations": "2", "population": "4", "seed": "0"}),),
    ),
}
# Rules written once in plain Python that a kernel module compiles as its own (EASY's
# shadow in ``kernels.whatif``): their dispatchers count as that module's.
PLAIN_RULES = "batchd.sched.kernels.backfill"
NODES = 8
JOBS = 30


def units_for(policies: Iterable[str]) -> list[str]:
    """The units a machine running these policies calls: ``profile`` and each policy's own
    (a policy of no unit, a site's own among them, plans with ``profile`` only)."""
    wanted = set(policies)
    return [
        unit
        for unit, (_, runs) in UNITS.items()
        if unit == "profile" or wanted & {name for name, _ in runs}
    ]


def _policies(unit: str) -> list[tuple[str, dict[str, str]]]:
    runs = list(UNITS[unit][1])
    if unit == "profile":
        named = {name for _, (_, other) in UNITS.items() for name, _ in other}
        runs += [(name, {}) for name in policy_names() if name not in named]
    return runs


def workload() -> list[list[Job]]:
    """The warm-up's workloads: 30 jobs, four in five moldable, on 8 nodes; one lone job."""
    rng = random.Random(7)
    worth = Utility([(0, 2), (500, 0)])
    jobs = []
    t = 0
    for i in range(1, JOBS + 1):
        t += rng.choice([0, 0, rng.randint(1, 30)])
        width = rng.randint(1, NODES)
        runtime, estimate = rng.randint(0, 200), rng.randint(1, 200)
        if rng.random() < 0.8:
            speed = FIXED if i % 5 == 0 else Speedup("downey", rng.uniform(1, 16), rng.random())
            low, high = rng.randint(1, width), rng.randint(width, NODES)
            mold = Moldable(low, high, speed, width, runtime, estimate)
            jobs.append(Job(i, t, width, estimate, runtime, utility=worth, mold=mold))
        else:
            jobs.append(Job(i, t, width, estimate, runtime, utility=worth))
    return [jobs, [Job(1, 0, 2, 100, 50, utility=worth)]]


def warm(unit: str) -> float:
    """Run ``unit``'s policies on the warm-up's workloads, asking for a plan half-way;
    the wall seconds it took (compiling, loading from the cache, or neither)."""
    began = time.perf_counter()
    for name, params in _policies(unit):
        for jobs in workload():
            engine = Engine(Grid([Machine("warm", NODES)]), [make_policy(name, params)])
            engine.load(jobs)
            engine.run(until=jobs[-1].submit)
            m = engine.machines[0]
            m.policy.planned_starts(m)
            engine.run()
    return time.perf_counter() - began


def jit_enabled() -> bool:
    """False when numba runs the kernels as plain Python (``NUMBA_DISABLE_JIT``)."""
    from numba.core import config

    return not getattr(config, "DISABLE_JIT", False)


def modules(unit: str) -> list[ModuleType]:
    import importlib

    return [importlib.import_module(name) for name in UNITS[unit][0]]


def cached(unit: str) -> bool:
    """Whether numba's cache holds ``unit``'s kernels for these sources: every kernel
    with a cache index has a current one, and each module has one. A kernel that was
    never compiled has none: the unit still counts as cached, and that kernel is
    compiled where the unit is next warmed."""
    for module in modules(unit):
        indexes = [_index(d) for d in _dispatchers(module)]
        known = [i for i in indexes if i is not None]
        if not known or not all(known):
            return False
    return True


def _dispatchers(module: ModuleType) -> list[object]:
    from numba.core.registry import CPUDispatcher

    return [
        obj
        for obj in vars(module).values()
        if isinstance(obj, CPUDispatcher) and obj.__module__ in (module.__name__, PLAIN_RULES)
    ]


def _index(dispatcher: object) -> dict[object, str] | None:
    """The dispatcher's cache index: its entries if current (empty if out of date),
    None if there is none. Read through numba's cache internals; any surprise there
    counts as out of date, so the unit is compiled again rather than trusted."""
    import os

    try:
        index = dispatcher._cache._cache_file  # type: ignore[attr-defined]
        if not os.path.exists(index._index_path):
            return None
        return dict(index._load_index())
    except Exception:
        return {}


def main(argv: list[str]) -> int:
    """Warm the units named (every unit without one), one line each: unit, seconds.
    ``--nice`` first: at a lower priority (the daemon compiling ahead in a child)."""
    if argv[:1] == ["--nice"]:
        import contextlib
        import os

        with contextlib.suppress(OSError):  # a system-call filter may forbid it
            os.nice(10)
        argv = argv[1:]
    units = argv or list(UNITS)
    unknown = [u for u in units if u not in UNITS]
    if unknown:
        print(f"unknown kernel unit {unknown[0]!r}: one of {', '.join(UNITS)}", file=sys.stderr)
        return 2
    for unit in units:
        print(f"{unit} {warm(unit):.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
