"""Node pools taking given nodes (a restart), node intervals, grids and job states."""

from __future__ import annotations

import random

import pytest

from batchd.model.job import Job
from batchd.model.machine import (
    CorePool,
    Grid,
    Machine,
    NodePool,
    _runs,
    node_intervals,
    node_runs,
    runs_intervals,
)
from batchd.model.states import JobState, StateError, change_state


@pytest.mark.parametrize(
    ("nodes", "text"),
    [
        ([], ""),
        ([5], "5"),
        ([3, 0, 1, 2, 8], "0-3 8"),
        ([1, 3, 5], "1 3 5"),
        ([0, 1, 4, 6, 7, 9], "0-1 4 6-7 9"),
        ([9, 4, 5, 6], "4-6 9"),
        ([2, 4, 5, 6], "2 4-6"),  # the last run a range too
    ],
)
def test_node_intervals(nodes: list[int], text: str) -> None:
    assert node_intervals(nodes) == text
    assert runs_intervals(node_runs(nodes)) == text


@pytest.mark.parametrize(
    ("nodes", "runs"),
    [
        ([], ()),
        ([5], (5, 1)),
        ([3, 0, 1, 2, 8], (0, 4, 8, 1)),
        ([1, 3, 5], (1, 1, 3, 1, 5, 1)),
        ([9, 4, 5, 6], (4, 3, 9, 1)),
        ([6, 4, 5], (4, 3)),  # one run, not in order
        (list(range(70_000, 70_256)), (70_000, 256)),
    ],
)
def test_node_runs(nodes: list[int], runs: tuple[int, ...]) -> None:
    assert node_runs(nodes) == runs
    assert runs_intervals(runs) == node_intervals(nodes)
    assert sorted(nodes) == [
        n for a, c in zip(runs[::2], runs[1::2], strict=True) for n in range(a, a + c)
    ]


def test_a_pool_takes_the_very_nodes_it_is_given_once() -> None:
    pool = NodePool(4)
    pool.take([3, 1])
    assert (pool.free, pool.free_ids()) == (2, [0, 2])
    for nodes, says in [
        ([1], "nodes [1] are not all free"),
        ([4, 0], "nodes [4] are not all free"),
        ([-1], "nodes [-1] are not all free"),
        ([0, 0], "nodes [0, 0] are not all free"),
    ]:
        with pytest.raises(ValueError) as refused:
            pool.take(nodes)
        assert str(refused.value) == says
    assert pool.free_ids() == [0, 2]  # a refusal takes nothing


def test_a_core_pool_counts_what_it_takes_per_node() -> None:
    pool = CorePool(8, 4)  # two nodes of four cores
    pool.take([0, 1, 5])
    assert pool.free == 5
    assert pool.allocate_pieces((3,), spread=False) == [4, 6, 7]  # the node with three free
    with pytest.raises(ValueError, match=r"nodes \[0\] are not all free"):
        pool.take([0])


def test_a_core_pool_needs_whole_nodes_of_at_least_one_unit() -> None:
    for size, per in [(8, 0), (8, -2), (8, 3)]:
        with pytest.raises(ValueError) as refused:
            CorePool(size, per)
        assert str(refused.value) == f"{size} units do not make nodes of {per}"
    assert CorePool(3, 1).node_free == [1, 1, 1]


def test_a_machine_of_whole_nodes_counts_nodes_and_a_shared_one_cores() -> None:
    assert type(Machine("whole", 4).pool) is NodePool  # no per-node counts to keep
    shared = Machine("shared", 8, slots_per_node=2).pool
    assert isinstance(shared, CorePool)
    assert (shared.per_node, shared.node_free) == (2, [2, 2, 2, 2])


@pytest.mark.parametrize(
    ("ids", "runs"),
    [
        ([], []),
        ([4], [(4, 5)]),
        ([0, 1, 2], [(0, 3)]),
        ([0, 1, 2, 5], [(0, 3), (5, 6)]),
        ([0, 1, 5, 6, 7], [(0, 2), (5, 8)]),
        ([1, 3, 4, 5, 6, 9, 10], [(1, 2), (3, 7), (9, 11)]),
    ],
)
def test_ids_make_the_fewest_runs(ids: list[int], runs: list[tuple[int, int]]) -> None:
    assert _runs(ids) == runs


def test_a_pool_names_what_it_refuses() -> None:
    with pytest.raises(ValueError) as empty:
        NodePool(0)
    assert str(empty.value) == "a node pool needs at least one node, got 0"
    pool = NodePool(1)
    assert (pool.size, pool.per_node, pool.free_ids()) == (1, 1, [0])
    with pytest.raises(ValueError) as missing:
        pool.is_busy(1)
    assert str(missing.value) == "node 1 does not exist (0..0)"
    with pytest.raises(ValueError) as over:
        pool.allocate(2)
    assert str(over.value) == "asked for 2 nodes, only 1 are free"


