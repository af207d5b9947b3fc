import re

import pytest

from batchd.model.text import TEXT_PATTERN, check_text, describe_char, refused_char


def test_the_documented_pattern_refuses_exactly_what_the_api_refuses() -> None:
    # The OpenAPI document describes text fields by TEXT_PATTERN; the server checks
    # them with refused_char. The two must agree on every Unicode scalar value; lone
    # surrogates, which are none, are refused though the pattern cannot say so.
    pattern = re.compile(TEXT_PATTERN)
    surrogates = range(0xD800, 0xE000)
    disagree = [
        f"U+{c:04X}"
        for c in range(0x110000)
        if c not in surrogates
        and (pattern.fullmatch(chr(c)) is None) != (refused_char(chr(c)) is not None)
    ]
    assert disagree == []
    assert all(refused_char(chr(c)) is not None for c in surrogates)


def test_refused_characters_are_named() -> None:
    assert refused_char("job\x1b[31m") == "\x1b"
    assert refused_char("naïve-名前") is None
    try:
        check_text("a\nb")
    except ValueError as exc:
        assert str(exc).startswith("U+000A (newline) is not allowed")
    else:
        raise AssertionError("a newline was accepted")


def test_a_character_is_named_by_its_short_name_unicode_name_or_kind() -> None:
    assert describe_char("\x07") == "U+0007 (bell)"
    assert describe_char("\u202e") == "U+202E (right-to-left override)"
    assert describe_char("\x85") == "U+0085 (control character)"  # a C1 control: no name
    assert describe_char("\ud800") == "U+D800 (format character)"  # a lone surrogate


def test_a_refusal_says_what_and_why_and_text_passes_unchanged() -> None:
    assert check_text("naïve-名前") == "naïve-名前"
    with pytest.raises(ValueError) as refused:
        check_text("a\x00b")
    assert str(refused.value) == (
        "U+0000 (nul) is not allowed: control characters (newline, tab, escape, NUL, ...) "
        "would reach terminals raw"
    )
