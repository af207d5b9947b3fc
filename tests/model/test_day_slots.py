"""One day's prime and non-prime times: the canonical forms, what is refused, the steps."""

from __future__ import annotations

import pytest

from batchd.model.calendar import ALL_NONPRIME, ALL_PRIME, NONPRIME, PRIME, DaySlots

DAY = 86_400


def test_the_canonical_days() -> None:
    assert (ALL_PRIME.prime, ALL_PRIME.nonprime) == (0, None)
    assert (ALL_NONPRIME.prime, ALL_NONPRIME.nonprime) == (None, 0)
    assert ALL_PRIME.segments() == ((0, PRIME),)
    assert ALL_NONPRIME.segments() == ((0, NONPRIME),)
    assert (ALL_PRIME.prime_seconds(), ALL_NONPRIME.prime_seconds()) == (DAY, 0)


@pytest.mark.parametrize(
    ("prime", "nonprime", "says"),
    [
        (None, 1, "a day without prime time is DaySlots(None, 0)"),
        (None, None, "a day without prime time is DaySlots(None, 0)"),
        (1, None, "a day without non-prime time is DaySlots(0, None)"),
        (3600, 3600, "prime and non-prime cannot start at the same second"),
        (DAY, 0, "DaySlots times are seconds in [0, 86400), got 86400"),
        (-1, 0, "DaySlots times are seconds in [0, 86400), got -1"),
        (1.5, 0, "DaySlots times are seconds in [0, 86400), got 1.5"),
    ],
)
def test_a_day_that_cannot_be_is_refused(prime: object, nonprime: object, says: str) -> None:
    with pytest.raises(ValueError) as refused:
        DaySlots(prime, nonprime)  # type: ignore[arg-type]
    assert str(refused.value) == says


def test_a_day_prime_from_six_to_seven() -> None:
    day = DaySlots(6 * 3600, 19 * 3600)
    assert day.segments() == ((0, NONPRIME), (6 * 3600, PRIME), (19 * 3600, NONPRIME))
    assert day.prime_seconds() == 13 * 3600
    assert [day.period_at(s) for s in (0, 6 * 3600 - 1, 6 * 3600, 19 * 3600 - 1, 19 * 3600)] == [
        NONPRIME,
        NONPRIME,
        PRIME,
        PRIME,
        NONPRIME,
    ]


def test_a_night_prime_slot_wraps_around_midnight() -> None:
    day = DaySlots(22 * 3600, 1)  # non-prime from 00:00:01 to 22:00, prime around it
    assert day.segments() == ((0, PRIME), (1, NONPRIME), (22 * 3600, PRIME))
    assert day.prime_seconds() == 1 + 2 * 3600
    assert (day.period_at(0), day.period_at(1), day.period_at(22 * 3600 - 1)) == (
        PRIME,
        NONPRIME,
        NONPRIME,
    )


def test_the_canonical_days_are_made_by_their_constructors() -> None:
    assert DaySlots.all_prime() == DaySlots(0, None) == ALL_PRIME
    assert DaySlots.all_nonprime() == DaySlots(None, 0) == ALL_NONPRIME
