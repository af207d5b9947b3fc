"""Shared nodes as cores: what a chunk takes of a node, and pieces placed on nodes."""

from __future__ import annotations

import random

import pytest

from batchd.model.chunks import Chunk, ChunkError, NodeShape, shared_layout
from batchd.model.cores import footprint, nodes_used, piece_nodes, piece_starts, place_pieces
from batchd.model.machine import CorePool, NodePool

GB = 1 << 30
NODE = NodeShape(ncpus=4, mem=8 * GB, amounts={"ngpus": 2})


@pytest.mark.parametrize(
    "need,cores",
    [
        ({"ncpus": 1}, 1),
        ({"ncpus": 3}, 3),
        ({"ncpus": 1, "mem": 2 * GB}, 1),  # a quarter of the memory: one core's share
        ({"ncpus": 1, "mem": 2 * GB + 1}, 2),  # a byte more: the next core
        ({"ncpus": 1, "mem": 8 * GB}, 4),  # all the memory: the whole node
        ({"ncpus": 2, "ngpus": 1}, 2),  # half the GPUs: half the cores
        ({"ncpus": 1, "ngpus": 2}, 4),
        ({"ncpus": 0}, 1),  # at least one core
    ],
)
def test_a_chunk_takes_the_largest_share_it_asks_for(need: dict[str, int], cores: int) -> None:
    assert footprint(need, {"ncpus": 4, "mem": 8 * GB, "ngpus": 2}, 4) == cores


def test_pieces_go_best_fit_largest_first() -> None:
    # Nodes of 4 units: node 0 has 1 free (3), node 1 has 3 free (5-7), node 2 all (8-11).
    free = [3, 5, 6, 7, 8, 9, 10, 11]
    # The piece of 3 goes to node 1 (3 free: the fewest that hold it), then 1 to node 0.
    assert place_pieces(free, 4, (1, 3), spread=False) == [3, 5, 6, 7]
    # Two pieces of 2: node 1 first (3 free), then it has 1, so node 2.
    assert place_pieces(free, 4, (2, 2), spread=False) == [5, 6, 8, 9]
    # Spread: never two pieces on one node.
    assert place_pieces(free, 4, (1, 1, 1), spread=True) == [3, 5, 8]
    assert place_pieces(free, 4, (1, 1, 1, 1), spread=True) is None


def test_single_units_fill_the_fullest_nodes_first() -> None:
    free = [0, 1, 2, 3, 5, 6, 7, 11]
    assert place_pieces(free, 4, (1, 1, 1, 1, 1), spread=False) == [11, 5, 6, 7, 0]
    assert place_pieces(free, 4, (1,) * 9, spread=False) is None


def test_enough_units_scattered_over_nodes_do_not_hold_a_piece() -> None:
    assert place_pieces([1, 2, 7, 8], 4, (2,), spread=False) == [1, 2]
    assert place_pieces([1, 6, 11], 4, (2,), spread=False) is None
    assert piece_nodes([9, 10, 1, 2, 3], (2, 3), 4) == [2, 0]


def test_the_pool_hands_out_pieces_and_takes_them_back() -> None:
    pool = CorePool(8, per_node=4)
    a = pool.allocate_pieces((3,), True)
    assert a == [0, 1, 2] and pool.free == 5
    b = pool.allocate_pieces((2, 1), False)
    assert b == [4, 5, 3]  # the 2 on the empty node, the 1 in node 0's last core
    assert pool.allocate_pieces((1, 1), True) is None and pool.free == 2  # both on node 1
    pool.release(a)
    assert pool.allocate_pieces((3,), True) == [0, 1, 2]
    with pytest.raises(ValueError, match="do not make nodes of 4"):
        CorePool(6, per_node=4)


