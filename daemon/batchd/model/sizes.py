"""PBS sizes: ``4gb``, ``512mb``, ``1048576`` (bytes), ``2kw`` (words).

As PBS reads a ``size`` resource (``pbs_resources(7B)``): an integer and an
optional suffix, case-insensitive: ``b`` or ``w`` (a word is 8 bytes), with
``k``, ``m``, ``g``, ``t`` or ``p`` before it for powers of 1024. No suffix
means bytes. Sizes are shown in the largest unit that holds them exactly, as
``qstat`` and ``pbsnodes`` do (``4gb``, ``1536mb``, ``100b``).
"""

from __future__ import annotations

import re

WORD = 8
_SIZE = re.compile(r"^([0-9]+)([kmgtp]?)([bw]?)$", re.IGNORECASE)
_SHIFT = {"": 0, "k": 10, "m": 20, "g": 30, "t": 40, "p": 50}
UNITS = ("pb", "tb", "gb", "mb", "kb")
# The largest size batchd keeps: what SQLite's 64-bit integers hold.
SIZE_MAX = (1 << 63) - 1


class SizeError(ValueError):
    """Text that is not a PBS size; the message says what one looks like."""


def parse_size(text: str) -> int:
    """Bytes of a PBS size."""
    m = _SIZE.match(text.strip())
    if m is None:
        raise SizeError(
            f"{text!r} is not a size: give an integer with an optional unit b, kb, mb, gb, "
            "tb, pb (or w, kw, mw, ... for 8-byte words), e.g. 4gb"
        )
    prefix, unit = m.group(2).lower(), m.group(3).lower()
    value = int(m.group(1)) << _SHIFT[prefix]  # "4g", a bare prefix, is bytes as in PBS
    if unit == "w":
        value *= WORD
    if value > SIZE_MAX:
        raise SizeError(f"{text!r} is too large (at most {format_size(SIZE_MAX)})")
    return value


def format_size(value: int) -> str:
    """``4294967296`` -> ``4gb``; ``1610612736`` -> ``1536mb``; ``100`` -> ``100b``."""
    for i, unit in enumerate(UNITS):
        shift = 50 - 10 * i
        if value and value % (1 << shift) == 0:
            return f"{value >> shift}{unit}"
    return f"{value}b"
