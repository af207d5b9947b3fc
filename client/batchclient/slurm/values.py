"""The values of sbatch's options, read and checked: each error names the option."""

from __future__ import annotations

import argparse
import math
import re
from dataclasses import dataclass

from ..hints import Any
from .times import parse_duration, parse_time

_SIZE = re.compile(r"^(\d+)([KMGT]?)B?$", re.IGNORECASE)
_UNIT_MB = {"K": 1 / 1024, "": 1, "M": 1, "G": 1024, "T": 1024 * 1024}
_NODES = re.compile(r"^(\d+)(?:-(\d+))?$")
_ARRAY_ITEM = re.compile(r"^(\d+)(?:-(\d+)(?::(\d+))?)?$")
_DEP_ID = re.compile(r"^(\d+)(?:_(\d+))?$")
_NAME = re.compile(r"^[^\s@:]+$")
NAME_MAX = 236
DEPEND_TYPES = ("after", "afterok", "afternotok", "afterany")
ARRAY_MAX_INDEX = 1048575
PRIORITY_MIN, PRIORITY_MAX = -1024, 1023


def count(option: str, text: str) -> int:
    """A positive integer (``-n``, ``-c``, ``--ntasks-per-node``)."""
    if not text.strip().isdigit() or int(text) < 1:
        raise ValueError(f'Invalid numeric value "{text}" for {option}')
    return int(text)


def node_range(text: str) -> tuple[int, int | None]:
    """``-N N`` -> (N, None); ``-N MIN-MAX`` -> (MIN, MAX), a moldable job."""
    m = _NODES.match(text.strip())
    if m is None or int(m.group(1)) < 1:
        raise ValueError(f'Invalid node count specification "{text}" for --nodes (N or MIN-MAX)')
    low, high = int(m.group(1)), m.group(2)
    if high is None or int(high) == low:
        return low, None
    if int(high) < low:
        raise ValueError(f"--nodes={text}: the maximum {high} is below the minimum {low}")
    return low, int(high)


def megabytes(option: str, text: str) -> int:
    """``--mem``/``--mem-per-cpu``: MB by default, K, M, G or T suffixes (Slurm's)."""
    m = _SIZE.match(text.strip())
    if m is None:
        raise ValueError(f"Invalid {option} specification {text!r} (SIZE[K|M|G|T], MB by default)")
    return math.ceil(int(m.group(1)) * _UNIT_MB[m.group(2).upper()])


def job_name(text: str) -> str:
    if not _NAME.match(text) or len(text) > NAME_MAX:
        raise ValueError(
            f"--job-name={text!r}: batchd's job names have no blanks, '@' or ':' and at most "
            f"{NAME_MAX} characters"
        )
    return text


def time_limit(text: str) -> int | None:
    """Seconds; None for UNLIMITED."""
    try:
        seconds = parse_duration(text)
    except ValueError:
        raise ValueError(f'Invalid time limit specification "{text}" for --time') from None
    if seconds is not None and seconds <= 0:
        raise ValueError(f'Invalid time limit specification "{text}" for --time (must be positive)')
    return seconds


def nice(text: str) -> int:
    """``--nice=N`` -> batchd's priority (-N, within -1024..1023)."""
    try:
        value = int(text.strip())
    except ValueError:
        raise ValueError(f'Invalid --nice value "{text}": an integer') from None
    return max(PRIORITY_MIN, min(PRIORITY_MAX, -value))


@dataclass(frozen=True)
class WarnSignal:
    number: int
    before: int  # seconds before the time limit
    script: bool  # B: the batch script alone (else every process of the job but it)


def warn_signal(text: str) -> WarnSignal:
    """``--signal=[B:]SIG[@SECONDS]``: SIG by name (``USR2``, ``SIGUSR2``) or number,
    SECONDS before the time limit (default 60, at most 65535), as sbatch reads it."""
    import signal as signals

    bad = f"Invalid --signal specification: {text}"
    rest = text.strip()
    script = False
    if rest[:2].upper() == "B:":
        script, rest = True, rest[2:]
    elif rest[:2].upper() == "R:":
        raise ValueError(f"--signal={text}: R: (reservations with MaxStartDelay) is not supported")
    name, at, when = rest.partition("@")
    if name.isdigit():
        number = int(name)
    else:
        upper = name.upper()
        upper = upper if upper.startswith("SIG") else "SIG" + upper
        member = getattr(signals.Signals, upper, None) if upper.isalnum() else None
        if member is None:
            raise ValueError(bad)
        number = int(member)
    if not 1 <= number <= 64:
        raise ValueError(bad)
    before = 60
    if at:
        if not when.isdigit() or int(when) > 65535:
            raise ValueError(bad)
        before = int(when)
    return WarnSignal(number, before, script)


def open_mode(text: str) -> str:
    mode = text.strip().lower()
    if mode not in ("append", "truncate"):
        raise ValueError(f'Invalid --open-mode "{text}": append or truncate')
    return mode


@dataclass(frozen=True)
class ArraySpec:
    span: str  # the API's array_indices: "X-Y[:Z]", or a list "1,3,5-7"
    max_running: int | None


