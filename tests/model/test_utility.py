"""The utility function of a job (Lee's utility paper, sec. 3.4): validation, interpolation, text form."""

import pytest

from batchd.model.utility import Utility, UtilityError, format_number, parse_time


def test_value_at_interpolates_by_hand() -> None:
    u = Utility([(0, 1000), (3600, 800), (7200, 0)])
    assert u.value_at(0) == 1000
    # 1800 s is half way from 1000 to 800.
    assert u.value_at(1800) == 900
    assert u.value_at(3600) == 800
    # 5400 s: half way from 800 to 0.
    assert u.value_at(5400) == 400
    # 6300 s: three quarters of the way from 800 to 0 -> 200.
    assert u.value_at(6300) == pytest.approx(200)
    assert u.value_at(7200) == 0
    assert u.value_at(10_000) == 0


def test_value_is_zero_after_the_last_point_even_when_it_is_not_zero() -> None:
    u = Utility([(0, 50), (100, 50)])
    assert u.value_at(60) == 50
    assert u.value_at(100) == 50
    assert u.value_at(100.001) == 0
    assert u.deadline == 100
    assert u.start_value == 50


def test_a_step_is_two_close_times() -> None:
    u = Utility([(0, 10), (5, 10), (5.001, 2), (15, 2), (15.001, 0)])
    assert u.value_at(5) == 10
    assert u.value_at(5.0005) == pytest.approx(6)
    assert u.value_at(10) == 2
    assert u.value_at(20) == 0


def test_parse_takes_seconds_hms_and_suffixes() -> None:
    u = Utility.parse("0:1000,3600:800,2h:0")
    assert u.points == ((0, 1000), (3600, 800), (7200, 0))
    assert Utility.parse(" 0:5 , 1:30:4.5, 1:00:00:0 ").points == ((0, 5), (90, 4.5), (3600, 0))
    assert Utility.parse("0:1,90m:0.5,2.5h:0").points == ((0, 1), (5400, 0.5), (9000, 0))
    assert Utility.parse("0:1,0.5:0").points == ((0, 1), (0.5, 0))
    assert parse_time("30s") == 30
    assert parse_time("10:00") == 600


def test_format_round_trips_in_seconds() -> None:
    u = Utility.parse("0:1000,1h:800.25,2h:0")
    assert u.format() == "0:1000,3600:800.25,7200:0"
    assert Utility.parse(u.format()) == u
    v = Utility([(0, 1 / 3), (0.1, 1e-7)])
    assert Utility.parse(v.format()) == v
    assert "e" not in v.format()
    assert format_number(12.0) == "12"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0:10", "at least two points, got 1"),
        ("", "at least two points, got none"),
        ("5:10,10:0", "point 1 (5:10): the first time must be 0"),
        ("0:10,60:5,60:0", "point 3 (60:0): times must strictly increase"),
        ("0:10,60:5,30:0", "point 3 (30:0): times must strictly increase"),
        ("0:10,60:12,90:0", "point 2 (60:12): values must never increase"),
        ("0:10,60:-1", "point 2 (60:-1): values must not be negative"),
        ("0:10,60", "point 2 ('60'): expected TIME:VALUE"),
        ("0:10,1x:0", "point 2 ('1x:0'): '1x' is not a time"),
        ("0:10,60:abc", "point 2 ('60:abc'): 'abc' is not a value"),
        ("0:10,1:75:0", "point 2 ('1:75:0'): '1:75': seconds must be below 60"),
    ],
)
def test_a_function_breaking_a_rule_is_refused_naming_rule_and_point(
    text: str, message: str
) -> None:
    with pytest.raises(UtilityError) as err:
        Utility.parse(text)
    assert message in str(err.value)


def test_points_given_directly_are_checked_too() -> None:
    with pytest.raises(UtilityError, match=r"point 2 \(1:inf\): .*finite"):
        Utility([(0, 1), (1, float("inf"))])
    with pytest.raises(UtilityError, match="at least two points"):
        Utility([])


def test_format_number_of_very_large_and_very_small_numbers_has_no_exponent() -> None:
    assert format_number(1e16) == "10000000000000000"
    assert format_number(2.5e-5) == "0.000025"
    assert format_number(-3.0) == "-3"


def test_value_at_interpolates_from_the_first_second_on() -> None:
    f = Utility.parse("0:1000,100:0")
    assert f.value_at(0.5) == 995.0
    assert f.value_at(-1) == 1000.0


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "a utility function needs at least two points, got none"),
        (":5,10:0", "point 1 (':5'): expected TIME:VALUE"),
        ("0:1e999,10:0", "point 1 ('0:1e999'): '1e999' is not a finite value"),
    ],
)
def test_a_bad_text_is_refused_in_so_many_words(text: str, says: str) -> None:
    with pytest.raises(UtilityError) as refused:
        Utility.parse(text)
    assert str(refused.value) == says


def test_seconds_only_takes_plain_seconds_and_refuses_the_rest() -> None:
    assert Utility.parse("0:10,60.5:0", seconds_only=True).points == ((0, 10), (60.5, 0))
    with pytest.raises(UtilityError) as refused:
        Utility.parse("0:10,1h:0", seconds_only=True)
    assert str(refused.value) == "point 2 ('1h:0'): '1h' is not a time in seconds"
