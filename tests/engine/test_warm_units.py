"""The warm-up's own logic (engine/warm.py), without compiling: which units a machine
needs, which policies each unit runs on which workload, how the cache is read, and the
command line. test_warm.py checks, with numba, that what it compiles is what passes call."""

from __future__ import annotations

import hashlib
import os
import sys
import types
from pathlib import Path

import pytest
from numba.core import config
from numba.core.registry import CPUDispatcher

from batchd.engine import warm
from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid
from batchd.sched.core.policy import Policy
from batchd.sched.registry import make_policy, policy_names

OWN_UNITS = {"moldable-greedy", "moldable-fairshare", "moldable-efficiency"}
OWN_UNITS |= {"moldable-iterative", "ga", "fcfs-cons", "dynp"}


def test_a_machine_needs_the_profile_unit_and_its_policies_own() -> None:
    assert warm.units_for([]) == ["profile"]
    assert warm.units_for(["fcfs-easy", "a-site-policy"]) == ["profile"]
    assert warm.units_for(["ga", "moldable-greedy"]) == ["profile", "moldable", "ga"]
    assert warm.units_for(["moldable-efficiency", "moldable-fairshare"]) == [
        "profile",
        "fairshare",
    ]
    assert warm.units_for(iter(["moldable-iterative"])) == ["profile", "iterative"]


def test_the_profile_unit_runs_every_policy_no_other_unit_names() -> None:
    runs = warm._policies("profile")
    assert runs[:5] == [
        ("fcfs-cons", {"replan": "rebuild"}),
        ("fcfs-cons", {"replan": "compress"}),
        ("fcfs-cons", {"replan": "guarded"}),
        ("dynp", {}),
        ("dynp", {"quality": "art"}),
    ]
    assert runs[5:] == [(name, {}) for name in policy_names() if name not in OWN_UNITS]
    assert ("fcfs-easy", {}) in runs and ("dynp", {}) in runs


def test_another_unit_runs_its_own_policies_only() -> None:
    assert warm._policies("ga") == [("ga", {"generations": "2", "population": "4", "seed": "0"})]
    assert warm._policies("fairshare") == [("moldable-fairshare", {}), ("moldable-efficiency", {})]


def describe(job: Job) -> tuple[object, ...]:
    m = job.mold
    assert job.utility is not None
    mold = None
    if m is not None:
        speed = (m.speedup.kind, round(m.speedup.a, 9), round(m.speedup.sigma, 9))
        mold = (m.low, m.high, *speed, m.width, m.runtime, m.estimate)
    return (job.id, job.submit, job.width, job.estimate, job.runtime, job.utility.points, mold)


def test_the_workloads_are_fixed_and_mix_every_kind_of_job() -> None:
    """The same jobs every time (seed 7), so warm-ups compare: 30 jobs on 8 nodes, most
    moldable (every fifth of those of a fixed runtime), all with a utility function;
    then one lone rigid job."""
    jobs, lone = warm.workload()
    assert [j.id for j in jobs] == list(range(1, 31))
    assert [describe(j) for j in jobs[:2]] == [
        (
            1,
            0,
            7,
            13,
            166,
            ((0, 2), (500, 0)),
            (1, 7, "downey", 9.038230065, 0.365688917, 7, 166, 13),
        ),
        (
            2,
            0,
            7,
            18,
            107,
            ((0, 2), (500, 0)),
            (5, 7, "downey", 9.265708807, 0.059110506, 7, 107, 18),
        ),
    ]
    assert all(1 <= j.width <= 8 and 1 <= j.estimate <= 200 for j in jobs)
    assert [j.id for j in jobs if j.mold is not None and j.mold.speedup.kind == "fixed"] == [
        5,
        20,
        25,
    ]
    assert sum(j.mold is not None for j in jobs) == 23
    assert jobs[-1].submit == 146
    digest = hashlib.sha256(repr([describe(j) for j in jobs]).encode()).hexdigest()
    assert digest == "6d41a958fe821b1995101cb3ecef0c8742f29fc02fcc78bc0157c88fd78a7a8c"
    assert [describe(j) for j in lone] == [(1, 0, 2, 100, 50, ((0, 2), (500, 0)), None)]


