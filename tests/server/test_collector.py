"""The daemon's collector policy: survivors of a full collection are frozen, and at
each doubling of the frozen objects everything is thawed and collected once."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from batchd.server import collector
from batchd.server.collector import Collector


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    yield
    gc.unfreeze()


class Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


def test_a_full_collection_freezes_what_survived_it() -> None:
    c = Collector()
    c.start()
    frozen = gc.get_freeze_count()
    kept = [Node() for _ in range(1000)]
    c.tick()  # no full collection since: nothing more is frozen
    assert gc.get_freeze_count() == frozen
    gc.collect()
    c.tick()
    assert gc.get_freeze_count() >= frozen + 1000
    assert gc.is_tracked(kept[0]) and c.thaws == 0


def test_cycles_frozen_are_collected_once_the_frozen_objects_doubled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(collector, "FLOOR", 0)
    c = Collector()
    c.start()
    node = Node()
    gone = weakref.ref(node)
    gc.collect()
    c.tick()  # frozen with the rest
    del node
    gc.collect()
    assert gone() is not None  # a frozen cycle waits
    c.frozen = 2 * c.base + 1  # as if the frozen objects had doubled
    gc.collect()
    c.tick()
    assert c.thaws == 1 and gone() is None
    assert gc.get_freeze_count() > 0 and c.base == gc.get_freeze_count()
