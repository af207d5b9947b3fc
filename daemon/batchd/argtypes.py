"""argparse value types shared by the commands: bad numbers fail with one clear line.

Every numeric option is bounded: a value outside its range is refused before
anything runs (``--speed 1e300`` once ran a clock past any date and saved it).
The bounds are listed in docs/operations.md.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import NoReturn

MAX_NODES = 1_000_000  # the site config's limit on a machine
MAX_SEED = 2**63 - 1
SPEED_RANGE = (0.001, 1_000_000.0)  # emulated seconds per wall second
SHRINK_RANGE = (0.001, 1000.0)  # factor on inter-arrival times


def _number(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def int_in(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse type: an integer in ``lo..hi``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not lo <= value <= hi:
            raise argparse.ArgumentTypeError(
                f"expected an integer from {_number(lo)} to {_number(hi)}, got {text!r}"
            )
        return value

    parse.__name__ = f"int_{lo}_{hi}"
    return parse


def float_in(lo: float, hi: float) -> Callable[[str], float]:
    """An argparse type: a number in ``lo..hi`` (never inf or nan)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not lo <= value <= hi:  # false for nan
            raise argparse.ArgumentTypeError(
                f"expected a number from {_number(lo)} to {_number(hi)}, got {text!r}"
            )
        return value

    parse.__name__ = f"float_{lo}_{hi}"
    return parse


positive_int = int_in(1, 1_000_000_000)
node_count = int_in(1, MAX_NODES)
seed = int_in(0, MAX_SEED)
speed = float_in(*SPEED_RANGE)
shrink = float_in(*SHRINK_RANGE)


def positive_ints(text: str) -> list[int]:
    """Comma-separated positive integers: ``"100,430"`` -> [100, 430]."""
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}"
        ) from None
    if not values or min(values) <= 0:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


class CLIError(Exception):
    """A user error: printed as one line, exit code 2."""


def fail(message: str) -> NoReturn:
    raise CLIError(message)