def test_a_warm_up_runs_each_policy_on_each_workload_with_a_plan_half_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log: list[tuple[object, ...]] = []

    class Recording(Engine):
        def __init__(self, grid: Grid, policies: list[Policy]) -> None:
            machine = grid.machines[0]
            log.append(("engine", machine.name, machine.nodes, len(grid.machines)))
            super().__init__(grid, policies)

        def load(self, jobs: object) -> None:
            listed = list(jobs)  # type: ignore[call-overload]
            log.append(("load", len(listed)))
            super().load(listed)

        def run(self, until: int | None = None, progress: object = None) -> None:
            log.append(("run", until))
            super().run(until)
            log.append(("ran", self.now if until is not None else self.ended))

    def policy(name: str, params: dict[str, str]) -> Policy:
        made = make_policy(name, params)
        log.append(("policy", name, params))
        asked = made.planned_starts

        def planned(view: object) -> list[tuple[Job, int]]:
            log.append(("plan", view.now))  # type: ignore[attr-defined]
            return asked(view)  # type: ignore[arg-type]

        made.planned_starts = planned  # type: ignore[method-assign]
        return made

    # Policies that call no compiled kernel: what is checked is the warm-up's steps.
    runs: list[tuple[str, dict[str, str]]] = [("fcfs", {}), ("fcfs-easy", {})]
    monkeypatch.setattr(warm, "_policies", lambda unit: runs if unit == "fairshare" else [])
    monkeypatch.setattr(warm, "Engine", Recording)
    monkeypatch.setattr(warm, "make_policy", policy)
    seconds = warm.warm("fairshare")
    assert 0 < seconds < 60
    expected: list[tuple[object, ...]] = []
    for name, params in runs:
        for count, last in ((30, 146), (1, 0)):
            expected += [
                ("policy", name, params),
                ("engine", "warm", 8, 1),
                ("load", count),
                ("run", last),
                ("ran", last),  # up to the last submission
                ("plan", last),
                ("run", None),
                ("ran", count),  # to the end: every job ended
            ]
    assert log == expected


def test_jit_enabled_reads_numba_s_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "DISABLE_JIT", 1, raising=False)
    assert warm.jit_enabled() is False
    monkeypatch.setattr(config, "DISABLE_JIT", 0, raising=False)
    assert warm.jit_enabled() is True
    monkeypatch.delattr(config, "DISABLE_JIT")
    assert warm.jit_enabled() is True


def test_a_unit_s_modules_are_its_kernel_modules() -> None:
    for unit, (names, _) in warm.UNITS.items():
        assert [m.__name__ for m in warm.modules(unit)] == list(names)


def dispatcher(module: str) -> object:
    def kernel(x: int) -> int:
        return x + 1

    kernel.__module__ = module
    return CPUDispatcher(kernel, targetoptions={"nopython": True})


def test_a_module_s_kernels_are_its_own_dispatchers_and_the_plain_rules() -> None:
    module = types.ModuleType("kernels.fake")
    own, plain, foreign = (
        dispatcher("kernels.fake"),
        dispatcher(warm.PLAIN_RULES),
        dispatcher("elsewhere"),
    )

    def helper() -> None: ...

    vars(module).update(own=own, plain=plain, foreign=foreign, helper=helper, n=3)
    assert warm._dispatchers(module) == [own, plain]


class Index:
    def __init__(self, path: Path, entries: dict[object, str]) -> None:
        self._index_path = str(path)
        self.entries = entries

    def _load_index(self) -> list[tuple[object, str]]:
        return list(self.entries.items())


def cached_at(path: Path, entries: dict[object, str]) -> object:
    cache = types.SimpleNamespace(_cache_file=Index(path, entries))
    return types.SimpleNamespace(_cache=cache)


