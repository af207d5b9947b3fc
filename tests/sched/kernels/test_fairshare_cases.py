"""The fair-share pass (``sched.kernels.fairshare.fairshare_pass``) on worked cases the
random comparison with the reference (test_fairshare_kernels.py) does not draw: an
estimate of 0 s, and a fixed-runtime job whose row still names a parallelism."""

from __future__ import annotations

import numpy as np

from batchd.model.times import NEVER
from batchd.sched.kernels.fairshare import (
    ESTIMATE,
    FLAT,
    HIGH,
    LOW,
    SIGMA,
    SQRT_WEIGHT,
    WIDTH,
    A,
    efficiency_transfer,
    fairshare_pass,
)

Row = tuple[int, int, int, int, bool, float]  # low, high, width, estimate, flat, A


def run(
    capacity: int,
    rows: list[Row],
    depth: int,
    pending: tuple[tuple[int, int, int], ...] = (),
    *,
    nodes: int = 0,
    running: tuple[tuple[int, int], ...] = (),
) -> tuple[list[int], list[int], int, int]:
    count = len(rows)
    ints = np.zeros((count, 6), dtype=np.int64)
    floats = np.zeros((count, 3), dtype=np.float64)
    for r, (low, high, width, estimate, flat, a) in enumerate(rows):
        ints[r, [LOW, HIGH, WIDTH, ESTIMATE, FLAT]] = (low, high, width, estimate, int(flat))
        floats[r, [A, SIGMA, SQRT_WEIGHT]] = (a, 0.0, 1.0)
    t = np.zeros(2 * count + 8, dtype=np.int64)
    f = np.zeros(2 * count + 8, dtype=np.int64)
    limits, widths, starts, started = (np.zeros(count, dtype=np.int64) for _ in range(4))
    ends = np.array([e for e, _ in running], dtype=np.int64)
    busy = np.array([w for _, w in running], dtype=np.int64)
    windows = np.array(list(pending), dtype=np.int64).reshape(len(pending), 3)
    n_started, first = fairshare_pass(
        t, f, capacity, 0, ends, busy, windows, depth, nodes or capacity,
        float(count), 0.0, np.arange(count, dtype=np.int64), ints, floats, limits, False,
        widths, starts, started,
    )  # fmt: skip
    return widths.tolist(), starts.tolist(), int(n_started), int(first)


def test_estimates_of_zero_hold_their_node_one_second() -> None:
    # One node: the first job starts, the second is reserved a second later.
    rigid_zero: Row = (1, 1, 1, 0, False, 1.0)
    assert run(1, [rigid_zero, rigid_zero], depth=2) == ([1, 1], [0, 1], 1, 1)


def test_a_fixed_job_takes_its_narrowest_width() -> None:
    # 4 idle nodes: a fixed job runs 100 s on any width, so it ends as soon on 1 node
    # and takes the narrowest. A linear job (A = 100) takes all four.
    fixed: Row = (1, 4, 1, 100, True, 100.0)
    linear: Row = (1, 4, 1, 100, False, 100.0)
    assert run(4, [fixed], depth=1) == ([1], [0], 1, -1)
    assert run(4, [linear], depth=1) == ([4], [0], 1, -1)
    # Behind a reservation (depth 0: only starts now), the same.
    assert run(4, [fixed], depth=0) == ([1], [0], 1, -1)
    assert run(4, [linear], depth=0) == ([4], [0], 1, -1)


def test_a_job_wider_than_the_machine_waits_without_a_width() -> None:
    wide: Row = (5, 6, 5, 10, False, 100.0)
    small: Row = (1, 1, 1, 10, False, 100.0)
    assert run(4, [wide, small], depth=1) == ([0, 1], [NEVER, 0], 1, -1)


def test_a_start_now_may_end_where_a_reservation_begins() -> None:
    # All 4 nodes are reserved from 10: a 2-node job of 10 s starts now and ends just
    # in time, whether it is planned (depth 1) or only started when it fits (depth 0).
    job: Row = (2, 2, 2, 10, False, 1.0)
    assert run(4, [job], depth=0, pending=((10, 20, 4),)) == ([2], [0], 1, -1)
    assert run(4, [job], depth=1, pending=((10, 20, 4),)) == ([2], [0], 1, -1)
    longer: Row = (2, 2, 2, 11, False, 1.0)
    assert run(4, [longer], depth=0, pending=((10, 20, 4),)) == ([0], [NEVER], 0, -1)


