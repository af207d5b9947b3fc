"""Text that may reach an operator's terminal: names, variables, comments.

A control character in a job name or a ``-v`` value would be printed as is by
``qstat`` and could move the cursor, ring the bell, split a row or change the
terminal's colours. The API refuses them; the client escapes anything
unprintable that reaches it anyway (from an older state file, say).

Refused: the C0 and C1 controls and DEL (Unicode category Cc, which includes
tab, newline and NUL), lone surrogates (Cs), the line and paragraph separators
(Zl, Zp), and the bidirectional formatting characters that reorder what a
terminal shows (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069).
"""

from __future__ import annotations

import unicodedata

_REFUSED_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})
_BIDI = frozenset({0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)})
# The same set as a regular-expression class, for the OpenAPI document's patterns (a
# test checks the two agree on every code point). Lone surrogates are left out: they
# are no Unicode text, JSON Schema validators cannot name them in a pattern, and JSON
# carries them only as \u escapes, which the API refuses all the same.
REFUSED_CLASS = r"\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
TEXT_PATTERN = f"^[^{REFUSED_CLASS}]*$"
_NAMES = {
    0x00: "NUL",
    0x07: "bell",
    0x08: "backspace",
    0x09: "tab",
    0x0A: "newline",
    0x0D: "carriage return",
    0x1B: "escape",
    0x7F: "delete",
}


def refused_char(text: str) -> str | None:
    """The first character of ``text`` the API refuses, or None."""
    if text.isprintable():  # the common case, in C: nothing below is refused by it
        return None
    for ch in text:
        if unicodedata.category(ch) in _REFUSED_CATEGORIES or ord(ch) in _BIDI:
            return ch
    return None


def describe_char(ch: str) -> str:
    """``U+001B (escape)``: a character named so that it can be read."""
    code = ord(ch)
    name = _NAMES.get(code)
    if name is None:
        name = unicodedata.name(ch, "control character" if code < 0xA0 else "format character")
    return f"U+{code:04X} ({name.lower()})"


def check_text(value: str) -> str:
    """``value`` unchanged, or ValueError naming the first refused character."""
    ch = refused_char(value)
    if ch is not None:
        raise ValueError(
            f"{describe_char(ch)} is not allowed: control characters (newline, tab, escape, "
            "NUL, ...) would reach terminals raw"
        )
    return value
