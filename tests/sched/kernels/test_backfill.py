"""EASY's shadow rule (``sched.kernels.backfill``), run as Python and as compiled by the
what-if kernels: one function, so both give the same answer on every input."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from batchd.sched.kernels import whatif
from batchd.sched.kernels.backfill import shadow, with_ends


def test_jobs_ending_at_the_same_second_all_count() -> None:
    # 1 free, 3 needed: at 5 two jobs of 1 end, which is enough; the one at 7 is not needed.
    assert shadow(1, 3, [5, 5, 7], [1, 1, 3], 0, 3, 0) == (5, 0)
    assert shadow(1, 2, [5, 5, 7], [1, 1, 3], 0, 3, 0) == (5, 1)  # both count: 1 extra


def test_enough_free_now_is_now() -> None:
    assert shadow(4, 3, [5], [2], 0, 1, 9) == (9, 1)


def test_only_the_live_slice_counts() -> None:
    assert shadow(0, 2, [1, 5, 7, 9], [9, 1, 1, 9], 1, 3, 0) == (7, 0)


def test_jobs_started_in_the_pass_merge_by_end() -> None:
    ends, widths = [4, 8], [1, 2]
    assert with_ends(ends, widths, [(6, 3), (8, 1), (2, 5)]) == ([2, 4, 6, 8, 8], [5, 1, 3, 2, 1])
    assert (ends, widths) == ([4, 8], [1, 2])  # the view's lists are left alone


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 30), st.integers(1, 6)), max_size=12),
    st.integers(0, 6),
    st.integers(1, 20),
)
def test_the_compiled_rule_is_the_python_one(
    running: list[tuple[int, int]], free: int, need: int
) -> None:
    running.sort()
    ends = [e for e, _ in running]
    widths = [w for _, w in running]
    need = min(need, free + sum(widths))  # the caller's promise: the nodes come free
    compiled = whatif.shadow(
        free,
        need,
        np.array(ends, dtype=np.int64),
        np.array(widths, dtype=np.int64),
        0,
        len(ends),
        0,
    )
    assert tuple(int(x) for x in compiled) == shadow(free, need, ends, widths, 0, len(ends), 0)