def array(text: str) -> ArraySpec:
    """``--array=A-B[:S][%M]`` or a list (``1,3,5-7``, a single ``5``): one range with one
    step goes as the daemon's ``A-B[:S]``, anything else as a list of indices and runs."""
    spec, pct, limit = text.strip().partition("%")
    bad = f'Invalid job array specification "{text}"'
    if pct and (not limit.isdigit() or int(limit) < 1):
        raise ValueError(f"{bad}: %M takes a positive number of tasks")
    indices: set[int] = set()
    for item in spec.split(","):
        m = _ARRAY_ITEM.match(item.strip())
        if m is None:
            raise ValueError(f"{bad}: give A-B[:S][%M] or a list of indices and ranges")
        low = int(m.group(1))
        high = int(m.group(2)) if m.group(2) is not None else low
        step = int(m.group(3)) if m.group(3) is not None else 1
        if high < low or step < 1 or high > ARRAY_MAX_INDEX:
            raise ValueError(f"{bad}: ranges run upwards, steps are at least 1, indices at most "
                             f"{ARRAY_MAX_INDEX}")  # fmt: skip
        indices.update(range(low, high + 1, step))
    ordered = sorted(indices)
    steps = {b - a for a, b in zip(ordered, ordered[1:], strict=False)}
    max_running = int(limit) if pct else None
    if len(ordered) >= 2 and len(steps) == 1:
        first, last, (step,) = ordered[0], ordered[-1], steps
        return ArraySpec(f"{first}-{last}" + (f":{step}" if step != 1 else ""), max_running)
    return ArraySpec(_runs(ordered), max_running)


def _runs(ordered: list[int]) -> str:
    """Sorted indices as a list of runs: ``1,3,5-7``."""
    parts: list[str] = []
    start = prev = ordered[0]
    for i in [*ordered[1:], None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if i is not None:
            start = prev = i
    return ",".join(parts)


@dataclass(frozen=True)
class Dependency:
    kind: str
    ids: tuple[tuple[int, int | None], ...]  # (job, array task or None)


def dependency(text: str) -> list[Dependency]:
    """``TYPE:ID[:ID...][,TYPE:ID...]`` and ``singleton``; ``?`` (any of) is refused."""
    if "?" in text:
        raise ValueError(
            f"--dependency={text}: batchd needs every dependency satisfied (','); '?' (any one "
            "of them) is not supported"
        )
    out: list[Dependency] = []
    for part in text.split(","):
        kind, _, rest = part.strip().partition(":")
        if kind == "singleton" and not rest:
            out.append(Dependency("singleton", ()))
            continue
        if kind not in DEPEND_TYPES:
            raise ValueError(
                f"--dependency={text}: {kind!r}: batchd knows {', '.join(DEPEND_TYPES)} and "
                "singleton"
            )
        ids: list[tuple[int, int | None]] = []
        for word in rest.split(":"):
            m = _DEP_ID.match(word)
            if m is None:
                raise ValueError(f"--dependency={text}: {word!r} is not a job id (12 or 12_3)")
            ids.append((int(m.group(1)), int(m.group(2)) if m.group(2) is not None else None))
        out.append(Dependency(kind, tuple(ids)))
    return out


def begin(text: str) -> None:
    """``--begin``: checked for its form here (it is read against batchd's clock later)."""
    try:
        parse_time(text, 0)
    except ValueError:
        raise ValueError(f'Invalid time specification "{text}" for --begin') from None


def exclusive(text: str) -> None:
    if text not in ("exclusive", "user", "mcs"):
        raise ValueError(f"--exclusive={text}: give --exclusive alone (user and mcs: the same)")


def export(text: str) -> tuple[str, dict[str, str | None]]:
    """``--export``: ("ALL" | "NONE" | "LIST", {VAR: value or None for the environment's})."""
    words = [w.strip() for w in text.split(",") if w.strip()]
    if not words:
        raise ValueError("--export: give ALL, NONE or VAR[=VALUE],...")
    mode = "LIST"
    named: dict[str, str | None] = {}
    for word in words:
        if word.upper() in ("ALL", "NONE"):
            mode = word.upper()
            continue
        name, eq, value = word.partition("=")
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
            raise ValueError(f"--export={text}: {name!r} is not a variable name")
        named[name] = value if eq else None
    if mode == "NONE" and named:
        raise ValueError(f"--export={text}: NONE takes no variables")
    return mode, named


def check_values(ns: argparse.Namespace) -> None:
    """Every value ``ns`` sets, checked (ValueError naming the option)."""
    checks: dict[str, Any] = {
        "job_name": job_name,
        "nodes": node_range,
        "ntasks": lambda v: count("--ntasks", v),
        "ntasks_per_node": lambda v: count("--ntasks-per-node", v),
        "cpus_per_task": lambda v: count("--cpus-per-task", v),
        "mem": lambda v: megabytes("--mem", v),
        "mem_per_cpu": lambda v: megabytes("--mem-per-cpu", v),
        "time": time_limit,
        "nice": nice,
        "array": array,
        "dependency": dependency,
        "begin": begin,
        "exclusive": exclusive,
        "export": export,
        "signal": warn_signal,
        "open_mode": open_mode,
    }
    for key, check in checks.items():
        value = getattr(ns, key, None)
        if value is not None:
            check(value)
    if getattr(ns, "mem", None) is not None and getattr(ns, "mem_per_cpu", None) is not None:
        raise ValueError("--mem and --mem-per-cpu are mutually exclusive")
