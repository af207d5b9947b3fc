"""What the metrics exporter reads from the service (its ``MetricsSource``): queues,
save status, each machine's pools, the planned-schedule gauges and job counts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from batchd.metrics.exporter import PoolState
from batchd.server.collector import collector_paused
from batchd.server.service.pool_states import pool_states

if TYPE_CHECKING:
    from batchd.engine.core import Engine
    from batchd.metrics.live import LiveMetrics
    from batchd.server.service.history import History
    from batchd.server.service.journal import Journal
    from batchd.server.service.nodes import Nodes
    from batchd.server.service.saving import SaveStatus
    from batchd.server.service.scheduler import Scheduler
    from batchd.site.config import SiteConfig


class Figures:
    """The service's figures (``BatchService`` is one)."""

    site: SiteConfig
    engine: Engine
    metrics: LiveMetrics
    scheduler: Scheduler
    journal: Journal
    history: History
    nodes: Nodes
    saving: SaveStatus
    lost: str | None

    if TYPE_CHECKING:

        @property
        def now(self) -> int: ...

        def sync(self) -> None: ...

    def queue_names(self) -> list[str]:
        return [q.name for q in self.site.queues()]

    def flush_tally(self) -> None:
        self.journal.flush_tally()

    def save_failing(self) -> bool:
        return self.saving.failing or self.lost is not None

    def pools(self) -> list[PoolState]:
        """Each machine now: nodes by state, the policy it runs and the order in force."""
        return pool_states(self.engine, self.site, self.nodes, self.scheduler)

    def refresh_plan_gauges(self) -> None:
        """Recompute the planned-schedule gauges (the scheduling loop calls this).

        A machine's plan outline is asked for only if the plan may have changed since
        the last time. The policies that keep their plan tell it from what they keep;
        for the others a plan is made and not kept: a plan of a deep queue is one
        object per waiting job, made and dropped with the collector paused, so that no
        collection walks it.
        """
        self.sync()
        now, version = self.now, self.scheduler.version
        for m in self.engine.machines:
            gauges = self.metrics.plan_of(m.index)
            if not gauges.holds(version, now):
                with collector_paused():
                    outline = self.scheduler.plan_outline(m.index)
                gauges.take(version, outline)
            gauges.update(now, m.running_ends())

    def counts(self) -> dict[str, int]:
        """Jobs by state letter; F: the finished jobs in the history."""
        self.journal.flush_tally()
        tally = self.metrics.tally
        out = {letter: tally.total(letter) for letter in "QHWRE"}
        out["F"] = self.history.count
        return out

    def counts_by_queue(self) -> dict[str, dict[str, int]]:
        """Unfinished jobs of each configured queue by state letter (Q R H W E)."""
        self.journal.flush_tally()
        tally = self.metrics.tally
        return {
            q.name: {letter: tally.count(q.name, letter) for letter in "QRHWE"}
            for q in self.site.queues()
        }
