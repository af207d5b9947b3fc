"""What of a job a caller is shown: a job of another user only when it may see it
(``query_other_jobs``), and its variables only to its owner, operators and managers."""

from __future__ import annotations

import json
from typing import Any

from batchd.server.service.access import Caller


def shown(caller: Caller, view: dict[str, Any]) -> dict[str, Any]:
    """A job's view (``JobOut``) as ``caller`` may see it: without its variables unless
    it owns the job or is an operator or manager."""
    if "variables" in view and not caller.sees_variables(view["owner"]):
        view = {**view, "variables": {}}
    return view


def shown_text(caller: Caller, text: str) -> str:
    """A view saved as JSON, as ``caller`` may see it (the text itself when unchanged)."""
    if caller.at_least("operator") or '"variables":{}' in text:
        return text
    view = json.loads(text)
    hidden = shown(caller, view)
    return text if hidden is view else json.dumps(hidden, separators=(",", ":"))
