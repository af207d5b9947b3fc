"""The building blocks of the API's JSON bodies: strict models, text, durations, times,
utility functions and speedup models, each with its check and its OpenAPI schema.

Request bodies are strict: a JSON number where an integer is due must be a
whole number (``4`` or ``4.0``, as JSON Schema counts integers; not ``true``,
``"4"`` or ``4.5``), a flag must be ``true`` or
``false``; only walltimes and durations also take ``HH:MM:SS`` strings. Text
fields refuse control characters (batchd.model.text), times lie in years
1970 to 9999, durations are at most 3650 days.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    WithJsonSchema,
)

from batchd.model.moldable import MoldError, Speedup
from batchd.model.text import REFUSED_CLASS, TEXT_PATTERN, check_text
from batchd.model.times import MAX_DURATION, TIME_MAX, TIME_MIN, plausible_time, positive_duration
from batchd.model.utility import Utility, UtilityError


def _text(value: Any) -> Any:
    return check_text(value) if isinstance(value, str) else value


# Any text a request stores: refused if it holds a control character (checked first,
# so that the message says so even where a pattern would refuse the text too). The
# document shows the same rule as a pattern.
Text = Annotated[str, BeforeValidator(_text), Field(json_schema_extra={"pattern": TEXT_PATTERN})]

# -v variables and policy parameters: text keys to text values.
TextMap = Annotated[
    dict[Text, Text],
    WithJsonSchema(
        {
            "type": "object",
            "propertyNames": {"pattern": TEXT_PATTERN},
            "additionalProperties": {"type": "string", "pattern": TEXT_PATTERN},
        }
    ),
]

# A job name: no white space, '@' or ':' (PBS), and no control character.
JOB_NAME_PATTERN = r"^[^\s@:]+$"
ITEM = r"[0-9]{1,7}(-[0-9]{1,7}(:[0-9]{1,7})?)?"
ARRAY_RANGE_PATTERN = rf"^{ITEM}(,{ITEM})*$"
JOB_NAME_DOC_PATTERN = rf"^[^\s@:{REFUSED_CLASS}]+$"
# qsub -m: n, or letters of abej but j alone; -M: addresses, comma-separated.
MAIL_POINTS = r"^(n|[abe]|[abej]{2,})$"
MAIL_USERS = r"^[^\s,]+(,[^\s,]+)*$"
MAIL_USERS_DOC = rf"^[^\s,{REFUSED_CLASS}]+(,[^\s,{REFUSED_CLASS}]+)*$"

# A time (seconds since the epoch) in years 1970 to 9999.
Time = Annotated[
    int,
    AfterValidator(plausible_time),
    Field(json_schema_extra={"minimum": TIME_MIN, "maximum": TIME_MAX}),
]

# A duration: positive integer seconds up to 3650 days, or [[HH:]MM:]SS text with at
# most four digits of hours or minutes (so that every such text is in range).
DURATION_PATTERN = r"^([0-9]{1,4}:[0-5][0-9]:[0-5][0-9]|[0-9]{1,4}:[0-5][0-9]|[0-9]{1,8})$"
_DURATION = re.compile(DURATION_PATTERN)
Duration = Annotated[
    int,
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer", "minimum": 1, "maximum": MAX_DURATION},
                {"type": "string", "pattern": DURATION_PATTERN, "not": {"pattern": "^[0:]*$"}},
            ]
        }
    ),
]


# A utility function (Lee's utility paper): [seconds since submission, value] points. The document
# says the shape; the rules between points (first time 0, times strictly increasing,
# values never increasing) are a 400 naming the rule and the point.
UTILITY_MAX_POINTS = 1000
UTILITY_DOC = (
    "utility function: [seconds since submission, value] points, at least two; the "
    "first time 0, times strictly increasing, values never increasing and never "
    "negative, linear in between, 0 after the last point (a 400 names a point that "
    "breaks a rule)"
)


def _utility(value: Any) -> list[list[float]]:
    if not isinstance(value, list) or not all(
        isinstance(p, list)
        and len(p) == 2
        and all(isinstance(x, int | float) and not isinstance(x, bool) for x in p)
        for p in value
    ):
        raise ValueError("give a list of [seconds, value] pairs of numbers")
    if len(value) > UTILITY_MAX_POINTS:
        raise ValueError(f"at most {UTILITY_MAX_POINTS} points")
    try:
        points = [(float(t), float(v)) for t, v in value]
    except OverflowError:
        raise ValueError("a time or value is too large") from None
    try:
        util = Utility(points)
    except UtilityError as exc:
        raise ValueError(str(exc)) from None
    return [[t, v] for t, v in util.points]


UtilityPoints = Annotated[
    list[list[float]],
    PlainValidator(_utility),
    WithJsonSchema(
        {
            "type": "array",
            "minItems": 2,
            "maxItems": UTILITY_MAX_POINTS,
            "items": {
                "type": "array",
                "minItems": 2,
                "maxItems": 2,
                "items": {"type": "number", "minimum": 0},
            },
        }
    ),
]


# A moldable job's speedup model (Sabin et al.'s moldable paper): the model's own rules first (a 400 naming
# the rule: A below 1), then the pattern, which says them too (A has no leading zero).
_DECIMAL = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
SPEEDUP_PATTERN = rf"^(?:fixed|downey:[1-9][0-9]*(?:\.[0-9]*)?:{_DECIMAL})$"
SPEEDUP_MAX_LENGTH = 64
_SPEEDUP = re.compile(SPEEDUP_PATTERN)
SPEEDUP_DOC = (
    "-W speedup=: how a moldable job's runtime depends on its width: downey:A:SIGMA "
    "(Downey's speedup, A >= 1 the average parallelism, SIGMA >= 0 its variance) or fixed "
    "(the same runtime at every width); fixed if unset"
)


def _speedup(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("give downey:A:SIGMA or fixed")
    if len(value) > SPEEDUP_MAX_LENGTH:
        raise ValueError(f"{value[:20]!r}...: at most {SPEEDUP_MAX_LENGTH} characters")
    try:
        model = Speedup.parse(value)
    except MoldError as exc:
        raise ValueError(str(exc)) from None
    if not _SPEEDUP.match(value):
        raise ValueError(
            f"{value!r}: give downey:A:SIGMA (decimal numbers, A without a leading zero, "
            "nothing around it) or fixed"
        )
    return model.format()


SpeedupText = Annotated[
    str,
    PlainValidator(_speedup),
    WithJsonSchema({"type": "string", "pattern": SPEEDUP_PATTERN, "maxLength": SPEEDUP_MAX_LENGTH}),
]
NODES_MAX_DOC = (
    "-l nodes=MIN-MAX: a moldable job's widest width (nodes is then the narrowest, the "
    "width its walltime and BATCHD_RUNTIME are for); the scheduler chooses its width"
)


def api_duration(value: Any, what: str) -> int | None:
    """A duration as the document describes it; the text form only as its pattern says."""
    seconds = positive_duration(value, what)
    if isinstance(value, str) and not _DURATION.fullmatch(value):
        raise ValueError(
            f"{value!r} is not a duration as the API takes it: seconds (at most 8 digits) "
            "or [[HH:]MM:]SS with at most 4 digits of hours or minutes, nothing around it"
        )
    return seconds


def _start(value: Any) -> int | str:
    if value in ("now", "asap") and isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return plausible_time(value)
    raise ValueError("expected a time (seconds since the epoch), 'now' or 'asap'")


# A reservation's start: one validator, so that a refusal names the field alone.
Start = Annotated[
    int | str,
    PlainValidator(
        _start,
        json_schema_input_type=Annotated[int, Field(ge=TIME_MIN, le=TIME_MAX)]
        | Literal["now", "asap"],
    ),
]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ErrorOut(Strict):
    error: str = Field(description="machine-readable code, e.g. bad_request, forbidden")
    message: str = Field(description="what was wrong and how to fix it")


# -- jobs ----------------------------------------------------------------------
