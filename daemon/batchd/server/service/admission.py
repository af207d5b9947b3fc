"""What a job may ask for: its queue's limits, its machine's size, its queue's window.

A submission or an alteration is checked completely before anything changes; a
refusal names the limit it breaks and, where another queue would take the job,
which ones.
"""

from __future__ import annotations

from collections.abc import Callable

from batchd.model.times import hms
from batchd.model.windows import DAY, HORIZON, TimeWindow, longest_opening, next_fit
from batchd.server.errors import bad_request, forbidden
from batchd.site.config import SiteConfig
from batchd.site.tables import QueueConfig


class Admission:
    def __init__(self, site: SiteConfig, windows: dict[str, TimeWindow]) -> None:
        self.site = site
        self.windows = windows  # the scheduler's queue windows, replaced on reload
        # Under a grid: why a job of so many nodes can never run on it (the layer in
        # force says: the widest machine, or under multisite what can be split), or None.
        self.grid_width: Callable[[int], str | None] = lambda nodes: None
        # The queue of an advance reservation that takes jobs now, or None.
        self.reserved: Callable[[str], QueueConfig | None] = lambda name: None
        # Whether a manager has set a queue live (qmgr): its settings are saved, over the file's.
        self.set_live: Callable[[str], bool] = lambda name: False
        # Refuses one more unfinished job of an owner in a queue over its queued limits
        # (queue, owner, the job being moved there or 0); the service sets it.
        self.check_queued: Callable[[str, str, int], None] = lambda queue, owner, moving: None
        # The owner of the advance reservation whose queue this is, or None.
        self.resv_owner: Callable[[str], str | None] = lambda name: None

    def check_authorized(self, qname: str, owner: str) -> None:
        """A reservation's queue takes the jobs of its Authorized_Users: its owner, as
        PBS's default (pbs_rstat shows it)."""
        allowed = self.resv_owner(qname)
        if allowed is not None and owner != allowed:
            raise forbidden(
                f"Unauthorized Request: queue {qname} takes only the jobs of reservation "
                f"{qname}'s Authorized_Users ({allowed})"
            )

    def queue(self, name: str) -> QueueConfig:
        for q in self.site.queues():
            if q.name == name:
                return q
        resv_queue = self.reserved(name)
        if resv_queue is not None:
            return resv_queue
        names = ", ".join(q.name for q in self.site.queues())
        raise bad_request(f"unknown queue {name!r}; queues: {names}")

    def check(
        self, qname: str, nodes: int, walltime: int | None, now: int
    ) -> tuple[QueueConfig, int]:
        """The queue and walltime for a job of this shape, or the limit it breaks."""
        queue = self.queue(qname)
        if not queue.enabled:
            raise bad_request(
                f"Queue is not enabled: queue {qname} takes no new jobs; {self._enable(qname)}"
            )
        if self.site.grid_table is not None and self.reserved(qname) is None:
            refused = self.grid_width(nodes)
            if refused is not None:
                raise bad_request(f"nodes: {nodes} nodes requested; {refused}")
        else:
            machine = self.site.machine[self.site.machine_index(queue.machine)]
            if nodes > machine.slots:
                what = "ncpus" if machine.shared else "nodes"
                unit = "cores" if machine.shared else "nodes"
                raise bad_request(
                    f"{what}: {nodes} {unit} requested; machine {machine.name} has "
                    f"{machine.slots}{self.takers(nodes, walltime, now)}"
                )
        per = self._per_node(queue)
        if queue.max_nodes is not None and nodes > queue.max_nodes * per:
            if per > 1:  # shared nodes: the limit allows that many nodes' cores
                raise bad_request(
                    f"ncpus: {nodes} cores exceed the limit of queue {qname} "
                    f"(resources_max.nodect = {queue.max_nodes}; {per} cores a node)"
                    f"{self.takers(nodes, walltime, now)}"
                )
            raise bad_request(
                f"nodes: {nodes} nodes exceed the limit of queue {qname} "
                f"(resources_max.nodect = {queue.max_nodes}){self.takers(nodes, walltime, now)}"
            )
        asked = walltime
        if walltime is None:
            walltime = queue.default_walltime
        if queue.max_walltime is not None and walltime > queue.max_walltime:
            raise bad_request(
                f"walltime: {hms(walltime)} exceeds the limit of queue {qname} "
                f"(resources_max.walltime = {hms(queue.max_walltime)})"
                f"{self.takers(nodes, asked, now)}"
            )
        win = self.windows.get(qname)
        if win is not None and self.site.server.window_must_fit:
            self._check_fit(qname, win, nodes, walltime, now)
        return queue, walltime

    def _check_fit(self, qname: str, win: TimeWindow, nodes: int, walltime: int, now: int) -> None:
        """A job that must end by its window's close needs an opening long enough."""
        if next_fit(win, now, walltime) is not None:
            return
        longest = longest_opening(win, now) or 0
        days = HORIZON // DAY
        if longest == 0:
            raise bad_request(
                f"queue {qname} is closed ({win.text}) and does not open in the "
                f"next {days} days: use another queue"
            )
        raise bad_request(
            f"walltime: {hms(walltime)} does not fit in any opening of queue "
            f"{qname}'s window ({win.text}) in the next {days} days (the longest "
            f"is {hms(longest)}): ask for less walltime or use another queue"
            f"{self.takers(nodes, walltime, now)}"
        )

    def _enable(self, qname: str) -> str:
        """How a manager enables the queue: as it was made or last set."""
        qmgr = f'qmgr -c "set queue {qname} enabled = True"'
        if self.set_live(qname):
            return f"a manager enables it: {qmgr}"
        return (
            "a manager enables it: enabled = true in the site file, then SIGHUP to the "
            f"daemon, or {qmgr}"
        )

    def _per_node(self, queue: QueueConfig) -> int:
        """The scheduler's units on a node of the queue's machine (cores when shared)."""
        return self.site.machine[self.site.machine_index(queue.machine)].slots_per_node

    def takers(self, nodes: int, walltime: int | None, now: int) -> str:
        """A hint for a refused job: the queues whose limits (and window) would take it."""
        must_fit = self.site.server.window_must_fit
        names = []
        for q in self.site.queues():
            if not q.enabled or (
                q.max_nodes is not None and nodes > q.max_nodes * self._per_node(q)
            ):
                continue
            if self.site.grid_table is not None:
                if self.grid_width(nodes) is not None:
                    continue
            elif nodes > self.site.machine[self.site.machine_index(q.machine)].slots:
                continue
            if walltime is not None:
                if q.max_walltime is not None and walltime > q.max_walltime:
                    continue
                win = self.windows.get(q.name)
                if must_fit and win is not None and next_fit(win, now, walltime) is None:
                    continue
            names.append(q.name)
        return f"; queues that take it: {', '.join(names)}" if names else ""
