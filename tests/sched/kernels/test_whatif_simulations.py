"""The what-if simulations (``sched.kernels.whatif.easy`` and ``conservative``) on small
random workloads against EASY's rules written out naively, and on worked cases: many
short jobs backfilled around a wide head (the queue's compaction of started slots), a
running job without an end, jobs submitted before ``now``, the backfill part's tests on
the candidates, and the running set loaded by end when only its first pair is unsorted."""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from batchd.model.times import NEVER
from batchd.sched.kernels import whatif
from naive_whatif import naive_easy


def ints(values: Sequence[int]) -> np.ndarray:
    return np.array(list(values), dtype=np.int64)


Case = tuple[int, int, list[int], list[int], list[int], list[int], list[int]]


def random_case(rng: random.Random) -> Case:
    capacity = rng.randint(4, 12)
    now = 100
    r = rng.randint(0, 4)
    ends = sorted(rng.randint(90, 140) for _ in range(r))
    rwidths = [rng.randint(1, capacity // 4) for _ in range(r)]  # 4 fit in the machine
    n = rng.randint(1, 30)
    widths: list[int] = []
    for _ in range(n):
        # Mostly narrow jobs behind the odd wide one: much backfilling.
        widths.append(rng.randint(capacity - 2, capacity + 1) if rng.random() < 0.2 else 1)
    estimates = [rng.choice([0, 1, 2, 3, 5, 8, 13, 30, 60]) for _ in range(n)]
    submits = [rng.choice([now - 5, now, now, now + rng.randint(1, 60)]) for _ in range(n)]
    return now, capacity, ends, rwidths, widths, estimates, submits


def test_easy_matches_the_naive_rules_on_random_workloads() -> None:
    rng = random.Random(20261128)
    for _ in range(150):
        now, capacity, ends, rwidths, widths, estimates, submits = random_case(rng)
        got = whatif.easy(
            now, capacity, ints(ends), ints(rwidths), ints(widths), ints(estimates), ints(submits)
        )
        want = naive_easy(now, capacity, ends, rwidths, widths, estimates, submits)
        assert got.tolist() == want, (now, capacity, ends, rwidths, widths, estimates, submits)


def test_easy_compacts_a_queue_of_mostly_backfilled_slots() -> None:
    # 4 nodes, 1 busy until 50. The head (4 wide) waits for 50; behind it ten 1-wide jobs
    # of 10 s: three start at 0 (ending by the shadow), then three more at 10, 20, 30
    # and 40, so the queue soon holds more started slots than waiting jobs.
    widths = [4] + [1] * 10 + [2]
    estimates = [10] + [10] * 10 + [100]
    submits = [0] * 12
    got = whatif.easy(0, 4, ints([50]), ints([1]), ints(widths), ints(estimates), ints(submits))
    want = naive_easy(0, 4, [50], [1], widths, estimates, submits)
    assert got.tolist() == want
    assert want == [50, 0, 0, 0, 10, 10, 10, 20, 20, 20, 30, 60]


def test_easy_leaves_jobs_waiting_for_a_running_job_without_an_end() -> None:
    got = whatif.easy(
        0, 4, ints([whatif.LATER]), ints([3]), ints([2, 1]), ints([5, 5]), ints([0, 0])
    )
    assert got.tolist() == [NEVER, 0]


def test_conservative_starts_jobs_submitted_earlier_at_now() -> None:
    got = whatif.conservative(
        100,
        4,
        ints([]),
        ints([]),
        ints([2, 2, 1]),
        ints([10, 10, 5]),
        ints([40, 100, 130]),
        np.zeros((0, 3), dtype=np.int64),
    )
    assert got.tolist() == [100, 100, 130]


def test_load_running_sorts_when_only_the_first_pair_is_out_of_order() -> None:
    for ends in ([9, 1, 20], [1, 5, 3]):
        re = np.zeros(4, dtype=np.int64)
        rw = np.zeros(4, dtype=np.int64)
        hi, free = whatif.load_running(0, 10, ints(ends), ints([1, 2, 3]), re, rw)
        assert hi == 3 and free == 4
        assert re[:hi].tolist() == sorted(ends)
        assert rw[:hi].tolist() == [w for _, w in sorted(zip(ends, [1, 2, 3], strict=True))]


def test_load_running_keeps_equal_ends_in_order_in_a_long_list() -> None:
    rng = random.Random(7)
    ends = [rng.randint(11, 13) for _ in range(40)]  # unsorted, many equal ends
    widths = list(range(40))
    re = np.zeros(40, dtype=np.int64)
    rw = np.zeros(40, dtype=np.int64)
    hi, free = whatif.load_running(0, 10_000, ints(ends), ints(widths), re, rw)
    assert hi == 40 and free == 10_000 - sum(widths)
    by_end = sorted(zip(ends, widths, strict=True), key=lambda pair: pair[0])  # stable
    assert rw[:hi].tolist() == [w for _, w in by_end]


def test_backfill_tests_each_candidate_on_its_own() -> None:
    # t = 5, 3 free, the head's shadow at 10 with 2 extra nodes; five candidates.
    widths = ints([9, 3, 4, 5, 2, 1])
    dur = ints([1, 10, 2, 2, 20, 5])
    out = ints([NEVER] * 6)
    q = ints([0, 1, 2, 3, 4, 5])
    cand = ints([1, 2, 3, 4, 5, 0])
    re = np.zeros(16, dtype=np.int64)
    rw = np.zeros(16, dtype=np.int64)
    free, extra, u, nc, cmin, lo, hi, started = whatif.backfill(
        5, 3, 10, 2, widths, dur, out, q, 6, 6, cand, 5, re, rw, 0, 0
    )
    # Job 1 (3 wide, ends 15) is past the shadow and wider than the extra: dropped, and
    # the walk goes on. Jobs 2 and 3 end by the shadow but do not fit: kept. Job 4 (2
    # wide, ends 25) fits in the 2 extra nodes exactly: starts, using them. Job 5 ends
    # at the shadow itself: starts, the extra untouched.
    assert out.tolist() == [NEVER, NEVER, NEVER, NEVER, 5, 5]
    assert (free, extra, u, nc, cmin, started) == (0, 0, 6, 2, 4, 2)
    assert cand[:nc].tolist() == [2, 3]
    assert list(zip(re[lo:hi].tolist(), rw[lo:hi].tolist(), strict=True)) == [(10, 1), (25, 2)]


def test_conservative_counts_free_nodes_exactly_on_a_huge_machine() -> None:
    # 2**53 + 1 nodes, one busy until 10: the job wanting them all waits for 10, and the
    # 1-wide job fits beside the busy one now. As floats, the free counts would round.
    nodes = 2**53 + 1
    got = whatif.conservative(
        0,
        nodes,
        ints([10]),
        ints([1]),
        ints([nodes, 1]),
        ints([5, 5]),
        ints([0, 0]),
        np.zeros((0, 3), dtype=np.int64),
    )
    assert got.tolist() == [10, 0]


def test_easy_forgets_candidates_the_head_started_with() -> None:
    # 9 nodes, 8 busy until 10. At 0 the head A (4 wide) waits for 10 with 5 extra
    # nodes; B (2 wide, ends by 10) is a candidate that does not fit yet; D (1 wide,
    # long) starts in the extra nodes. At 10 A and B start in order with 2 nodes left,
    # and the queue is empty: B must not be started a second time. C arrives at 20.
    widths = [4, 2, 1, 1]
    estimates = [20, 5, 100, 5]
    submits = [0, 0, 0, 20]
    got = whatif.easy(0, 9, ints([10]), ints([8]), ints(widths), ints(estimates), ints(submits))
    assert naive_easy(0, 9, [10], [8], widths, estimates, submits) == [10, 10, 0, 20]
    assert got.tolist() == [10, 10, 0, 20]
