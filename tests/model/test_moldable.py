"""Downey's speedup at its boundaries, the scaled runtimes, and the text forms."""

from __future__ import annotations

import pytest

from batchd.model.moldable import FIXED, Moldable, MoldError, Speedup, _scaled, parse_range


def test_low_variance_at_its_boundaries() -> None:
    s = Speedup("downey", 4, 0.5)
    assert s.at(1) == pytest.approx(1.0)
    # n = A: 4*4 / (4 + 0.5*3/2) = 16 / 4.75 (the second form gives 16 / (1.75 + 3), the same).
    assert s.at(4) == pytest.approx(16 / 4.75)
    # n = 2A - 1 = 7: 28 / (0.5*3.5 + 7*0.75) = 4 = A.
    assert s.at(7) == pytest.approx(4.0)
    assert s.at(6) == pytest.approx(24 / (1.75 + 4.5))
    assert s.at(8) == s.at(100) == 4.0


def test_high_variance_at_its_boundaries() -> None:
    s = Speedup("downey", 3, 2)
    # S(n) = 9n / (2n + 7) up to n = A + A sigma - sigma = 7, then A.
    assert s.at(1) == pytest.approx(1.0)
    assert s.at(3) == pytest.approx(27 / 13)
    assert s.at(7) == pytest.approx(3.0)
    assert s.at(6) == pytest.approx(54 / 19)
    assert s.at(8) == s.at(1000) == 3.0


@pytest.mark.parametrize("a", [1.0, 2.5, 4.0, 64.0, 347.115])
@pytest.mark.parametrize("sigma", [0.0, 0.3, 1.0, 1.5, 2.0])
def test_continuous_across_the_boundaries_and_never_falling(a: float, sigma: float) -> None:
    s = Speedup("downey", a, sigma)
    if sigma <= 1:
        edges = [a, 2 * a - 1]
        forms = [
            lambda n: a * n / (a + sigma * (n - 1) / 2),
            lambda n: a * n / (sigma * (a - 0.5) + n * (1 - sigma / 2)),
            lambda n: a,
        ]
    else:
        edges = [a + a * sigma - sigma]
        forms = [lambda n: n * a * (sigma + 1) / (sigma * (n + a - 1) + a), lambda n: a]
    for k, edge in enumerate(edges):
        assert forms[k](edge) == pytest.approx(forms[k + 1](edge))
    values = [s.at(n) for n in range(1, int(3 * a) + 3)]
    assert values[0] == pytest.approx(1.0)
    assert all(b >= x - 1e-12 for x, b in zip(values, values[1:], strict=False))
    assert max(values) <= a + 1e-12


def test_sigma_one_is_both_forms() -> None:
    low = Speedup("downey", 10, 1.0)
    for n in range(1, 25):
        high = n * 10 * 2 / (1 * (n + 10 - 1) + 10) if n <= 19 else 10
        assert low.at(n) == pytest.approx(high)


def test_runtime_on_n_nodes_is_the_ceiling_of_the_work_over_the_speedup() -> None:
    # sigma 0: S(n) = n up to A. T = 100 s on 8 nodes: L = 800.
    m = Moldable(1, 200, Speedup("downey", 64, 0), 8, 100, 150)
    assert m.work() == pytest.approx(800)
    assert m.runtime_on(8) == 100
    assert m.runtime_on(16) == 50  # exactly 50, not pushed to 51 by rounding
    assert m.runtime_on(3) == 267  # 266.67
    assert m.runtime_on(7) == 115  # 114.29
    assert m.runtime_on(64) == 13  # 12.5
    assert m.runtime_on(100) == 13  # past A the speedup stays A
    assert m.estimate_on(16) == 75
    assert m.estimate_on(3) == 400
    assert m.runtime_on(1) == 800


def test_fixed_runs_as_long_on_any_width_and_unknown_estimates_stay() -> None:
    m = Moldable(2, 64, FIXED, 8, 100, -1)
    assert {m.runtime_on(n) for n in (2, 8, 64)} == {100}
    assert m.estimate_on(64) == -1


