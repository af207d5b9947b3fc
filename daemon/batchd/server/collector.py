"""The garbage collector of a daemon that holds deep queues.

Most of what the daemon keeps lives as long as its job. Python's collector starts a
full collection whenever the objects that survived the younger generations grew by a
quarter of those it found in the last one, and a full collection walks every object
the daemon holds: with 50,000 jobs queued that is a pause of about a second in which
no request is answered. So the daemon freezes (``gc.freeze``) what it holds after
start-up and then after each full collection: the next ones walk only what came
since. Frozen objects are still freed as soon as nothing refers to them; only
reference cycles among them would wait, so once the frozen objects have doubled
since the last time, everything is thawed and collected once (a full pause, at each
doubling of what the daemon holds).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# Below this many frozen objects a thawed collection is short (the imports alone
# freeze about this many): no thaw is due before the count passes twice this.
FLOOR = 200_000


@contextmanager
def collector_paused() -> Iterator[None]:
    """No collection inside: for a burst of objects that are dropped before it ends.

    Each object the collector tracks counts towards the next collection when it is made
    and is taken off the count when it is freed. Made and freed inside, the burst
    leaves the count where it was: no collection walks it, and it pushes nothing into
    the older generations (a plan of 100,000 jobs is 100,000 tuples).
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def full_collections() -> int:
    return int(gc.get_stats()[2]["collections"])


class Collector:
    """Freezes what survived each full collection; thaws and collects at each doubling."""

    def __init__(self) -> None:
        self.seen = full_collections()
        self.base = FLOOR  # objects frozen after the last thaw (or start-up)
        self.frozen = FLOOR  # objects frozen since, counted as they are frozen
        self.thaws = 0

    def start(self) -> None:
        """After start-up: the modules, configuration and restored state are kept."""
        gc.collect()
        gc.freeze()
        self.seen = full_collections()
        self.base = self.frozen = max(gc.get_freeze_count(), FLOOR)

    def tick(self) -> None:
        """After a full collection since the last tick: freeze its survivors (or thaw and
        collect everything, once the frozen objects have doubled)."""
        full = full_collections()
        if full == self.seen:
            return
        # What the freeze adds: the survivors of the full collection, and few younger ones.
        # (gc.get_freeze_count walks every frozen object: only once a thaw is due.)
        self.frozen += len(gc.get_objects(generation=2))
        if self.frozen > 2 * self.base:
            gc.unfreeze()
            gc.collect()
            self.thaws += 1
            gc.freeze()
            self.base = self.frozen = max(gc.get_freeze_count(), FLOOR)
        else:
            gc.freeze()
        self.seen = full_collections()
