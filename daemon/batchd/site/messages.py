"""The messages of a configuration file that cannot be used: file, key, what is wrong.

A message quotes the file's content (a value, an unknown key, a line of it) only
when the file may be quoted (``batchd.model.small_files.may_quote``); otherwise it
names the file, the key or line and column, and what kind of thing is wrong.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import tomllib
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

_QUOTE_CHARS = 60

# What each of pydantic's type errors expected, in TOML's words.
_EXPECTED = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "a boolean (true or false)",
    "bool_parsing": "a boolean (true or false)",
    "string_type": "a string",
    "list_type": "an array",
    "dict_type": "a table",
    "model_type": "a table",
    "model_attributes_type": "a table",
}
# The names pydantic gives the members of a union in an error's location.
_UNION_TAGS = frozenset({"int", "str", "bool", "float", "list[str]", "none"})
_TOML_WHERE = re.compile(r"\((at line \d+, column \d+|at end of document)\)$")


def where(loc: tuple[int | str, ...]) -> str:
    """A key path as the file writes it: ``machine[0].nodes``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not part.isprintable():  # a key with a control character: shown escaped
            out += f"[{part!r}]"
        else:
            out += f".{part}" if out else part
    return out or "(top level)"


def _quote(text: str) -> str:
    shown = json.dumps(text[:_QUOTE_CHARS], ensure_ascii=False)
    return shown[:-1] + '..."' if len(text) > _QUOTE_CHARS else shown


def toml_value(value: Any, quotable: bool) -> str:
    """A value read from TOML, by its TOML type, with the value itself when quotable."""
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}" if quotable else "a boolean"
    if isinstance(value, int):
        return f"the integer {value}" if quotable else "an integer"
    if isinstance(value, float):
        return f"the float {value!r}" if quotable else "a float"
    if isinstance(value, str):
        return f"the string {_quote(value)}" if quotable else "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return "a date or time"
    return type(value).__name__


def _shown_input(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _QUOTE_CHARS else text[:_QUOTE_CHARS] + "..."


def _known_prefix(loc: tuple[int | str, ...], known: frozenset[str]) -> tuple[int | str, ...]:
    """The location up to its first key that is not a field name (file content)."""
    for i, part in enumerate(loc):
        if isinstance(part, str) and part not in known:
            return loc[:i]
    return loc


def _union(errors: list[ErrorDetails]) -> list[ErrorDetails]:
    """The first error's group when it failed every member of a union, else it alone."""
    first = errors[0]
    loc = first["loc"]
    if not loc or loc[-1] not in _UNION_TAGS:
        return [first]
    return [
        e for e in errors if e["loc"][:-1] == loc[:-1] and e["loc"] and e["loc"][-1] in _UNION_TAGS
    ]


def validation_message(exc: ValidationError, quotable: bool, known: frozenset[str]) -> str:
    """``KEY: what is wrong`` for the first error; ``known``: the models' field names."""
    errors = exc.errors()
    group = _union(errors)
    first = group[0]
    loc = first["loc"][:-1] if len(group) > 1 else first["loc"]
    key = where(loc if quotable else _known_prefix(loc, known))
    if all(e["type"] in _EXPECTED for e in group):
        kinds = list(dict.fromkeys(_EXPECTED[e["type"]] for e in group))
        expected = " or ".join([", ".join(kinds[:-1]), kinds[-1]] if len(kinds) > 1 else kinds)
        return f"{key}: expected {expected}, got {toml_value(first['input'], quotable)}"
    if first["type"] == "extra_forbidden":
        return (
            f"{key}: not a key of this table" if quotable else f"{key}: has a key it may not have"
        )
    if first["type"] == "missing":
        return f"{key}: {first['msg']}"
    if not quotable:
        # pydantic's own rules name the rule, not the value; ours may quote the value
        if first["type"] in ("value_error", "assertion_error"):
            return f"{key}: not an allowed value"
        return f"{key}: {first['msg']}"
    msg = first["msg"].removeprefix("Value error, ")
    return f"{key}: {msg} (got {_shown_input(first['input'])})"


def toml_message(exc: tomllib.TOMLDecodeError, quotable: bool) -> str:
    """tomllib's message (it may quote a character of the file), or only where it is."""
    text = str(exc)
    if quotable:
        return text
    found = _TOML_WHERE.search(text)
    return found.group(1) if found else "somewhere in the file"