@pytest.mark.parametrize(
    ("text", "low", "high"), [("8-64", 8, 64), ("32", 32, 32), (" 1-1 ", 1, 1)]
)
def test_ranges(text: str, low: int, high: int) -> None:
    assert parse_range(text) == (low, high)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("64-8", "below the minimum"),
        ("0-8", "at least 1"),
        ("8-", "MIN-MAX"),
        ("a-b", "MIN-MAX"),
        ("-8", "MIN-MAX"),
    ],
)
def test_bad_ranges(text: str, message: str) -> None:
    with pytest.raises(MoldError, match=message):
        parse_range(text)


def test_speedup_text_round_trips() -> None:
    for text in ("fixed", "downey:64:1.5", "downey:347.115:0", "downey:1:2"):
        assert Speedup.parse(text).format() == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("downey:0.5:1", "at least 1"),
        ("downey:64", "downey:A:SIGMA"),
        ("amdahl:0.5", "downey:A:SIGMA"),
        ("downey:64:-1", "not a decimal"),
        ("downey:inf:1", "not a decimal"),
        ("downey:64:x", "sigma 'x'"),
        ("downey:x:1", "A 'x' is not a decimal number"),
    ],
)
def test_bad_speedups(text: str, message: str) -> None:
    with pytest.raises(MoldError, match=message):
        Speedup.parse(text)


def test_the_requested_width_must_lie_in_the_range() -> None:
    with pytest.raises(MoldError, match="outside the range 16-64"):
        Moldable(16, 64, FIXED, 8, 10, 10)
    with pytest.raises(MoldError) as refused:
        Moldable(64, 16, FIXED, 32, 10, 10)
    assert str(refused.value) == "nodes 64-16: need 1 <= MIN <= MAX"


def test_a_speedup_names_what_it_refuses() -> None:
    for kind, a, sigma, says in [
        ("amdahl", 1.0, 0.0, "speedup model 'amdahl': use downey:A:SIGMA or fixed"),
        ("downey", 2.0, -1.0, "downey: sigma is -1; it must be at least 0"),
        ("downey", 2.0, float("nan"), "downey: sigma is nan; it must be at least 0"),
    ]:
        with pytest.raises(MoldError) as refused:
            Speedup(kind, a, sigma)
        assert str(refused.value) == says


def test_fixed_ignores_a_and_sigma_and_downey_holds_a_past_two_a_minus_one() -> None:
    assert [Speedup("fixed", 64, 1.5).at(n) for n in (1, 8, 64)] == [1.0, 1.0, 1.0]
    # A = 2.7, sigma = 0.5: n = 4 lies below 2A - 1 = 4.4, on the second piece:
    # 2.7 x 4 / (0.5 x 2.2 + 4 x 0.75) = 10.8 / 4.1; from n = 5 on, A.
    low = Speedup("downey", 2.7, 0.5)
    assert low.at(4) == pytest.approx(10.8 / 4.1)
    assert low.at(5) == 2.7


def test_scaled_seconds_are_rounded_to_a_microsecond_before_the_ceiling() -> None:
    assert _scaled(1, 2.0000004) == 2  # 0.4 microseconds over: rounding error
    assert _scaled(1, 2.000001) == 3  # a whole microsecond over: the next second


def test_one_second_scales_like_any_other_and_the_ends_of_the_range_are_widths() -> None:
    m = Moldable(4, 8, Speedup("downey", 64, 0), 4, 1, 1)  # S(n) = n: L = 4 s
    assert (m.runtime_on(4), m.estimate_on(4)) == (1, 1)
    assert Moldable(4, 8, Speedup("downey", 64, 0), 8, 1, 1).runtime_on(4) == 2
    assert Moldable(4, 8, Speedup("downey", 64, 0), 8, 1, 1).estimate_on(4) == 2
    rigid = Moldable(8, 8, FIXED, 8, 100, 100)
    assert rigid.rigid and rigid.allows(8) and not rigid.allows(7) and not rigid.allows(9)
    assert [FIXED.at(n) for n in (1, 8, 1000)] == [1.0, 1.0, 1.0]