def naive_place(
    free: list[int], per: int, pieces: tuple[int, ...], spread: bool
) -> list[int] | None:
    """Best fit as written down, node by node for every piece: the reference."""
    by_node: dict[int, list[int]] = {}
    for unit in free:
        by_node.setdefault(unit // per, []).append(unit)
    placed: list[list[int]] = [[] for _ in pieces]
    used: set[int] = set()
    for i in sorted(range(len(pieces)), key=lambda i: -pieces[i]):
        best, best_left = -1, per + 1
        for node, units in by_node.items():
            if pieces[i] <= len(units) < best_left and not (spread and node in used):
                best, best_left = node, len(units)
        if best < 0:
            return None
        placed[i] = by_node[best][: pieces[i]]
        del by_node[best][: pieces[i]]
        used.add(best)
    return [u for piece in placed for u in piece]


def test_a_pool_of_whole_nodes_takes_pieces_of_one_node() -> None:
    pool = NodePool(4)
    pool.allocate(1)
    assert pool.allocate_pieces((1, 1), True) == [1, 2]
    assert pool.allocate_pieces((2,), False) is None and pool.free == 1
    assert pool.allocate_pieces((1, 1), False) is None


def test_random_pieces_keep_each_piece_on_one_node_and_no_unit_twice() -> None:
    rng = random.Random(7)
    for _ in range(400):
        per = rng.randint(1, 6)
        nodes = rng.randint(1, 8)
        free = sorted(rng.sample(range(nodes * per), rng.randint(0, nodes * per)))
        pieces = tuple(rng.randint(1, per) for _ in range(rng.randint(1, 5)))
        spread = rng.random() < 0.5
        got = place_pieces(free, per, pieces, spread)
        assert got == naive_place(free, per, pieces, spread)
        if got is None:
            continue
        assert len(got) == sum(pieces) and len(set(got)) == len(got) and set(got) <= set(free)
        at = 0
        hosts = []
        for size in pieces:
            unit_nodes = {u // per for u in got[at : at + size]}
            assert len(unit_nodes) == 1
            hosts += unit_nodes
            at += size
        if spread:
            assert len(set(hosts)) == len(hosts)


def test_layouts_on_shared_nodes() -> None:
    two = (Chunk(count=2, ncpus=1, mem=3 * GB),)
    free = shared_layout(two, "free", None, NODE)
    assert (free.groups, free.cores, free.spread) == ([[0], [0]], (2, 2), False)
    scatter = shared_layout(two, "scatter", None, NODE)
    assert (scatter.cores, scatter.spread) == ((2, 2), True)
    pack = shared_layout(two, "pack", None, NODE)
    assert (pack.groups, pack.cores) == ([[0, 0]], (3,))  # 6gb of 8: 3 cores
    excl = shared_layout((Chunk(count=3, ncpus=2),), "free", "excl", NODE)
    assert (excl.groups, excl.cores, excl.spread) == ([[0, 0], [0]], (4, 4), True)
    with pytest.raises(ChunkError, match="asks for ncpus=5; a node has 4"):
        shared_layout((Chunk(ncpus=5),), "free", None, NODE)


def test_exclusive_layouts_keep_their_arrangement() -> None:
    three = (Chunk(count=3, ncpus=2),)
    exclhost = shared_layout(three, "free", "exclhost", NODE)
    assert (exclhost.groups, exclhost.cores, exclhost.spread) == ([[0, 0], [0]], (4, 4), True)
    scatter = shared_layout(three, "scatter", "excl", NODE)
    assert (scatter.groups, scatter.cores) == ([[0], [0], [0]], (4, 4, 4))


def test_a_packed_layout_is_one_piece_apart_from_others_or_refused() -> None:
    pack = shared_layout((Chunk(count=2, ncpus=1),), "pack", None, NODE)
    assert (pack.groups, pack.cores, pack.spread) == ([[0, 0]], (2,), True)
    with pytest.raises(ChunkError, match=r"^place=pack: the chunks ask for ncpus=6 in all"):
        shared_layout((Chunk(count=3, ncpus=2),), "pack", None, NODE)


@pytest.mark.parametrize(
    ("arrangement", "sharing"), [("free", "excl"), ("pack", None), ("free", None)]
)
def test_shared_layout_refusals_name_the_chunk_and_sizes_with_units(
    arrangement: str, sharing: str | None
) -> None:
    shape = NodeShape(ncpus=4, amounts={"scratch": GB})
    chunks = (Chunk(ncpus=1), Chunk(custom=(("scratch", 2 * GB),)))
    with pytest.raises(ChunkError) as refused:
        shared_layout(chunks, arrangement, sharing, shape, frozenset({"scratch"}))
    assert str(refused.value) == (
        "select: chunk 2 asks for scratch=2gb; a node has 1gb (resources_available.scratch)"
    )


def test_the_core_pool_places_as_the_reference_does() -> None:
    """CorePool keeps each node's free count; through random allocations, releases and
    nodes out of service it places every request exactly as the reference would over
    its free list, and its counts stay those of the free list."""
    rng = random.Random(11)
    for _ in range(60):
        per, nodes = rng.randint(2, 6), rng.randint(1, 10)
        pool = CorePool(per * nodes, per)
        held: list[list[int]] = []
        for _ in range(80):
            op = rng.random()
            if op < 0.5:
                pieces = tuple(rng.randint(1, per) for _ in range(rng.randint(1, 4)))
                if rng.random() < 0.3:
                    pieces = (1,) * rng.randint(1, per * 2)
                spread = rng.random() < 0.5
                expect = naive_place(pool.free_ids(), per, pieces, spread)
                got = pool.allocate_pieces(pieces, spread)
                assert got == expect
                if got is not None:
                    held.append(got)
            elif op < 0.6 and pool.free:
                held.append(pool.allocate(rng.randint(1, pool.free)))
            elif op < 0.85 and held:
                pool.release(held.pop(rng.randrange(len(held))))
            elif op < 0.93:
                pool.take_out(rng.randrange(pool.size))
            else:
                pool.put_back(rng.randrange(pool.size))
            counts = [0] * nodes
            for unit in pool.free_ids():
                counts[unit // per] += 1
            assert pool.node_free == counts


def test_a_footprint_is_the_largest_share_of_the_node_in_cores() -> None:
    node = {"ncpus": 4, "mem": 8 * GB, "ngpus": 1}
    assert footprint({"mem": 1}, node, 4) == 1  # no ncpus: one core
    assert footprint({"ncpus": 1, "ngpus": 0, "scratch": 0}, node, 4) == 1  # zero asks nothing
    assert footprint({"ncpus": 1, "mem": 2 * GB + 1}, node, 4) == 2  # rounded up
    assert footprint({"ngpus": 1}, node, 4) == 4  # the node's only GPU: the whole node
    assert footprint({"ngpus": 2}, node, 4) == 8  # twice what a node has: never fits
    assert footprint({"ncpus": 3, "scratch": 1}, node, 4) == 4  # a resource it lacks
    assert footprint({"scratch": 2}, node, 4) == 4
    assert footprint({"ncpus": 2}, {"mem": 8 * GB}, 4) == 2  # CPUs count as they are


def test_piece_starts_and_nodes_follow_the_pieces_in_order() -> None:
    units = [10, 11, 12, 13, 14, 15]
    assert piece_starts(units, [2, 1, 3]) == [10, 12, 13]
    assert piece_nodes(units, [2, 1, 3], 4) == [2, 3, 3]
    assert piece_starts([], [2]) == []


def test_nodes_used_counts_the_nodes_units_are_on() -> None:
    assert nodes_used([0, 1, 2, 3], 4) == 1
    assert nodes_used([3, 4], 4) == 2
    assert nodes_used([0, 8, 9], 4) == 2
    assert nodes_used([5, 6, 7], 1) == 3  # one unit a node: each unit is a node
    assert nodes_used([0, 1, 2], 2) == 2  # two units a node
    assert nodes_used([], 4) == 0
