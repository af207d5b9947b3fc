import re

from batchd.model.text import TEXT_PATTERN, check_text, refused_char


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
