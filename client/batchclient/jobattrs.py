"""Checks of job attributes given on the command line, done before anything is sent."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from .hints import Any

JOB_ID = re.compile(r"^\d+(?:\[\d*\])?(?:\.[A-Za-z0-9_.-]+)?$")
_NAME = re.compile(r"^[^\s@:]+$")
NAME_MAX = 236
DEPEND_TYPES = ("afterok", "afternotok", "afterany")
HOLD_TYPES = "uos"
PRIORITY_MIN, PRIORITY_MAX = -1024, 1023


def is_job_id(text: str) -> bool:
    """``12``, an array's ``12[]`` or a subjob's ``12[3]``, each alone or with ``.server``."""
    return bool(JOB_ID.match(text))


def is_array_id(text: str) -> bool:
    """``12[]`` or ``12[].server``."""
    return "[]" in text.partition(".")[0]


def is_subjob_id(text: str) -> bool:
    """``12[3]`` or ``12[3].server``."""
    head = text.partition(".")[0]
    return "[" in head and "[]" not in head


ARRAY_FORM = "X-Y[:Z][%N]: indices X < Y, step Z >= 1, at most N subjobs running"
_ARRAY = re.compile(r"^(\d+)-(\d+)(?::(\d+))?(?:%(\d+))?$")


def parse_array(text: str) -> tuple[str, int | None]:
    """``qsub -J X-Y[:Z][%N]`` -> ("X-Y[:Z]", N), checked as PBS's ``chk_Jrange``."""
    m = _ARRAY.match(text.strip())
    bad = f"illegal -J value: {text}"
    if m is None:
        raise ValueError(f"{bad} (give {ARRAY_FORM})")
    start, end = int(m.group(1)), int(m.group(2))
    if start >= end:
        raise ValueError(f"{bad} (the first index must be below the last: {ARRAY_FORM})")
    if m.group(3) is not None and int(m.group(3)) < 1:
        raise ValueError(f"{bad} (the step must be at least 1)")
    if m.group(4) is not None and int(m.group(4)) < 1:
        raise ValueError(f"{bad} (%N: at least one subjob must be allowed to run)")
    span = text.strip().partition("%")[0]
    return span, int(m.group(4)) if m.group(4) is not None else None