def test_a_kernel_s_cache_index(tmp_path: Path) -> None:
    index = tmp_path / "kernel.nbi"
    assert warm._index(cached_at(index, {"sig": "file"})) is None  # never compiled
    index.write_text("")
    assert warm._index(cached_at(index, {"sig": "file"})) == {"sig": "file"}
    assert warm._index(cached_at(index, {})) == {}  # out of date
    assert warm._index(types.SimpleNamespace()) == {}  # numba's internals changed


@pytest.mark.parametrize(
    ("indexes", "cached"),
    [
        ([[{"a": "1"}, None], [{"b": "2"}]], True),  # a kernel never compiled counts
        ([[{"a": "1"}, {"c": "3"}]], True),
        ([[{"a": "1"}], [None]], False),  # a module with no index at all
        ([[{"a": "1"}], []], False),
        ([[{"a": "1"}, {}]], False),  # one out of date
        ([[{}], [{"b": "2"}]], False),
    ],
)
def test_a_unit_is_cached_when_each_module_has_a_current_index(
    monkeypatch: pytest.MonkeyPatch, indexes: list[list[dict[str, str] | None]], cached: bool
) -> None:
    fakes = [types.ModuleType(f"m{i}") for i in range(len(indexes))]
    per_module = {id(m): list(range(len(ix))) for m, ix in zip(fakes, indexes, strict=True)}
    answers = {
        (id(m), k): ix[k] for m, ix in zip(fakes, indexes, strict=True) for k in range(len(ix))
    }
    monkeypatch.setattr(warm, "modules", lambda unit: fakes if unit == "ga" else [])
    monkeypatch.setattr(warm, "_dispatchers", lambda m: [(id(m), k) for k in per_module[id(m)]])
    monkeypatch.setattr(warm, "_index", lambda d: answers[d])
    assert warm.cached("ga") is cached


@pytest.fixture
def warmed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    done: list[str] = []

    def fake(unit: str) -> float:
        done.append(unit)
        return 1.234

    monkeypatch.setattr(warm, "warm", fake)
    return done


def test_the_command_warms_the_units_named(
    warmed: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert warm.main(["ga", "moldable"]) == 0
    assert warmed == ["ga", "moldable"]
    assert capsys.readouterr().out == "ga 1.23\nmoldable 1.23\n"


def test_the_command_warms_every_unit_without_one(
    warmed: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert warm.main([]) == 0
    assert warmed == list(warm.UNITS)
    assert capsys.readouterr().out.splitlines()[0] == "profile 1.23"


def test_the_command_refuses_an_unknown_unit_before_warming_any(
    warmed: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert warm.main(["ga", "kernelz", "other"]) == 2
    assert warmed == []
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == (
        "unknown kernel unit 'kernelz': one of profile, moldable, fairshare, iterative, ga\n"
    )


def test_the_command_lowers_its_priority_when_asked(
    warmed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    niced: list[int] = []
    monkeypatch.setattr(os, "nice", niced.append)
    assert warm.main(["--nice", "ga"]) == 0
    assert niced == [10] and warmed == ["ga"]
    assert warm.main(["ga", "--nice"]) == 2  # only as the first argument
    assert niced == [10]

    def forbidden(increment: int) -> int:
        raise PermissionError("a system-call filter")

    monkeypatch.setattr(os, "nice", forbidden)
    assert warm.main(["--nice"]) == 0  # it warms anyway: every unit
    assert warmed == ["ga", *warm.UNITS]


class Pipe:
    """A stdout that notes what was written and when it was flushed."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def write(self, text: str) -> int:
        self.events.append(text)
        return len(text)

    def flush(self) -> None:
        self.events.append("<flush>")


def test_each_unit_s_line_is_flushed_as_soon_as_it_is_warm(
    warmed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The daemon reads the child's lines as they come: each unit it waits for is
    ready when its line arrives, not when the last unit is."""
    pipe = Pipe()
    monkeypatch.setattr(sys, "stdout", pipe)
    assert warm.main(["ga", "moldable"]) == 0
    assert "".join(pipe.events) == "ga 1.23\n<flush>moldable 1.23\n<flush>"
