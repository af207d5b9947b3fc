"""The job: what was asked for, and what the scheduler did with it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from batchd.model.machine import node_runs
from batchd.model.moldable import Moldable
from batchd.model.states import JobState
from batchd.model.utility import Utility

UNSET = -1


class TraceLine(NamedTuple):
    """Where a job read from a trace came from: the SWF fields of its line and the
    ``key=value`` tokens after them, as read (a job written back starts from them)."""

    fields: tuple[float | int, ...]
    tokens: tuple[str, ...] = ()


@dataclass(slots=True)
class JobResult:
    """What became of a job, written as it is planned, starts, stops and ends (by the
    engine; a planner's promise and dynP's policy by the policies); all unset at first."""

    killed: bool = False  # it reached its estimate and was ended there
    outcome: str = ""  # how it ended: ok, walltime, cancelled, node_fail, ...
    submit_plan: int = UNSET  # start the planner promised at submission, if it plans
    started_by: str = ""  # policy in force when the job started (dynP statistics)
    # While a job that really runs is being stopped (state EXITING): what follows its
    # end, "end" (it finishes with ``outcome``) or "requeue".
    stopping: str = ""
    # The units it held, as runs (first, count, ...), once it ended under an engine that
    # folds a finished job's ids (``Engine(fold_units=True)``, a job of ``FOLD_FROM``
    # units or more); () otherwise.
    ran_on: tuple[int, ...] = ()


@dataclass(slots=True, eq=False)
class Job:
    """One job. Times are integer seconds on the emulated clock.

    ``width`` is the number of units the job runs on (nodes; cores on a machine whose
    nodes are shared), ``estimate`` its requested walltime (it is killed there unless
    the engine runs with ``kill=False``) and ``runtime`` how long it would run if left
    alone: from a trace; for a daemon's emulated job the BATCHD_RUNTIME it was submitted
    with, else its walltime, set at submission; a job that really runs (``external``)
    carries its walltime there (plans use it), and what it ran is ``run`` once it ended.
    ``units`` are the ids of the units it holds while it runs: node ids, or core ids on
    a machine whose nodes are shared (empty while it waits, and in a replay that holds
    units by count). What became of the job (how it ended, the policy that started
    it, ...) is ``result``, where a trace's job came from ``trace``; the other fields are
    what was asked for and where and when it runs.
    """

    id: int
    submit: int
    width: int
    estimate: int
    runtime: int
    user: str = ""
    queue: str = ""
    name: str = ""
    machine: int = 0
    priority: int = 0  # higher first, ahead of the policy's order (qsub -p)
    state: JobState = JobState.QUEUED
    start: int = UNSET
    end: int = UNSET
    units: list[int] = field(default_factory=list)
    trace: TraceLine | None = None  # the trace line it was read from, if any
    utility: Utility | None = None  # what its result is worth by turnaround (Lee's utility paper)
    # The trace's priority class, 0 the highest (Lee's utility paper's normalised priority, the
    # priority_class= token): prio-fifo ranks by it after the PBS priority.
    priority_class: int = 0
    # A moldable job's range and speedup (Sabin et al.'s moldable paper), with the width, runtime and estimate
    # it was submitted with; ``width``, ``runtime`` and ``estimate`` above are those of the
    # width it runs on once started (the engine reshapes it), else the requested ones.
    mold: Moldable | None = None
    # On a machine whose nodes are shared: the cores each piece of the job takes on one
    # node (``width`` is their sum), and whether its pieces go on different nodes.
    # None: any ``width`` of the machine's units.
    pieces: tuple[int, ...] | None = None
    spread: bool = True
    # A job that really runs (a script on an executing machine): its end is reported
    # (``Engine.exited``), the engine pushes no end of its own; ``runtime`` is unknown
    # until then.
    external: bool = False
    result: JobResult = field(default_factory=JobResult)

    @property
    def duration(self) -> int:
        """Planned length: the estimate, at least one second so it holds its units."""
        return self.estimate if self.estimate > 0 else 1

    @property
    def trace_tokens(self) -> tuple[str, ...]:
        """The ``key=value`` tokens of the trace line it was read from (none if none)."""
        return () if self.trace is None else self.trace.tokens

    @property
    def wait(self) -> int:
        return self.start - self.submit

    @property
    def response(self) -> int:
        return self.end - self.submit

    @property
    def run(self) -> int:
        return self.end - self.start

    def unit_runs(self) -> tuple[int, ...]:
        """The units it holds or held, as runs (first, count, ...): its ids, or, once
        they were folded at its end, what became of them (``result.ran_on``)."""
        return self.result.ran_on or node_runs(self.units)
