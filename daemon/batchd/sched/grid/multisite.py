"""Central multi-site scheduling (Hamscher et al.'s grid paper, sec. 3.1 and 5.2): a job may span machines.

One queue for the grid in submission order (FCFS: when the first waiting job
cannot start, nothing behind it starts). A job that one machine can start now
runs there (the ``select`` strategy over M_free, ties to the machine listed
first). Otherwise it is split: machines with at least ``min_part`` free nodes are
taken in order of free nodes, most first (ties: listed first), each part as large
as the machine's free nodes, until the job's width is covered; so the job runs on
as few machines as possible. If the last part would be smaller than ``min_part``
the part before it gives it the missing nodes (when it keeps ``min_part`` itself);
if that cannot be done, or the free nodes do not cover the job, it waits. All
parts start at the same second, and each runs for the job's runtime (and
estimate) times the factor of overhead model ``overhead`` with parameter ``p``
(``batchd.sched.grid.overhead``). A job is rejected only when it is wider than
the whole grid.

Each part is a job of its own for the engine (same id, its machine, its width);
the replay merges them back into one job for the metrics and lists every part in
its schedule outputs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from batchd.model.job import Job
from batchd.model.states import JobState
from batchd.sched.core.policy import Placement
from batchd.sched.grid.layer import GridLayer
from batchd.sched.grid.overhead import multisite_factor, stretch
from batchd.sched.grid.params import GridParams
from batchd.sched.grid.select import choose


def split_widths(width: int, free: Sequence[int], min_part: int) -> list[tuple[int, int]] | None:
    """(machine, nodes) parts covering ``width`` on the fewest machines, or None."""
    order = sorted(
        (i for i in range(len(free)) if free[i] >= min_part), key=lambda i: (-free[i], i)
    )
    parts: list[tuple[int, int]] = []
    left = width
    for i in order:
        if left <= 0:
            break
        r = min(free[i], left)
        parts.append((i, r))
        left -= r
    if left > 0 or len(parts) < 2:
        return None
    last_m, last = parts[-1]
    if last < min_part:
        prev_m, prev = parts[-2]
        need = min_part - last
        if prev - need < min_part:
            return None
        parts[-2] = (prev_m, prev - need)
        parts[-1] = (last_m, min_part)
    return parts


class MultisiteGrid(GridLayer):
    def __init__(
        self, params: GridParams, nodes: Sequence[int], names: Sequence[str], seed: int
    ) -> None:
        super().__init__(params, nodes, names, seed)
        self.queue: list[Job] = []
        self.parents: dict[int, Job] = {}  # id -> the job as submitted, for split jobs

    def submitted(self, job: Job) -> None:
        self.queue.append(job)

    def withdraw(self, job: Job) -> None:
        self.queue.remove(job)

    def waiting_on(self, machine: int) -> list[Job]:
        return list(self.queue) if machine == 0 else []

    def plan_pass(self) -> list[list[Placement]]:
        out: list[list[Placement]] = [[] for _ in range(self.n)]
        if not self.queue:
            return out
        free = [v.free for v in self.views]
        name, _ = self.params.strategy
        k = 0
        for job in self.queue:
            w = job.width
            cands = [i for i in range(self.n) if self.nodes[i] >= w and free[i] >= w]
            if cands:
                m = choose(name, w, cands, free, self.nodes, self.rng)
                out[m].append(self.place(job, m))
                free[m] -= w
            else:
                parts = split_widths(w, free, self.params.min_part)
                if parts is None:
                    break
                self._start_parts(job, parts, out, free)
            k += 1
        if k:
            del self.queue[:k]
        return out

    def _start_parts(
        self, job: Job, parts: list[tuple[int, int]], out: list[list[Placement]], free: list[int]
    ) -> None:
        factor = multisite_factor(
            self.params.overhead, self.params.p, [r for _, r in parts], self.params.part_unit
        )
        runtime = stretch(job.runtime, factor)
        estimate = stretch(job.estimate, factor)
        self.parents[job.id] = job
        self.stats.multisite_jobs += 1
        for m, r in parts:
            part = Job(
                id=job.id,
                submit=job.submit,
                width=r,
                estimate=estimate,
                runtime=runtime,
                user=job.user,
                queue=job.queue,
                name=job.name,
                machine=m,
                priority=job.priority,
                trace=job.trace,
                utility=job.utility,
            )
            out[m].append(Placement(part, m, r))
            free[m] -= r
            self.stats.multisite_added_node_seconds += r * (runtime - max(job.runtime, 0))

    def width_refusal(self, width: int) -> str | None:
        """A job wider than every machine runs only if the idle grid can split it."""
        if width <= max(self.nodes):
            return None
        total = sum(self.nodes)
        if width > total:
            return f"the grid's machines have {total} in all (multisite)"
        if split_widths(width, self.nodes, self.params.min_part) is None:
            return (
                f"it is wider than every machine and cannot be split over them in parts of "
                f"at least {self.params.min_part} nodes (min_part)"
            )
        return None

    def forget(self, job_id: int) -> None:
        super().forget(job_id)
        self.parents.pop(job_id, None)

    def merge_parts(self, finished: Sequence[Job]) -> list[Job]:
        """One job per split job: started with its parts, ended with the last of them."""
        out: list[Job] = []
        parts: dict[int, list[Job]] = {}
        for job in finished:
            if job.id in self.parents and job is not self.parents[job.id]:
                parts.setdefault(job.id, []).append(job)
            else:
                out.append(job)
        for jid, group in parts.items():
            parent = self.parents[jid]
            killed = any(p.result.killed for p in group)
            out.append(
                dataclasses.replace(
                    parent,
                    state=JobState.FINISHED,
                    machine=group[0].machine,
                    start=group[0].start,
                    end=max(p.end for p in group),
                    units=[],
                    result=dataclasses.replace(
                        parent.result,
                        killed=killed,
                        outcome="walltime" if killed else group[0].result.outcome,
                        started_by=group[0].result.started_by,
                    ),
                )
            )
        out.sort(key=lambda j: j.id)
        return out
