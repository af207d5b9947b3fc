"""``ga``: EASY backfilling on the queue order a genetic search finds at each step.

At a scheduling pass whose order matters (``problem.worth_searching``) the policy builds
the step's arrays, searches (``search.search``) and serves the waiting jobs in the best
order found, with EASY. In a replay the search runs within the pass, so a replay is
reproducible for a seed (without a time budget, the default there). In the daemon
(``BuildContext.offload``) the search runs on a worker thread: the pass that needs it
starts it and starts no job; the pass the daemon runs when it is done serves the queue
in its order (jobs that arrived meanwhile behind, in arrival order). If the state
changed while it ran, a new search starts from the state after that pass. A search
stops at its time budget with the best order so far.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from batchd.model.job import Job
from batchd.sched.core.order import fcfs_key
from batchd.sched.core.policy import BuildContext, MachineView, Placement
from batchd.sched.ga.problem import Problem, worth_searching
from batchd.sched.ga.search import SearchResult, search, warm_up
from batchd.sched.policies.reordered import ReorderedEasy

DAEMON_BUDGET = 1.0  # wall seconds a step's search may take in the daemon by default


class GAParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    population: int = Field(
        20, ge=4, le=10_000, description="orders per generation (at least the 4 seed orders)"
    )
    generations: int = Field(100, ge=0, le=1_000_000, description="generations per step")
    mutation: float = Field(0.1, ge=0.0, le=1.0, description="chance a child gets one swap")
    searched: int = Field(
        200, ge=2, le=100_000, description="the first K waiting jobs are ordered by the search"
    )
    budget: float | None = Field(
        None,
        ge=0.0,
        le=86_400.0,
        description="wall seconds per step (0: none; default 1 in the daemon, none in a replay)",
    )
    seed: int | None = Field(
        None, ge=0, lt=2**64, description="seed of the search (default: from the replay's seed)"
    )


@dataclass
class _Pending:
    """A search running on the offload: the jobs it orders and the events it saw."""

    future: Future[SearchResult]
    jobs: list[Job]
    events: int


class GeneticPolicy(ReorderedEasy):
    def __init__(self, params: GAParams, ctx: BuildContext) -> None:
        super().__init__("ga")
        self.params = params
        seed = params.seed if params.seed is not None else ctx.rng.getrandbits(64)
        self.rng = np.random.default_rng(seed)
        self.offload = ctx.offload
        if ctx.offload is not None:
            warm_up()
        budget = params.budget
        if budget is None:
            budget = DAEMON_BUDGET if ctx.offload is not None else 0.0
        self.budget = budget or None
        self._events = 0  # moves with every change of the queue or the machine
        self._pending: _Pending | None = None
        self.searches = 0
        self.generations = 0
        self.budget_stops = 0
        self.improved = 0
        self.jobs_searched = 0
        self.seconds_total = 0.0
        self.seconds_max = 0.0

    def order(self) -> str:
        return "GA"

    # -- events -----------------------------------------------------------------------
    def job_submitted(self, view: MachineView, job: Job) -> None:
        self._events += 1
        super().job_submitted(view, job)

    def job_ended(self, view: MachineView, job: Job) -> None:
        self._events += 1
        super().job_ended(view, job)

    def job_resumed(self, view: MachineView, job: Job) -> None:
        self._events += 1
        super().job_resumed(view, job)

    def withdraw(self, view: MachineView, job: Job) -> None:
        self._events += 1
        super().withdraw(view, job)

    def invalidate(self) -> None:
        self._events += 1
        super().invalidate()

    # -- the pass -----------------------------------------------------------------------
    def choose(self, view: MachineView) -> list[Job] | None:
        """The order of a replay's pass: searched now, if it matters."""
        jobs = self.queue.jobs
        if not self.valued or not worth_searching(view.free, view.capacity, jobs):
            return None  # with no job of any worth, every order earns 0
        base = sorted(jobs, key=fcfs_key)
        problem = Problem.build(
            view.now,
            view.capacity,
            view.running_ends(),
            view.running_widths(),
            base,
            self.params.searched,
        )
        result = self._search(problem)
        self._note(result, len(base))
        return [base[i] for i in result.order.tolist()]

    def schedule(self, view: MachineView) -> list[Placement]:
        if self.offload is None:
            return super().schedule(view)
        pending = self._pending
        if pending is not None and pending.future.done():
            self._pending = None
            result = pending.future.result()
            self._note(result, len(pending.jobs))
            self.reorder(self._in_result_order(pending.jobs, result))
            placements = self._pass(view)
            if pending.events != self._events:  # the state moved on while it searched
                self._start_search(view, placements)
            return placements
        if not self.valued or not worth_searching(view.free, view.capacity, self.queue.jobs):
            return self._pass(view)
        if pending is None:
            self._start_search(view, [])
        return []  # the jobs wait for the search

    def explain(self, job: Job, now: int) -> str | None:
        if self._pending is not None:
            return "the ga scheduler is searching for the best queue order"
        return None

    # -- searching ----------------------------------------------------------------------
    def _search(self, problem: Problem) -> SearchResult:
        p = self.params
        return search(
            problem,
            size=p.population,
            generations=p.generations,
            mutation=p.mutation,
            rng=self.rng,
            budget=self.budget,
        )

    def _start_search(self, view: MachineView, placements: list[Placement]) -> None:
        """Search the state after ``placements`` start, on the offload, if it matters."""
        assert self.offload is not None
        jobs = self.queue.jobs
        free = view.free - sum(p.width for p in placements)
        if not worth_searching(free, view.capacity, jobs):
            return
        ends = view.running_ends() + [view.now + p.job.duration for p in placements]
        widths = view.running_widths() + [p.width for p in placements]
        base = sorted(jobs, key=fcfs_key)
        problem = Problem.build(view.now, view.capacity, ends, widths, base, self.params.searched)
        future = self.offload.submit(lambda: self._search(problem))
        self._pending = _Pending(future, base, self._events)

    def _in_result_order(self, jobs: list[Job], result: SearchResult) -> list[Job]:
        """The waiting jobs: those the search ordered, in its order, then the others (that
        arrived while it ran) in arrival order."""
        waiting = self._rank
        ordered = [jobs[i] for i in result.order.tolist() if jobs[i] in waiting]
        known = set(ordered)
        return ordered + sorted((j for j in self.queue.jobs if j not in known), key=fcfs_key)

    def _note(self, result: SearchResult, jobs: int) -> None:
        self.searches += 1
        self.generations += result.generations
        self.budget_stops += result.stopped == "budget"
        self.improved += result.fitness > result.best_seed
        self.jobs_searched += jobs
        self.seconds_total += result.seconds
        self.seconds_max = max(self.seconds_max, result.seconds)
        self.observer.searched(result.seconds, result.stopped)

    def report(self) -> dict[str, Any]:
        n = self.searches
        return {
            "ga": {
                "searches": n,
                "generations": self.generations,
                "budget_stops": self.budget_stops,
                "improved_share": self.improved / n if n else 0.0,
                "avg_jobs": self.jobs_searched / n if n else 0.0,
                "search_seconds_mean": self.seconds_total / n if n else 0.0,
                "search_seconds_max": self.seconds_max,
            }
        }
