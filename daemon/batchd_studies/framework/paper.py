"""The seed papers' own numbers: a ``paper.json`` shipped beside each study that prints them.

A study reads its file once, through ``paper_data``, in its own ``paper`` module, which
turns it into the shapes its tables use. A key the study needs and the file lacks is
an error naming the file and the key.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources
from typing import Any

from batchd_studies.framework import StudyError

PAPER_FILE = "paper.json"


def paper_data(package: str) -> dict[str, Any]:
    """The JSON object of ``package``'s paper.json."""
    where = f"{package}/{PAPER_FILE}"
    try:
        text = resources.files(package).joinpath(PAPER_FILE).read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, json.JSONDecodeError) as exc:
        raise StudyError(f"{where}: the paper's numbers cannot be read ({exc})") from None
    if not isinstance(data, dict):
        raise StudyError(f"{where}: expected a JSON object")
    return data


def section(data: Mapping[str, Any], key: str, package: str) -> Any:
    """``data[key]``; a missing key is an error naming the file and the key."""
    try:
        return data[key]
    except KeyError:
        raise StudyError(f"{package}/{PAPER_FILE}: no {key!r}") from None
