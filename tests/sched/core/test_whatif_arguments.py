"""What the what-if simulations take: arrays as they are, other sequences converted, bad
shapes and kinds refused by name, and a machine view turned into their arguments."""

from __future__ import annotations

import numpy as np
import pytest

from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.sched.core.whatif import (
    Inputs,
    _ints,
    conservative_starts,
    easy_starts,
    inputs_from,
    reservations_of,
)
from machine_view import HandView


def test_a_contiguous_int64_array_is_taken_as_it_is() -> None:
    arr = np.array([3, 1, 2], dtype=np.int64)
    assert _ints(arr, "widths") is arr


@pytest.mark.parametrize(
    "values",
    [
        np.array([3, 1, 2], dtype=np.int32),
        np.array([3, 1, 2], dtype=np.uint16),
        np.array([3, 0, 1, 0, 2, 0], dtype=np.int64)[::2],  # strided
        [3, 1, 2],
        (3, 1, 2),
    ],
)
def test_other_integers_are_converted(values: object) -> None:
    got = _ints(values, "widths")  # type: ignore[arg-type]
    assert got is not values
    assert got.dtype == np.int64 and got.flags.c_contiguous and got.tolist() == [3, 1, 2]


def test_an_empty_list_is_an_empty_array() -> None:
    got = _ints([], "widths")
    assert got.dtype == np.int64 and got.shape == (0,)


def test_other_kinds_and_shapes_are_refused_by_name() -> None:
    with pytest.raises(TypeError, match=r"^estimates must hold integers, got float64$"):
        _ints([1.0, 2.0], "estimates")  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"^widths must hold integers, got bool$"):
        _ints(np.array([True]), "widths")
    with pytest.raises(ValueError, match=r"^submits must be one-dimensional, got shape \(1, 2\)$"):
        _ints(np.array([[1, 2]], dtype=np.int64), "submits")


@pytest.mark.parametrize("simulate", [easy_starts, conservative_starts])
def test_each_argument_is_checked_by_name(simulate) -> None:  # type: ignore[no-untyped-def]
    ok = ([1], [1], [0])
    for pos, name in enumerate(["running_ends", "running_widths"]):
        running: list[object] = [[10], [1]]
        running[pos] = [1.5]
        with pytest.raises(TypeError, match=f"^{name} must hold integers"):
            simulate(0, 4, *running, *ok)
    for pos, name in enumerate(["widths", "estimates", "submits"]):
        queue: list[object] = [[1], [1], [0]]
        queue[pos] = [0.5]
        with pytest.raises(TypeError, match=f"^{name} must hold integers"):
            simulate(0, 4, [10], [1], *queue)
    with pytest.raises(ValueError, match=r"^2 running ends but 1 running widths$"):
        simulate(0, 4, [10, 20], [1], *ok)
    with pytest.raises(ValueError, match=r"^1 running ends but 2 running widths$"):
        simulate(0, 4, [10], [1, 1], *ok)
    with pytest.raises(ValueError, match=r"^1 widths, 2 estimates and 1 submits$"):
        simulate(0, 4, [], [], [1], [1, 1], [0])
    with pytest.raises(ValueError, match=r"^1 widths, 1 estimates and 2 submits$"):
        simulate(0, 4, [], [], [1], [1], [0, 0])
    with pytest.raises(ValueError, match=r"^2 widths, 1 estimates and 1 submits$"):
        simulate(0, 4, [], [], [1, 1], [1], [0])


# 4 nodes, 3 busy until 10. Queue: A 2 nodes 5 s, B 1 node 20 s, C 4 nodes 1 s, D 9 nodes.
MACHINE = (0, 4, [10], [3])
QUEUE = ([2, 1, 4, 9], [5, 20, 1, 1], [0, 0, 0, 0])


def test_easy_backfills_behind_the_head_only() -> None:
    # A reserves 10; B would delay it (1 node until 20): only the free node now, which
    # A's reservation leaves over (4 - 2 = 2 at 10): B starts now. C after A and B: 20.
    assert easy_starts(*MACHINE, *QUEUE).tolist() == [10, 0, 20, NEVER]
    # Times given as numpy integers are taken too.
    now, nodes = np.int64(0), np.int32(4)
    assert easy_starts(now, nodes, *MACHINE[2:], *QUEUE).tolist() == [10, 0, 20, NEVER]  # type: ignore[arg-type]


def test_conservative_places_each_at_its_earliest() -> None:
    assert conservative_starts(*MACHINE, *QUEUE).tolist() == [10, 0, 20, NEVER]
    # From 7, not before.
    later = (7, 4, [10], [3])
    assert conservative_starts(*later, [1], [2], [0]).tolist() == [7]


@pytest.mark.parametrize("none", [None, [], np.empty((0, 3), dtype=np.int64)])
def test_no_reservations(none: object) -> None:
    got = conservative_starts(*MACHINE, *QUEUE, reservations=none)  # type: ignore[arg-type]
    assert got.tolist() == [10, 0, 20, NEVER]


@pytest.mark.parametrize(
    "rows", [[(0, 30, 1)], np.array([[0, 30, 1]], dtype=np.int32), ((0, 30, 1),)]
)
def test_one_reservation(rows: object) -> None:
    # 1 node reserved until 30: none free until 10, then 3. A takes 2 of them for 5 s and
    # B the third for 20 s; C needs all 4, at 30.
    got = conservative_starts(*MACHINE, *QUEUE, reservations=rows)  # type: ignore[arg-type]
    assert got.tolist() == [10, 10, 30, NEVER]


def test_reservations_of_the_wrong_shape_are_refused() -> None:
    with pytest.raises(
        ValueError, match=r"^reservations must be \(start, end, width\) rows, got \(3,\)$"
    ):
        conservative_starts(*MACHINE, *QUEUE, reservations=[1, 2, 3])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"rows, got \(1, 4\)$"):
        conservative_starts(*MACHINE, *QUEUE, reservations=[(1, 2, 3, 4)])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"rows, got \(1, 2\)$"):
        conservative_starts(*MACHINE, *QUEUE, reservations=[(1, 2)])  # type: ignore[list-item]


def test_inputs_from_a_view() -> None:
    v = HandView(5, 8, [10, 20], [3, 2], [(30, 40, 1)])
    jobs = [Job(1, 2, 4, 0, 9), Job(2, 3, 1, 50, 1)]
    got = inputs_from(v, jobs)
    assert isinstance(got, Inputs)
    assert (got.now, got.capacity) == (5, 8)
    arrays = [got.running_ends, got.running_widths, got.widths, got.estimates, got.submits]
    assert [a.dtype for a in arrays] == [np.dtype(np.int64)] * 5
    assert [a.tolist() for a in arrays] == [[10, 20], [3, 2], [4, 1], [0, 50], [2, 3]]
    assert easy_starts(*got).tolist() == [10, 5]
    empty = inputs_from(HandView(0, 2), [])
    assert [a.tolist() for a in empty[2:]] == [[], [], [], [], []]
    assert [a.dtype for a in empty[2:]] == [np.dtype(np.int64)] * 5


def test_reservations_of_a_view_as_rows() -> None:
    none = reservations_of(HandView(0, 4))
    assert none.shape == (0, 3) and none.dtype == np.int64
    one = reservations_of(HandView(0, 4, pending=[(5, 15, 2)]))
    assert one.dtype == np.int64 and one.tolist() == [[5, 15, 2]]
    two = reservations_of(HandView(0, 4, pending=[(5, 15, 2), (20, 30, 1)]))
    assert two.tolist() == [[5, 15, 2], [20, 30, 1]]
