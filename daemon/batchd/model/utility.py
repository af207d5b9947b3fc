"""The utility function of a job (Lee's utility paper, sec. 3.4): what its result is worth, by when.

A function is a list of ``(time since submit, value)`` points. The first time is 0
(the submission), times strictly increase, values never increase and are never
negative, and there are at least two points. Between points the value is linear;
after the last point it is 0. The text form is ``0:1000,3600:800,2h:0``: each time
in seconds (decimals allowed), ``[[hh:]mm:]ss`` or with an ``h``/``m``/``s`` suffix,
each value a decimal.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass

from batchd.model.times import parse_duration

__all__ = ["Utility", "UtilityError", "format_number", "parse_time"]

_DECIMAL = r"\d+(?:\.\d*)?|\.\d+"
_SUFFIXED = re.compile(rf"^({_DECIMAL})([hms]?)$")
_SECONDS = re.compile(rf"^(?:{_DECIMAL})$")
_SCALE = {"h": 3600.0, "m": 60.0, "s": 1.0, "": 1.0}
_VALUE = re.compile(rf"^[+-]?({_DECIMAL})(?:[eE][+-]?\d+)?$")


class UtilityError(ValueError):
    """A utility function that breaks a rule; the message names the rule and the point."""


def parse_time(text: str) -> float:
    """Seconds from ``3600``, ``1.5``, ``2h``, ``90m``, ``30s``, ``1:00:00`` or ``10:00``."""
    token = text.strip()
    if ":" in token:
        return float(parse_duration(token))
    m = _SUFFIXED.match(token)
    if m is None:
        raise ValueError(
            f"{text!r} is not a time: use seconds, [[hh:]mm:]ss or a number with h, m or s"
        )
    return float(m.group(1)) * _SCALE[m.group(2)]


def _parse_value(text: str) -> float:
    token = text.strip()
    if _VALUE.match(token) is None:
        raise ValueError(f"{text!r} is not a value: use a decimal number")
    value = float(token)
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite value")
    return value


def format_number(x: float) -> str:
    """Shortest decimal that reads back as the same float, without an exponent."""
    if not math.isfinite(x):
        return repr(float(x))
    if x == int(x) and abs(x) < 1e16:
        return str(int(x))
    text = repr(float(x))
    if "e" in text or "E" in text:
        text = f"{x:.20f}".rstrip("0").rstrip(".")
    return text


def _label(i: int, t: float, v: float) -> str:
    return f"point {i + 1} ({format_number(t)}:{format_number(v)})"


@dataclass(frozen=True, slots=True)
class Utility:
    """A valid piecewise-linear utility function; build it from points or :meth:`parse`."""

    points: tuple[tuple[float, float], ...]

    def __init__(self, points: Iterable[tuple[float, float]]) -> None:
        pts = tuple((float(t), float(v)) for t, v in points)
        if len(pts) < 2:
            raise UtilityError(f"a utility function needs at least two points, got {len(pts)}")
        for i, (t, v) in enumerate(pts):
            where = _label(i, t, v)
            if not (math.isfinite(t) and math.isfinite(v)):
                raise UtilityError(f"{where}: times and values must be finite numbers")
            if v < 0:
                raise UtilityError(f"{where}: values must not be negative")
            if i == 0:
                if t != 0:
                    raise UtilityError(f"{where}: the first time must be 0 (the submission)")
                continue
            t0, v0 = pts[i - 1]
            if t <= t0:
                raise UtilityError(
                    f"{where}: times must strictly increase (the point before is at "
                    f"{format_number(t0)})"
                )
            if v > v0:
                raise UtilityError(
                    f"{where}: values must never increase (the point before has "
                    f"{format_number(v0)})"
                )
        object.__setattr__(self, "points", pts)

    @classmethod
    def parse(cls, text: str, *, seconds_only: bool = False) -> Utility:
        """The function of ``0:1000,3600:800,2h:0``; UtilityError names a bad point.

        ``seconds_only``: times must be plain decimal seconds (the SWF token's form).
        """
        if not isinstance(text, str) or not text.strip():
            raise UtilityError("a utility function needs at least two points, got none")
        pts: list[tuple[float, float]] = []
        for i, item in enumerate(text.split(",")):
            # The value follows the last colon: the time may itself be hh:mm:ss.
            time_text, sep, value_text = item.strip().rpartition(":")
            if not sep or not time_text:
                raise UtilityError(f"point {i + 1} ({item.strip()!r}): expected TIME:VALUE")
            try:
                if seconds_only and _SECONDS.match(time_text.strip()) is None:
                    raise ValueError(f"{time_text!r} is not a time in seconds")
                t = parse_time(time_text)
                v = _parse_value(value_text)
            except ValueError as exc:
                raise UtilityError(f"point {i + 1} ({item.strip()!r}): {exc}") from None
            pts.append((t, v))
        return cls(pts)

    def format(self) -> str:
        """The text form with times in seconds: ``0:1000,3600:800,7200:0``."""
        return ",".join(f"{format_number(t)}:{format_number(v)}" for t, v in self.points)

    def __str__(self) -> str:
        return self.format()

    @property
    def start_value(self) -> float:
        """The value of a result delivered at once (the first point's)."""
        return self.points[0][1]

    @property
    def deadline(self) -> float:
        """The last point's time: later the result is worth 0."""
        return self.points[-1][0]

    def value_at(self, t: float) -> float:
        """What a job ending ``t`` seconds after its submission earns."""
        pts = self.points
        if t <= 0:
            return pts[0][1]
        if t > pts[-1][0]:
            return 0.0
        i = bisect_right([p[0] for p in pts], t)
        if i >= len(pts):
            return pts[-1][1]
        (t0, v0), (t1, v1) = pts[i - 1], pts[i]
        return v0 + (v1 - v0) * (t - t0) / (t1 - t0)
