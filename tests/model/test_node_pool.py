"""The node pool keeps its free nodes as ranges: it must hand out exactly the ids a
sorted free list would, and cost with the job's width, not the machine's size."""

from __future__ import annotations

import random
import time

import pytest

from batchd.model.machine import NodePool


class ListPool:
    """The reference: the free nodes as one sorted list, lowest ids handed out first."""

    def __init__(self, size: int) -> None:
        self.free = list(range(size))
        self.out: set[int] = set()
        self.out_busy: set[int] = set()

    def allocate(self, count: int) -> list[int]:
        nodes = self.free[:count]
        del self.free[:count]
        return nodes

    def release(self, nodes: list[int]) -> None:
        self.free = sorted(self.free + [n for n in nodes if n not in self.out_busy])
        self.out_busy.difference_update(nodes)

    def take_out(self, node: int) -> None:
        if node in self.out:
            return
        self.out.add(node)
        if node in self.free:
            self.free.remove(node)
        else:
            self.out_busy.add(node)

    def put_back(self, node: int) -> None:
        if node not in self.out:
            return
        self.out.discard(node)
        if node in self.out_busy:
            self.out_busy.discard(node)
        else:
            self.free = sorted([*self.free, node])


def test_the_pool_hands_out_the_ids_a_sorted_free_list_would() -> None:
    """Random allocations, releases in any order, restores and nodes out of service:
    every allocation gives the reference's ids, and the free nodes stay the same."""
    rng = random.Random(5)
    for _ in range(40):
        size = rng.randint(1, 60)
        pool, ref = NodePool(size), ListPool(size)
        held: list[list[int]] = []
        for _ in range(150):
            op = rng.random()
            if op < 0.4 and ref.free:
                count = rng.randint(1, len(ref.free))
                got = pool.allocate(count)
                assert got == ref.allocate(count)
                held.append(got)
            elif op < 0.75 and held:
                nodes = held.pop(rng.randrange(len(held)))
                if rng.random() < 0.3:
                    nodes = rng.sample(nodes, len(nodes))  # any order
                pool.release(nodes)
                ref.release(nodes)
            elif op < 0.8 and ref.free:
                nodes = rng.sample(ref.free, rng.randint(1, len(ref.free)))
                pool.take(nodes)  # a restored job's very nodes
                ref.free = [n for n in ref.free if n not in set(nodes)]
                held.append(nodes)
            elif op < 0.9:
                node = rng.randrange(size)
                pool.take_out(node)
                ref.take_out(node)
            else:
                node = rng.randrange(size)
                pool.put_back(node)
                ref.put_back(node)
            assert pool.free_ids() == ref.free
            assert pool.free == len(ref.free)
            assert pool.lowest_free(3) == ref.free[:3]
            assert all(
                pool.is_busy(n) == (n not in ref.free and n not in ref.out or n in ref.out_busy)
                for n in range(size)
            )
            ranges = pool.free_ranges()
            assert all(b < c for (_, b), (c, _) in zip(ranges, ranges[1:], strict=False))


def test_taking_nodes_that_are_not_free_changes_nothing() -> None:
    pool = NodePool(6)
    pool.allocate(2)
    with pytest.raises(ValueError, match=r"nodes \[1\] are not all free"):
        pool.take([1, 4])
    with pytest.raises(ValueError, match="are not all free"):
        pool.take([4, 4])
    with pytest.raises(ValueError, match=r"nodes \[9\] are not all free"):
        pool.take([9])
    assert pool.free_ids() == [2, 3, 4, 5]


def test_a_large_machine_costs_with_the_width_not_the_size() -> None:
    """On a machine of a million nodes, narrow jobs starting and ending touch a few
    ranges each: far below one pass over the machine's free nodes per job."""
    pool = NodePool(1_000_000)
    held = [pool.allocate(1000) for _ in range(100)]
    began = time.perf_counter()
    for _ in range(300):
        nodes = held.pop(0)
        pool.release(nodes)
        held.append(pool.allocate(4))
    spent = time.perf_counter() - began
    # A sorted free list, re-sorted on each end, took about 3 s here.
    assert spent < 0.5, f"{spent:.2f} s for 300 starts and ends"


def test_a_pool_held_by_count_names_no_node() -> None:
    pool = NodePool(10)
    pool.take_count(4)
    assert pool.free == 6
    with pytest.raises(ValueError, match="4 nodes are held by count, without ids"):
        pool.allocate(1)
    with pytest.raises(ValueError, match="held by count"):
        pool.take_out(7)
    with pytest.raises(ValueError, match="asked for 7 nodes, only 6 are free"):
        pool.take_count(7)
    with pytest.raises(ValueError, match="gave back 5 nodes, only 4 were taken"):
        pool.give_back_count(5)
    pool.give_back_count(4)
    assert pool.free == 10
    assert pool.allocate(2) == [0, 1]
