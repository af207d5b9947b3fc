"""The compiled loops of the moldable policies (``sched.kernels.moldable``): Downey's
speedup and the scaling of estimates against the model's, worked values by hand, and the
soonest-ending width against a scan of every width on the reference profile."""

from __future__ import annotations

import random

import numpy as np
import pytest

from batchd.model.moldable import FIXED, Moldable, Speedup
from batchd.model.times import NEVER
from batchd.sched.core.profile import ListProfile
from batchd.sched.kernels.moldable import scaled, soonest_width, speedup

MODELS = [
    Speedup("downey", 1.0, 0.0),
    Speedup("downey", 8.0, 0.0),
    Speedup("downey", 8.0, 0.5),
    Speedup("downey", 8.0, 1.0),
    Speedup("downey", 6.0, 1.5),
    Speedup("downey", 12.5, 2.0),
    Speedup("downey", 3.0, 0.3),
]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.format())
def test_speedup_is_the_models(model: Speedup) -> None:
    for n in range(1, 40):
        assert speedup(n, False, model.a, model.sigma) == model.at(n)


@pytest.mark.parametrize(
    ("n", "a", "sigma", "value"),
    [
        (4, 8.0, 0.0, 4.0),  # no variance: linear up to A
        (8, 8.0, 0.0, 8.0),
        (20, 8.0, 0.0, 8.0),  # flat beyond A
        (3, 4.0, 1.0, 4.0 * 3 / (4.0 + 1.0)),  # n <= A: A n / (A + sigma (n - 1) / 2)
        (6, 4.0, 1.0, 4.0 * 6 / (3.5 + 3.0)),  # A < n <= 2A - 1
        (7, 4.0, 1.0, 4.0 * 7 / (3.5 + 3.5)),  # n = 2A - 1 still on the curve
        (8, 4.0, 1.0, 4.0),  # beyond 2A - 1: A
        (3, 4.0, 2.0, 3 * 4.0 * 3.0 / (2.0 * 6.0 + 4.0)),  # sigma > 1: n A (s+1) / (s(n+A-1)+A)
        (10, 4.0, 2.0, 10 * 4.0 * 3.0 / (2.0 * 13.0 + 4.0)),  # n = A + A s - s
        (11, 4.0, 2.0, 4.0),
    ],
)
def test_speedup_by_hand(n: int, a: float, sigma: float, value: float) -> None:
    assert speedup(n, False, a, sigma) == pytest.approx(value, rel=1e-12)


def test_a_fixed_job_has_no_speedup() -> None:
    assert speedup(16, True, 8.0, 0.0) == 1.0
    assert scaled(100, 16, 4, True, 8.0, 0.0) == 100


@pytest.mark.parametrize("model", [*MODELS, FIXED], ids=lambda m: m.format())
def test_scaled_is_the_models_estimate(model: Speedup) -> None:
    fixed = model.kind == "fixed"
    for width in (1, 3, 8):
        for seconds in (0, -1, 1, 7, 100, 3599):
            mold = Moldable(1, 32, model, width, runtime=seconds, estimate=seconds)
            for n in range(1, 20):
                assert scaled(seconds, n, width, fixed, model.a, model.sigma) == mold.estimate_on(
                    n
                ), (width, seconds, n)


def test_scaled_by_hand() -> None:
    # Linear speedup: 100 s on 4 nodes is 50 s on 8 and 400 s on 1; 10 s on 3 is 30 s on 1.
    assert scaled(100, 8, 4, False, 100.0, 0.0) == 50
    assert scaled(100, 1, 4, False, 100.0, 0.0) == 400
    assert scaled(10, 4, 3, False, 100.0, 0.0) == 8  # ceil(7.5)
    assert scaled(100, 4, 4, False, 100.0, 0.0) == 100
    assert scaled(0, 8, 4, False, 100.0, 0.0) == 0
    assert scaled(-5, 8, 4, False, 100.0, 0.0) == -5


def reference_soonest(
    prof: ListProfile, now: int, low: int, high: int, width: int, est: int, model: Speedup
) -> int:
    fixed = model.kind == "fixed"
    best, best_end = 0, NEVER
    for w in range(low, high + 1):
        d = max(scaled(est, w, width, fixed, model.a, model.sigma), 1)
        start = prof.earliest_start(w, d, now)
        if start != NEVER and start + d < best_end:
            best, best_end = w, start + d
    return best


def arrays(prof: ListProfile) -> tuple[np.ndarray, np.ndarray, int]:
    return (
        np.array(prof.times + [0, 0], dtype=np.int64),
        np.array(prof.free + [0, 0], dtype=np.int64),
        len(prof.times),
    )


def test_soonest_width_by_hand() -> None:
    # 8 nodes: 2 free now, 8 from 100. A linear job of 400 s on 4 nodes.
    prof = ListProfile(8)
    prof.reserve(0, 100, 6)
    t, f, n = arrays(prof)
    # On 2 nodes now: 800 s, ends 800; on 8 from 100: 200 s, ends 300; on 7: ends 329.
    assert soonest_width(t, f, n, 0, 1, 8, 4, 400, False, 100.0, 0.0) == 8
    assert soonest_width(t, f, n, 0, 1, 2, 4, 400, False, 100.0, 0.0) == 2
    # A fixed job ends soonest on the narrowest width that starts now.
    assert soonest_width(t, f, n, 0, 1, 8, 4, 400, True, 100.0, 0.0) == 1
    # Nothing fits: wider than the machine.
    assert soonest_width(t, f, n, 0, 9, 12, 4, 400, False, 100.0, 0.0) == 0
    # Equal ends: the narrowest. Flat beyond A = 2: on an idle machine 2..8 nodes all
    # end at 200.
    idle_t, idle_f, idle_n = arrays(ListProfile(8))
    assert soonest_width(idle_t, idle_f, idle_n, 0, 1, 8, 2, 200, False, 2.0, 0.0) == 2
    # An unknown estimate holds its nodes one second: the narrowest that starts now.
    assert soonest_width(t, f, n, 0, 1, 8, 4, 0, False, 100.0, 0.0) == 1


@pytest.mark.parametrize("seed", range(8))
def test_soonest_width_is_the_best_of_every_width(seed: int) -> None:
    rng = random.Random(seed)
    capacity = rng.randint(4, 16)
    prof = ListProfile(capacity)
    for _ in range(rng.randint(0, 6)):
        start = rng.randint(0, 200)
        w = rng.randint(1, capacity)
        if prof.earliest_start(w, 50, start) == start:
            prof.reserve(start, start + rng.randint(1, 150), w)
    t, f, n = arrays(prof)
    for _ in range(30):
        model = rng.choice([*MODELS, FIXED, Speedup("downey", 100.0, 0.0)])
        low = rng.randint(1, capacity)
        high = rng.randint(low, capacity + 2)
        width = rng.randint(low, high)
        est = rng.choice([0, 1, rng.randint(2, 500)])
        now = rng.randint(0, 100)
        fixed = model.kind == "fixed"
        got = soonest_width(t, f, n, now, low, high, width, est, fixed, model.a, model.sigma)
        assert got == reference_soonest(prof, now, low, high, width, est, model)
