"""Trace files of a study: the short name in tables, the content digest, header facts."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from batchd_studies.framework import StudyError


def trace_base_name(path: str | Path) -> str:
    """``CTC-SP2-1996-3.1-cln.swf.gz`` -> ``CTC``: the file name up to the first '-'."""
    name = Path(path).name
    for suffix in (".gz", ".swf"):
        name = name.removesuffix(suffix)
    return name.split("-")[0]


def file_digest(path: str | Path) -> str:
    """The first 16 hex digits of the file's SHA-256: what a run's key knows of the trace."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def existing(path: Path) -> Path:
    if not path.is_file():
        raise StudyError(f"{path}: no such trace file")
    return path


@dataclass(frozen=True)
class TraceFile:
    """A trace of a study: its short name, the file, its digest and its header's facts."""

    name: str
    path: str
    digest: str
    machine: int | None  # MaxNodes, else MaxProcs, of the header
    timezone: str | None  # TimeZoneString of the header


def read_trace(path_text: str | Path) -> TraceFile:
    """Check that the file exists and read its digest and header."""
    from batchd.workload import read_header

    path = existing(Path(path_text))
    header = read_header(path)
    zone = header.value("TimeZoneString")
    return TraceFile(
        name=trace_base_name(path),
        path=str(path),
        digest=file_digest(path),
        machine=header.max_nodes or header.max_procs,
        timezone=zone or None,
    )


def check_unique(names: Sequence[str], what: str) -> None:
    """Fail when two ``--trace`` arguments would share a name in the tables."""
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise StudyError(f"--trace: two {what} would be named {', '.join(duplicates)}")
