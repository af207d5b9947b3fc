"""Replay a few committed runs of a study with today's code and compare their entries.

A study's report is drawn from its results.json; nothing there says that today's code
still gives those results. ``replay_committed`` takes a study command (usually the
committed one narrowed to a few runs: one trace, one load, one scheduler), plans its
runs in a scratch OUT, picks among those with an entry in the committed results.json
the quickest (at least one of each ``code`` digest the committed entries record, so
every generation of runs is tried) and replays them, comparing every field of the
entry but wall times and the names of files in OUT.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from batchd_studies.framework import StudyError
from batchd_studies.framework.code import CODE_FIELD, code_digest
from batchd_studies.framework.results import Entry, run_key
from batchd_studies.framework.study import Study

# Measured, not computed: they differ from one replay to the next.
WALL_TIMES = frozenset(
    {
        "seconds",
        "wall_seconds",
        "tuning_seconds_mean",
        "tuning_seconds_max",
        "search_seconds_mean",
        "search_seconds_max",
        CODE_FIELD,
    }
)
# Where the study wrote its inputs in OUT (their digests are compared instead).
OUT_FILES = frozenset({"jobset", "workload", "trace_file"})

# name -> (options module, study module, study class)
STUDIES: dict[str, tuple[str, str, str]] = {
    "dynp": ("batchd_studies.dynp.options", "batchd_studies.dynp.study", "DynpStudy"),
    "primetime": (
        "batchd_studies.primetime.options",
        "batchd_studies.primetime.study",
        "PrimetimeStudy",
    ),
    "grid": ("batchd_studies.grid.options", "batchd_studies.grid.study", "GridStudy"),
    "utility": ("batchd_studies.utility.options", "batchd_studies.utility.study", "UtilityStudy"),
    "moldable": (
        "batchd_studies.moldable.options",
        "batchd_studies.moldable.study",
        "MoldableStudy",
    ),
}


@dataclass(frozen=True)
class Replayed:
    """One committed run replayed: ``recorded_by`` the code digest its entry records
    (None: written before entries recorded one); ``differences`` empty when it came out
    the same."""

    label: str
    recorded_by: str | None
    differences: list[str]

    def describe(self) -> str:
        by = self.recorded_by or "code older than the digests"
        if not self.differences:
            return f"{self.label}: as recorded (by {by})"
        shown = "; ".join(self.differences[:5])
        more = len(self.differences) - 5
        tail = f"; and {more} more" if more > 0 else ""
        return (
            f"{self.label}: recorded by {by}, today's code {code_digest()} gives another "
            f"result: {shown}{tail}"
        )


def study_of(argv: Sequence[str]) -> Study[Any, Any]:
    """The study ``batchd report NAME OPTIONS`` would run (argv from NAME on)."""
    from batchd_studies.cli import add_report_command

    parser = argparse.ArgumentParser(prog="batchd")
    add_report_command(parser.add_subparsers(dest="command", required=True))
    args: argparse.Namespace = parser.parse_args(["report", *argv])
    options_module, study_module, cls = STUDIES[args.report]
    options = importlib.import_module(options_module).options_from_args(args)
    study: Study[Any, Any] = getattr(importlib.import_module(study_module), cls)(options)
    return study


def differences(old: Any, new: Any, where: str = "") -> list[str]:
    """Where ``new`` differs from ``old`` (JSON values), wall times and OUT's files aside."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        found = []
        for key in sorted(set(old) | set(new), key=str):
            if key in WALL_TIMES or (not where and key in OUT_FILES):
                continue
            at = f"{where}.{key}" if where else str(key)
            if key not in new:
                found.append(f"{at}: missing")
            elif key not in old:
                found.append(f"{at}: new field")
            else:
                found += differences(old[key], new[key], at)
        return found
    if old != new:
        return [f"{where}: {json.dumps(old)[:60]} -> {json.dumps(new)[:60]}"]
    return []


def pick(entries: Sequence[Entry], count: int) -> list[int]:
    """``count`` of ``entries`` (indices), the quickest first, one of each recorded code
    digest among them."""
    by_time = sorted(range(len(entries)), key=lambda i: float(entries[i].get("seconds") or 0))
    chosen: list[int] = []
    seen: set[Any] = set()
    for i in by_time:
        if entries[i].get(CODE_FIELD) not in seen:
            seen.add(entries[i].get(CODE_FIELD))
            chosen.append(i)
    chosen += [i for i in by_time if i not in chosen]
    return sorted(chosen[: max(count, len(seen))], key=by_time.index)


def replay_committed(
    argv: Sequence[str],
    committed: Path,
    out: Path,
    *,
    count: int = 2,
    work: Callable[[Any], Entry] | None = None,
) -> list[Replayed]:
    """Replay ``count`` runs of the study ``argv`` names (its ``--out`` replaced by
    ``out``) that have an entry in ``committed``; an error when none has."""
    study = study_of([*argv, "--out", str(out)])
    study.check()
    out.mkdir(parents=True, exist_ok=True)
    runs = study.plan()
    results = dataclasses.replace(study.results_file(), path=committed)
    recorded = results.load()
    keyed = [(run, recorded.get(run_key(run.identity()))) for run in runs]
    stored = [(run, entry) for run, entry in keyed if entry is not None]
    if not stored:
        raise StudyError(f"{committed}: none of the {len(runs)} runs of {' '.join(argv)}")
    replay = work or study.work
    checked = []
    for i in pick([entry for _, entry in stored], count):
        run, entry = stored[i]
        fresh = json.loads(json.dumps(replay(run)))
        checked.append(Replayed(run.label(), entry.get(CODE_FIELD), differences(entry, fresh)))
    return checked
