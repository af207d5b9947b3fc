"""OUT/runs/KEY.json: one finished run each, written as it finishes.

A record is written to a temporary file in the same directory, flushed to disk
and renamed over its name, so a crash leaves either the whole record or none
(never half of one) and never touches the records already there. A sweep (or a
study of ``batchd report``) that starts again reads the records of its keys and
runs only the others; records of other keys (another experiment in the same
directory) are left alone. Each key is written once: a run a lost worker's retry
finishes twice is recorded once. Processes that store different keys in the same
directory at once (the shards of an array job) never write the same file.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from batchd.sweep import SweepError

RUNS_DIR = "runs"

Record = dict[str, Any]  # plain JSON data with the run's "key"


class RunStore:
    def __init__(self, out: Path) -> None:
        self.folder = out / RUNS_DIR
        self.written = 0  # records this process wrote

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def has(self, key: str) -> bool:
        return self.path(key).is_file()

    def done(self, keys: Iterable[str]) -> set[str]:
        """The keys among ``keys`` with a record."""
        return self.all_keys().intersection(keys)

    def put(self, record: Record) -> bool:
        """Store a finished run's record unless its key has one; True if written now."""
        key = str(record["key"])
        target = self.path(key)
        if target.is_file():
            return False
        self.folder.mkdir(parents=True, exist_ok=True)
        part = self.folder / f".{key}.{os.getpid()}.part"
        with open(part, "w", encoding="utf-8") as f:
            json.dump(record, f, separators=(",", ":"), allow_nan=True)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        part.replace(target)
        self.written += 1
        return True

    def get(self, key: str) -> Record:
        path = self.path(key)
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise SweepError(
                f"{path}: cannot read this run's record ({exc}); remove it to rerun the run"
            ) from None
        if not isinstance(record, dict) or record.get("key") != key:
            raise SweepError(f"{path}: not the record of run {key}; remove it to rerun the run")
        return record

    def remove(self, keys: Iterable[str]) -> int:
        """Delete the records of ``keys`` (the folder too, once empty); how many went."""
        removed = 0
        for key in keys:
            try:
                self.path(key).unlink()
            except FileNotFoundError:
                continue
            removed += 1
        with contextlib.suppress(OSError):  # other records (or no folder) stay as they are
            self.folder.rmdir()
        return removed

    def all_keys(self) -> set[str]:
        """Every key with a record."""
        if not self.folder.is_dir():
            return set()
        return {p.name.removesuffix(".json") for p in self.folder.glob("*.json")}