def test_of_widths_that_end_together_the_narrowest() -> None:
    # A = 2: 100 s on 1 node, 50 s on 2 or more. On 4 idle nodes, 2 of them.
    job: Row = (1, 4, 1, 100, False, 2.0)
    assert run(4, [job], depth=0) == ([2], [0], 1, -1)
    assert run(4, [job], depth=1) == ([2], [0], 1, -1)


def test_a_start_now_gives_way_only_to_a_wider_width_that_ends_sooner() -> None:
    # 2 of the machine's 4 nodes in service, 1 busy until 20, 1 reserved over [30, 40).
    # A linear job of 80 s on 1 node may take all 4 (its fair share): on 1 node now it
    # ends at 80; on 2 nodes (40 s) it cannot start before 40 and ends at 80 too, no
    # sooner; 3 or 4 nodes never fit. So it starts now on 1 node.
    job: Row = (1, 4, 1, 80, False, 100.0)
    got = run(2, [job], depth=0, pending=((30, 40, 1),), nodes=4, running=((20, 1),))
    assert got == ([1], [0], 1, -1)
    # 2 s less on 1 node (78 s) and the 2-node plan (39 s from 40) would end later still.
    quicker: Row = (1, 4, 1, 78, False, 100.0)
    got = run(2, [quicker], depth=0, pending=((30, 40, 1),), nodes=4, running=((20, 1),))
    assert got == ([1], [0], 1, -1)
    # 82 s on 1 node: the 2-node plan (41 s from 40) ends at 81, sooner: it waits.
    slower: Row = (1, 4, 1, 82, False, 100.0)
    got = run(2, [slower], depth=0, pending=((30, 40, 1),), nodes=4, running=((20, 1),))
    assert got == ([0], [NEVER], 0, -1)


def test_depth_jobs_are_reserved_and_the_rest_passed_over() -> None:
    # One node, busy until 10: three jobs of 10 s. Depth 2: the first two are reserved
    # (the first of them at position 0), the third is passed over.
    one: Row = (1, 1, 1, 10, False, 1.0)
    assert run(1, [one, one, one], depth=2, running=((10, 1),)) == (
        [1, 1, 0],
        [10, 20, NEVER],
        0,
        0,
    )


def test_with_no_node_free_a_pass_past_its_depth_starts_nothing() -> None:
    one: Row = (1, 1, 1, 10, False, 1.0)
    assert run(1, [one], depth=0, running=((10, 1),)) == ([0], [NEVER], 0, -1)


def test_every_job_that_starts_now_is_counted() -> None:
    one: Row = (1, 1, 1, 10, False, 1.0)
    assert run(3, [one, one, one], depth=1) == ([1, 1, 1], [0, 0, 0], 3, -1)


def test_the_transfer_takes_from_a_fixed_job_whatever_its_parallelism() -> None:
    # Limits 2 and 2 of 4 nodes, ef = 1: the fixed job (its row names A = 8) loses
    # nothing with its second node, the linear one gains a whole node with a third: one
    # node moves, down to the fixed job's floor of 1.
    ints = np.zeros((2, 6), dtype=np.int64)
    floats = np.zeros((2, 3), dtype=np.float64)
    ints[0, [LOW, HIGH, WIDTH, ESTIMATE, FLAT]] = (1, 4, 2, 100, 1)
    ints[1, [LOW, HIGH, WIDTH, ESTIMATE, FLAT]] = (1, 4, 2, 100, 0)
    floats[0, [A, SIGMA, SQRT_WEIGHT]] = (8.0, 0.0, 1.0)
    floats[1, [A, SIGMA, SQRT_WEIGHT]] = (100.0, 0.0, 1.0)
    limits = np.array([2, 2], dtype=np.int64)
    movable = np.array([True, True])
    rows = np.arange(2, dtype=np.int64)
    assert efficiency_transfer(limits, movable, rows, ints, floats, 1.0, 4) == 1
    assert limits.tolist() == [1, 3]