def test_taking_a_range_exactly_leaves_no_empty_range() -> None:
    pool = NodePool(6)
    pool.take_out(2)
    assert pool.free_ranges() == [(0, 2), (3, 6)]
    assert pool.allocate(5) == [0, 1, 3, 4, 5]
    assert (pool.free_ranges(), pool.free_ids()) == ([], [])
    assert pool.allocate(0) == []  # nothing asked of a full machine: nothing taken


def test_a_grid_names_what_it_refuses() -> None:
    with pytest.raises(ValueError) as empty:
        Grid([])
    assert str(empty.value) == "a grid needs at least one machine"
    with pytest.raises(ValueError) as twice:
        Grid([Machine("a", 1), Machine("a", 2)])
    assert str(twice.value) == "machine names must be unique, got ['a', 'a']"


def test_a_grid_finds_its_machines_by_name() -> None:
    grid = Grid([Machine("a", 4), Machine("b", 8)])
    assert (grid.index("a"), grid.index("b")) == (0, 1)
    with pytest.raises(KeyError) as missing:
        grid.index("c")
    assert missing.value.args == ("c",)


def test_a_pool_counts_nodes_taken_by_count_until_all_are_back() -> None:
    pool = NodePool(6)
    pool.take_count(2)
    pool.take_count(4)  # every free node, the last ones included
    assert pool.free == 0
    pool.give_back_count(6)  # both takings add up
    assert (pool.free, pool.allocate(6)) == (6, [0, 1, 2, 3, 4, 5])


def test_pieces_of_one_node_take_every_free_node_and_no_more() -> None:
    pool = NodePool(3)
    pool.allocate(1)
    assert pool.allocate_pieces((1, 1), spread=True) == [1, 2]
    assert pool.allocate_pieces((1,), spread=True) is None
    assert NodePool(3).allocate_pieces((2,), spread=False) is None  # a node is one unit


def test_a_node_out_of_service_is_not_in_service_until_put_back() -> None:
    pool = NodePool(3)
    pool.take_out(1)
    assert [pool.in_service(n) for n in range(3)] == [True, False, True]
    pool.put_back(1)
    assert pool.in_service(1)


def test_a_job_changes_state_only_as_a_job_can() -> None:
    job = Job(7, 0, 1, 10, 10)
    change_state(job, JobState.RUNNING)
    assert job.state is JobState.RUNNING
    with pytest.raises(StateError) as refused:
        change_state(job, JobState.HELD)
    assert str(refused.value) == "job 7: cannot go from RUNNING to HELD"
    assert job.state is JobState.RUNNING


@pytest.mark.parametrize("seed", range(6))
def test_node_runs_of_random_sets_both_sides_of_the_halving(seed: int) -> None:
    rng = random.Random(seed)
    for size in (2, 17, 255, 256, 257, 900):
        ids = rng.sample(range(3 * size), size)
        runs = node_runs(ids)
        starts, counts = runs[::2], runs[1::2]
        assert [n for a, c in zip(starts, counts, strict=True) for n in range(a, a + c)] == sorted(
            ids
        )
        assert all(a + c < b for a, c, b in zip(starts, counts, starts[1:], strict=False))


def test_release_answers_the_runs_it_took_back_when_all_came_back() -> None:
    pool = NodePool(16)
    one = pool.allocate(4)
    assert pool.release(one) == [(0, 4)]
    pool.take([0, 1, 2, 5, 6, 9])
    assert pool.release([9, 5, 0, 6, 2, 1]) == [(0, 3), (5, 7), (9, 10)]
    assert pool.free == 16 and pool.release([]) == []
    held = pool.allocate(3)
    pool.take_out(1)  # busy: it does not come back
    assert pool.release(held) is None
    assert pool.free == 15
    cores = CorePool(8, 4)
    assert cores.release(cores.allocate(6)) == [(0, 6)]


def test_release_answers_none_whenever_a_node_stays_out_and_runs_otherwise() -> None:
    pool = NodePool(8)
    held = pool.allocate(4)  # 0-3
    other = pool.allocate(2)  # 4-5
    pool.take_out(3)  # busy: 3 stays out when held comes back
    assert pool.release(held) is None  # 0-2 came back, one run, but not all of them
    pool.take_out(7)  # out of service elsewhere: all of other's nodes come back
    assert pool.release(other) == [(4, 6)]
    alone = pool.allocate(1)
    pool.take_out(alone[0])
    assert pool.release(alone) is None  # nothing came back
    assert pool.free == 5  # 1, 2, 4, 5, 6: 0, 3 and 7 are out of service


def test_a_job_tells_its_units_as_runs_from_its_ids_or_from_what_was_folded() -> None:
    job = Job(id=1, submit=0, width=5, estimate=10, runtime=10)
    job.units = [9, 2, 3, 4, 7]
    assert job.unit_runs() == (2, 3, 7, 1, 9, 1)
    job.units, job.result.ran_on = [], (2, 3, 7, 1, 9, 1)
    assert job.unit_runs() == (2, 3, 7, 1, 9, 1)
    assert Job(id=2, submit=0, width=1, estimate=1, runtime=1).unit_runs() == ()
