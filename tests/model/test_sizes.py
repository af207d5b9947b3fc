"""PBS sizes at their bounds, and what a refusal says."""

from __future__ import annotations

import pytest

from batchd.model.sizes import SIZE_MAX, SizeError, parse_size


def test_a_bare_prefix_is_bytes_and_words_are_eight_bytes() -> None:
    assert parse_size("4g") == parse_size("4gb") == 4 << 30
    assert parse_size("2KW") == 2 * 1024 * 8
    assert parse_size("3w") == 24


def test_the_largest_size_is_kept_and_one_more_is_refused() -> None:
    assert parse_size(str(SIZE_MAX)) == SIZE_MAX
    with pytest.raises(SizeError) as refused:
        parse_size(str(SIZE_MAX + 1))
    assert str(refused.value) == "'9223372036854775808' is too large (at most 9223372036854775807b)"
    with pytest.raises(SizeError) as refused:
        parse_size("8192pb")
    assert str(refused.value) == "'8192pb' is too large (at most 9223372036854775807b)"


def test_text_that_is_no_size_says_what_a_size_looks_like() -> None:
    with pytest.raises(SizeError) as refused:
        parse_size("4 gigs")
    assert str(refused.value) == (
        "'4 gigs' is not a size: give an integer with an optional unit b, kb, mb, gb, "
        "tb, pb (or w, kw, mw, ... for 8-byte words), e.g. 4gb"
    )
