"""Who made a report: the command, the date, the machine, the runs; kept in OUT/study.json."""

from __future__ import annotations

import json
import os
import platform
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from batchd_studies.framework.cli import invoked_command

if TYPE_CHECKING:
    from batchd_studies.framework.runs import Runs

META_FILE = "study.json"  # command, date and wall time of the last invocation that replayed


def now() -> str:
    """The date line of a report."""
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def started() -> float:
    return time.perf_counter()


def elapsed(since: float) -> float:
    """Study wall time since ``started()``."""
    return time.perf_counter() - since


def study_meta(command: str, runs: Runs[Any]) -> dict[str, Any]:
    """The facts of this invocation; ``command`` is every option spelled out.

    ``collected``: runs of ``reused`` taken from records in OUT/runs, replayed by shards
    (``--shard I/N``) or by an invocation that was stopped. A study adds its own options
    and sets ``seconds`` when its runs are done.
    """
    from batchd import __version__

    return {
        "command": invoked_command() or command,
        "options": command,
        "date": now(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "batchd": __version__,
        "workers": runs.workers,
        "new": runs.new,
        "reused": runs.reused,
        "collected": runs.collected,
    }


def save_meta(path: Path, meta: dict[str, Any]) -> None:
    path.write_text(json.dumps(meta, indent=1) + "\n")


def previous_meta(path: Path) -> dict[str, Any] | None:
    """The meta data of the last invocation that replayed something, if recorded."""
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) and "command" in data else None


def record_invocation(meta: dict[str, Any], out: Path, replayed: bool) -> None:
    """Keep ``meta`` in OUT/study.json when this invocation replayed or collected runs;
    otherwise note in it, as ``replayed_by``, the invocation that last did."""
    path = out / META_FILE
    if replayed:
        save_meta(path, meta)
    else:
        meta["replayed_by"] = previous_meta(path)