def parse_priority(text: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        value = None
    if value is None or not PRIORITY_MIN <= value <= PRIORITY_MAX:
        raise ValueError(
            f"-p {text}: priority must be an integer between {PRIORITY_MIN} and +{PRIORITY_MAX}"
        )
    return value


def check_name(text: str) -> str:
    if not _NAME.match(text) or len(text) > NAME_MAX:
        raise ValueError(
            f"-N {text!r}: illegal job name: no blanks, '@' or ':', at most {NAME_MAX} characters"
        )
    return text


def name_from_path(path: str) -> str:
    """The default job name: the script's base name (blanks, '@' and ':' become '_')."""
    base = os.path.basename(path.rstrip("/")) or "STDIN"
    return re.sub(r"[\s@:]", "_", base)[:NAME_MAX]


def parse_depend(text: str) -> str:
    """``TYPE:ID[:ID...][,TYPE:ID...]``, TYPE one of afterok, afternotok, afterany.

    Returns the string unchanged (the daemon parses it again).
    """
    if not text:
        raise ValueError("depend=: expected TYPE:ID[:ID...]")
    for part in text.split(","):
        kind, _, ids = part.partition(":")
        if kind not in DEPEND_TYPES:
            raise ValueError(
                f"depend={text}: unknown dependency type {kind!r}; "
                f"batchd knows {', '.join(DEPEND_TYPES)}"
            )
        if not ids:
            raise ValueError(f"depend={text}: {kind} needs at least one job id")
        for jid in ids.split(":"):
            if not is_job_id(jid):
                raise ValueError(f"depend={text}: {jid!r} is not a job id")
    return text


_SPEEDUP = re.compile(r"^downey:((?:\d+(?:\.\d*)?|\.\d+)):((?:\d+(?:\.\d*)?|\.\d+))$")
SPEEDUP_MAX_LENGTH = 64


def parse_speedup(text: str) -> str:
    """``speedup=downey:A:SIGMA`` (A >= 1, SIGMA >= 0, decimal numbers) or ``fixed``."""
    if text == "fixed":
        return text
    m = _SPEEDUP.match(text)
    if m is None or len(text) > SPEEDUP_MAX_LENGTH:
        raise ValueError(
            f"speedup={text[:SPEEDUP_MAX_LENGTH]}: give downey:A:SIGMA (decimal numbers, "
            f"at most {SPEEDUP_MAX_LENGTH} characters) or fixed"
        )
    if float(m.group(1)) < 1:
        raise ValueError(f"speedup={text}: A is {m.group(1)}; it must be at least 1")
    return text


def parse_w(values: Iterable[str]) -> str | None:
    """``-W depend=...`` alone (``qsub`` takes utility= too: :func:`parse_w_attrs`)."""
    attrs = parse_w_attrs(values)
    if "utility" in attrs:
        raise ValueError("-W utility=...: not here")
    depend = attrs.get("depend")
    return depend if isinstance(depend, str) else None


def parse_w_attrs(
    values: Iterable[str], allowed: tuple[str, ...] = ("depend", "utility", "speedup")
) -> dict[str, Any]:
    """``-W depend=...``, ``-W utility=...`` and ``-W speedup=...``: the body fields; the
    last of each wins."""
    out: dict[str, Any] = {}
    for value in values:
        name, eq, rest = value.partition("=")
        name = name.strip()
        if name not in allowed or not eq:
            forms = " or ".join(f"-W {a}=..." for a in allowed)
            raise ValueError(f"-W {value}: batchd supports only {forms}")
        try:
            if name == "depend":
                out["depend"] = parse_depend(rest.strip())
            elif name == "speedup":
                out["speedup"] = parse_speedup(rest.strip())
            elif rest.strip().lower() == "none":  # qalter: take the function away
                out["utility"] = None
            else:
                out["utility"] = parse_utility(rest.strip())
        except ValueError as exc:
            raise ValueError(f"-W {exc}") from None
    return out


_DECIMAL = r"(?:\d+(?:\.\d*)?|\.\d+)"
_TIME_SUFFIX = re.compile(rf"^({_DECIMAL})([hms]?)$")
_HMS = re.compile(r"^(?:(\d+):)?(\d+):(\d+)$")
_VALUE = re.compile(rf"^[+-]?{_DECIMAL}(?:[eE][+-]?\d+)?$")


def _utility_time(text: str) -> float:
    m = _HMS.match(text)
    if m is not None:
        h, mi, sec = (int(g) if g else 0 for g in m.groups())
        if sec >= 60 or (m.group(1) is not None and mi >= 60):
            raise ValueError(f"{text!r}: minutes and seconds must be below 60")
        return float(h * 3600 + mi * 60 + sec)
    m = _TIME_SUFFIX.match(text)
    if m is None:
        raise ValueError(
            f"{text!r} is not a time: use seconds, [[hh:]mm:]ss or a number with h, m or s"
        )
    return float(m.group(1)) * {"h": 3600, "m": 60, "s": 1, "": 1}[m.group(2)]


def parse_utility(text: str) -> list[list[float]]:
    """``utility=0:1000,3600:800,2h:0``: the points as [seconds, value] pairs.

    Times in seconds, ``[[hh:]mm:]ss`` or with an h/m/s suffix; values decimals. Only
    the form is checked here; the daemon checks the rules (times increasing, values
    not) and names a point that breaks one.
    """
    points: list[list[float]] = []
    for i, item in enumerate(text.split(","), 1):
        time_text, sep, value_text = item.strip().rpartition(":")
        if not sep or not time_text:
            raise ValueError(f"utility={text}: point {i} ({item.strip()!r}): expected TIME:VALUE")
        if _VALUE.match(value_text.strip()) is None:
            raise ValueError(f"utility={text}: point {i}: {value_text!r} is not a value")
        try:
            t = _utility_time(time_text.strip())
        except ValueError as exc:
            raise ValueError(f"utility={text}: point {i}: {exc}") from None
        points.append([t, float(value_text)])
    if len(points) < 2:
        raise ValueError(f"utility={text}: a utility function needs at least two points")
    return points


def format_utility(points: Iterable[Iterable[float]]) -> str:
    """``0:1000,3600:800,7200:0``: the points as qsub takes them, times in seconds."""
    return ",".join(":".join(_number(x) for x in p) for p in points)


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _split_unquoted(text: str, sep: str = ",") -> list[str]:
    """Split at ``sep`` outside single or double quotes; the quotes are removed."""
    items: list[str] = []
    buf: list[str] = []
    quote = ""
    for ch in text:
        if quote:
            if ch == quote:
                quote = ""
            else:
                buf.append(ch)
        elif ch in "\"'":
            quote = ch
        elif ch == sep:
            items.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
    if quote:
        raise ValueError(f"-v {text}: unbalanced quote")
    items.append("".join(buf))
    return items


_VAR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def parse_variables(
    values: Iterable[str], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``-v VAR=VAL[,VAR=VAL...]``; a bare ``VAR`` takes its value from the environment."""
    env = os.environ if environ is None else environ
    out: dict[str, str] = {}
    for value in values:
        for item in _split_unquoted(value):
            if not item.strip():
                continue
            name, eq, val = item.partition("=")
            name = name.strip()
            if not _VAR.match(name):
                raise ValueError(f"-v {value}: {name!r} is not a variable name")
            out[name] = val if eq else env.get(name, "")
    return out


def parse_hold_types(text: str) -> str:
    if not text or any(ch not in HOLD_TYPES for ch in text):
        raise ValueError(f"-h {text}: hold types are u, o and s (e.g. -h u or -h uos)")
    return "".join(ch for ch in HOLD_TYPES if ch in text)
