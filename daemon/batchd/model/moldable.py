"""Moldable jobs (Sabin et al.'s moldable paper): a width range and how runtime depends on width.

A trace gives a job's runtime ``T`` (and estimate ``E``) on its requested width ``r``.
Its work is ``L = T x S(r)``; on ``n`` nodes it runs ``ceil(L / S(n))`` seconds, and
the estimate scales the same way. ``S`` is Downey's speedup (sec. 3.2), or 1 at every
width for ``fixed`` (runtime independent of width, Slurm's ``-N min-max``). A rigid
job is the range ``r..r``.

The text forms: a range ``8-64`` (or ``32``), a model ``downey:A:SIGMA`` or ``fixed``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from batchd.model.utility import format_number

__all__ = ["FIXED", "Moldable", "MoldError", "Speedup", "parse_range"]

_RANGE = re.compile(r"^(\d{1,9})(?:-(\d{1,9}))?$")
_NUMBER = re.compile(r"^(?:\d+(?:\.\d*)?|\.\d+)$")


class MoldError(ValueError):
    """A width range or speedup model that breaks a rule; the message names it."""


@dataclass(frozen=True, slots=True)
class Speedup:
    """Downey's speedup with average parallelism ``a`` and variance ``sigma``, or
    ``fixed`` (``a`` and ``sigma`` unused)."""

    kind: str  # "downey" or "fixed"
    a: float = 1.0
    sigma: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in ("downey", "fixed"):
            raise MoldError(f"speedup model {self.kind!r}: use downey:A:SIGMA or fixed")
        if self.kind == "downey":
            if not (math.isfinite(self.a) and self.a >= 1):
                raise MoldError(f"downey: A is {format_number(self.a)}; it must be at least 1")
            if not (math.isfinite(self.sigma) and self.sigma >= 0):
                raise MoldError(
                    f"downey: sigma is {format_number(self.sigma)}; it must be at least 0"
                )

    @classmethod
    def parse(cls, text: str) -> Speedup:
        """``downey:A:SIGMA`` or ``fixed``."""
        token = text.strip()
        if token == "fixed":
            return FIXED
        parts = token.split(":")
        if len(parts) != 3 or parts[0] != "downey":
            raise MoldError(f"speedup {text!r}: use downey:A:SIGMA or fixed")
        for name, value in (("A", parts[1]), ("sigma", parts[2])):
            if _NUMBER.match(value) is None:
                raise MoldError(f"speedup {text!r}: {name} {value!r} is not a decimal number")
        return cls("downey", float(parts[1]), float(parts[2]))

    def format(self) -> str:
        if self.kind == "fixed":
            return "fixed"
        return f"downey:{format_number(self.a)}:{format_number(self.sigma)}"

    def at(self, n: int) -> float:
        """S(n) for n >= 1 nodes (sec. 3.2; 1 everywhere for ``fixed``)."""
        if self.kind == "fixed":
            return 1.0
        a, s = self.a, self.sigma
        if s <= 1:
            if n <= a:
                return a * n / (a + s * (n - 1) / 2)
            if n <= 2 * a - 1:
                return a * n / (s * (a - 0.5) + n * (1 - s / 2))
            return a
        if n <= a + a * s - s:
            return n * a * (s + 1) / (s * (n + a - 1) + a)
        return a


FIXED = Speedup("fixed")


def parse_range(text: str) -> tuple[int, int]:
    """``8-64`` -> (8, 64); ``32`` -> (32, 32). Both ends at least 1, low <= high."""
    m = _RANGE.match(text.strip())
    if m is None:
        raise MoldError(f"nodes {text!r}: give a count or a range MIN-MAX of whole numbers")
    low = int(m.group(1))
    high = int(m.group(2)) if m.group(2) is not None else low
    if low < 1:
        raise MoldError(f"nodes {text!r}: the minimum must be at least 1")
    if high < low:
        raise MoldError(f"nodes {text!r}: the maximum {high} is below the minimum {low}")
    return low, high


def _scaled(seconds: int, ratio: float) -> int:
    # Rounded to a microsecond before the ceiling, so a whole number in exact
    # arithmetic is not pushed up a second by rounding error.
    return math.ceil(round(seconds * ratio, 6))


@dataclass(frozen=True, slots=True)
class Moldable:
    """A job's width range ``low..high``, its speedup, and the runtime and estimate it
    was given on its requested width ``width`` (which lies in the range)."""

    low: int
    high: int
    speedup: Speedup
    width: int
    runtime: int
    estimate: int

    def __post_init__(self) -> None:
        if not 1 <= self.low <= self.high:
            raise MoldError(f"nodes {self.low}-{self.high}: need 1 <= MIN <= MAX")
        if not self.low <= self.width <= self.high:
            raise MoldError(
                f"the requested width {self.width} is outside the range {self.range_text()}"
            )

    @property
    def rigid(self) -> bool:
        return self.low == self.high

    def allows(self, n: int) -> bool:
        return self.low <= n <= self.high

    def range_text(self) -> str:
        return f"{self.low}-{self.high}"

    def work(self) -> float:
        """L = T x S(r): the runtime on one node, in seconds."""
        return self.runtime * self.speedup.at(self.width)

    def runtime_on(self, n: int) -> int:
        """ceil(L / S(n)): the runtime on ``n`` nodes (``T`` itself on the requested width)."""
        return self._on(self.runtime, n)

    def estimate_on(self, n: int) -> int:
        """The estimate on ``n`` nodes, scaled as the runtime (an unknown one stays so)."""
        return self._on(self.estimate, n) if self.estimate > 0 else self.estimate

    def _on(self, seconds: int, n: int) -> int:
        if n == self.width or self.speedup.kind == "fixed" or seconds <= 0:
            return seconds
        return _scaled(seconds, self.speedup.at(self.width) / self.speedup.at(n))
