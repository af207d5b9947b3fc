"""What a study has stored: OUT/results.json, and OUT/runs/KEY.json for runs not in it yet.

A run is stored as a record in OUT/runs the moment it finishes (``batchd.sweep.store``,
the sweep's store: written once, atomically, KEY the run's key), so a study stopped any
way loses no finished run, and the shards of an array job, each storing its own keys,
never write the same file. A pass that writes the study's outputs (one without
``--shard``, or ``--collect``) combines the records into results.json, the study's
combined results, and then removes them: a finished study's folder holds results.json
alone. A run with an entry in either place is not replayed again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from batchd.sweep.store import RunStore
from batchd_studies.framework import StudyError
from batchd_studies.framework.results import Entry, ResultsFile


@dataclass(frozen=True)
class StudyStore:
    results: ResultsFile
    records: RunStore

    @classmethod
    def beside(cls, results: ResultsFile) -> StudyStore:
        """The records in the runs folder next to ``results``."""
        return cls(results, RunStore(results.path.parent))

    @property
    def folder(self) -> Path:
        return self.records.folder

    def load(self, keys: Iterable[str]) -> tuple[dict[str, Entry], dict[str, Entry]]:
        """Every entry of results.json (other options' too), and the records of those of
        ``keys`` it lacks: key -> entry, each."""
        combined = self.results.load()
        wanted = [k for k in keys if k not in combined]
        return combined, {k: self.entry(k) for k in sorted(self.records.done(wanted))}

    def entry(self, key: str) -> Entry:
        """The results entry a record holds; an error naming the file if it holds none."""
        entry = self.records.get(key).get("entry")
        if not isinstance(entry, dict) or not self._keyed(entry, key):
            raise StudyError(
                f"{self.records.path(key)}: not a results entry of run {key}; remove it to "
                "replay the run"
            )
        return entry

    def _keyed(self, entry: Entry, key: str) -> bool:
        try:
            return self.results.key(entry) == key
        except KeyError:
            return False

    def put(self, key: str, entry: Entry) -> None:
        """Store a finished run's entry (once: a second result of the key is dropped)."""
        self.records.put({"key": key, "entry": entry})

    def stored(self, keys: Iterable[str]) -> set[str]:
        """The keys among ``keys`` with a record now (the shards may be writing more)."""
        return self.records.done(keys)

    def combine(self, combined: Mapping[str, Entry], added: Mapping[str, Entry]) -> None:
        """Write results.json with ``added`` beside ``combined``, then remove the records
        of ``added``: written first, so a crash between the two loses nothing."""
        self.results.save({**combined, **added}.values())
        self.records.remove(added)
