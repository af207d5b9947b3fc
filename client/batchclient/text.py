"""Text for a terminal: unprintable characters escaped, widths counted in columns.

The daemon refuses control characters, but a name can still reach the client
with one (an older state file, another server): printed raw, an escape
sequence would act on the terminal and a newline would split a row. Every
name, value and message the commands print goes through :func:`escape`:
a character that ``str.isprintable()`` refuses (controls, format and
bidirectional characters, separators other than the space, unassigned code
points) is shown as a Python-style escape: ``\\n``, ``\\r``, ``\\t``, else
``\\xHH``, ``\\uHHHH`` or ``\\UHHHHHHHH``. Backslashes are shown as they are.

Columns are counted as a terminal shows them: East Asian wide and fullwidth
characters take two, combining marks none (``unicodedata``, no wcwidth
table), so that wide names do not push the columns after them.
"""

from __future__ import annotations

import re
import unicodedata

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(ch: str) -> str:
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def escape(text: object) -> str:
    """``text`` with every unprintable character escaped (printable text is unchanged)."""
    s = str(text)
    if s.isprintable():
        return s
    return "".join(ch if ch.isprintable() else _escape_char(ch) for ch in s)


_REFUSED = frozenset({"Cc", "Cs", "Zl", "Zp"})
_BIDI = frozenset({0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)})


def sendable(text: str) -> bool:
    """Whether the daemon takes ``text`` (no control, separator or bidirectional
    formatting character: batchd.model.text, which the client does not import)."""
    if text.isprintable():
        return True
    return not any(unicodedata.category(c) in _REFUSED or ord(c) in _BIDI for c in text)


def char_width(ch: str) -> int:
    """Terminal columns of one printable character: 0, 1 or 2."""
    if ch < "\u0300":  # Latin and the like: one column, the common case
        return 1
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def width(text: str) -> int:
    """Terminal columns of printable ``text``."""
    if text.isascii():
        return len(text)
    return sum(char_width(ch) for ch in text)


def cut(text: str, cols: int) -> str:
    """The longest start of printable ``text`` that takes at most ``cols`` columns."""
    if width(text) <= cols:
        return text
    used = 0
    for i, ch in enumerate(text):
        used += char_width(ch)
        if used > cols:
            return text[:i]
    return text


def fit(text: object, cols: int) -> str:
    """Escaped ``text`` in at most ``cols`` columns: cut to ``cols``-1 plus ``*`` if longer."""
    s = escape(text)
    if width(s) <= cols:
        return s
    return cut(s, cols - 1) + "*"


def pad(text: str, cols: int, right: bool = False) -> str:
    """Printable ``text`` padded with blanks to ``cols`` columns (on the left if ``right``)."""
    fill = " " * max(0, cols - width(text))
    return fill + text if right else text + fill


def cell(text: object, cols: int, right: bool = False) -> str:
    """A table cell: ``text`` escaped, fitted and padded to exactly ``cols`` columns."""
    return pad(fit(text, cols), cols, right)


# JSON escapes the C0 controls itself; with ensure_ascii=False it leaves DEL, the C1
# controls, separators and format characters raw.
_NOT_ASCII_TEXT = re.compile(r"[^\n\x20-\x7e]")


def json_safe(dumped: str) -> str:
    """JSON text with every unprintable character inside its strings as a ``\\u`` escape."""

    def sub(m: re.Match[str]) -> str:
        ch = m.group()
        if ch.isprintable():
            return ch
        return "".join(f"\\u{u:04x}" for u in _utf16(ch))

    return _NOT_ASCII_TEXT.sub(sub, dumped)


def _utf16(ch: str) -> list[int]:
    code = ord(ch)
    if code <= 0xFFFF:
        return [code]
    code -= 0x10000
    return [0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)]
