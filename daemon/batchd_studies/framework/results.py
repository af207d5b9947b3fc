"""OUT/results.json: one entry per run, found again by the content of the run.

A run's key is the SHA-256 of its identity: the fields that determine its result
(the trace file's digest, the policy and its parameters, the machine size, the
shrink factor, ...) and the names the tables file it under, as canonical JSON.
An entry carries the same fields, so its key is computed from the entry itself:
a file written before keys existed is read and reused as it is, and an entry
made with other options never stands in for a run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from batchd.sweep.plan import content_key
from batchd_studies.framework import StudyError

RESULTS_FILE = "results.json"

Entry = dict[str, Any]
Identity = Mapping[str, Any]

# The digest of a run's identity: the sweep's, so that a run has one key everywhere.
run_key = content_key


def plain_json(value: Any) -> Any:
    """``json.dumps`` default for replay summaries: numpy scalars, sets and tuples."""
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if isinstance(value, set | tuple):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def as_plain(data: Any) -> Any:
    """``data`` as it reads back from JSON (numpy scalars to numbers, tuples to lists)."""
    return json.loads(json.dumps(data, default=plain_json))


@dataclass(frozen=True)
class ResultsFile:
    """A study's results file.

    ``identity`` gives an entry's identity (a ``KeyError`` when a field is
    missing), the same dict the run that made it gives; ``order`` sorts entries
    for writing; ``one_per_line`` writes one run a line instead of indented
    JSON.
    """

    path: Path
    identity: Callable[[Mapping[str, Any]], Identity]
    order: Callable[[Iterable[Entry]], list[Entry]] = list
    one_per_line: bool = False

    def key(self, entry: Mapping[str, Any]) -> str:
        return run_key(self.identity(entry))

    def load(self) -> dict[str, Entry]:
        """Key -> entry of every entry in the file (a later duplicate wins); {} without one."""
        if not self.path.is_file():
            return {}
        try:
            data = json.loads(self.path.read_text())
        except json.JSONDecodeError as exc:
            raise StudyError(f"{self.path}: not valid JSON ({exc}); remove it to replay") from None
        if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
            raise StudyError(f"{self.path}: expected a list of results; remove it to replay")
        try:
            return {self.key(entry): entry for entry in data}
        except KeyError as exc:
            raise StudyError(
                f"{self.path}: an entry lacks {exc}; remove the file to replay"
            ) from None

    def save(self, entries: Iterable[Entry]) -> None:
        """Write atomically and flushed to disk: a crash leaves the old file or the new one,
        and the run records combined into it may be removed once it is written."""
        ordered = self.order(entries)
        if not self.one_per_line:
            text = json.dumps(list(ordered), indent=1) + "\n"
        elif ordered:
            text = "[\n" + ",\n".join(json.dumps(e, separators=(",", ":")) for e in ordered)
            text += "\n]\n"
        else:
            text = "[]\n"
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        tmp.replace(self.path)
