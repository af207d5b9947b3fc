"""Checks of job attributes given on the command line, done before anything is sent."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

JOB_ID = re.compile(r"^\d+(?:\.[A-Za-z0-9_.-]+)?$")
_NAME = re.compile(r"^[^\s@:]+$")
NAME_MAX = 236
DEPEND_TYPES = ("afterok", "afternotok", "afterany")
HOLD_TYPES = "uos"
PRIORITY_MIN, PRIORITY_MAX = -1024, 1023


def is_job_id(text: str) -> bool:
    """``12`` or ``12.server``."""
    return bool(JOB_ID.match(text))


def check_job_id(text: str) -> str:
    if not is_job_id(text):
        raise ValueError(f"illegally formed job identifier: {text}")
    return text


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


def parse_w(values: Iterable[str]) -> str | None:
    """``-W depend=...`` (the only -W attribute batchd has); the last one wins."""
    depend = None
    for value in values:
        name, eq, rest = value.partition("=")
        if name.strip() != "depend" or not eq:
            raise ValueError(f"-W {value}: batchd supports only -W depend=TYPE:ID[:ID...]")
        try:
            depend = parse_depend(rest.strip())
        except ValueError as exc:
            raise ValueError(f"-W {exc}") from None
    return depend


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
