"""Markdown of a study report: tables, number formats and the sections every report has.

Sections are lists of lines (joined with newlines at the end), each ending with
an empty line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from batchd.sweep.output import markdown_table
from batchd_studies.framework.results import RESULTS_FILE

__all__ = ["markdown_table"]  # the sweep's, shared with the studies

MISSING = "-"
DISCUSSION_FILE = "discussion.md"  # a person's discussion, included in the report if present


def docs_link(out: Path, page: str) -> str:
    """The link from a report in ``out`` to ``page`` of the manual: relative to the
    nearest ``docs`` folder above ``out`` (a study one folder deeper links one more
    ``..``), else ``../page``, as from a study folder beside the manual's pages."""
    folder = Path(os.path.abspath(out))
    for docs in folder.parents:
        if docs.name == "docs":
            return Path(os.path.relpath(docs, folder), page).as_posix()
    return f"../{page}"


def fmt_int(value: Any) -> str:
    return MISSING if value is None else f"{int(value):,}"


def fmt_seconds(value: Any) -> str:
    return MISSING if value is None else f"{float(value):,.0f} s"


def fmt_float(value: Any, digits: int = 2) -> str:
    return MISSING if value is None else f"{float(value):,.{digits}f}"


def fmt_percent(fraction: Any) -> str:
    """A fraction (0.7536) as a percentage ("75.36 %")."""
    return MISSING if fraction is None else f"{100.0 * float(fraction):.2f} %"


def provenance_lines(meta: Mapping[str, Any]) -> list[str]:
    """The header's command (every option too, if the command left some out), date, machine."""
    lines = [f"- Command: `{meta['command']}`"]
    if meta["options"] != meta["command"]:
        lines.append(f"- All options: `{meta['options']}`")
    return [
        *lines,
        f"- Date: {meta['date']}",
        f"- Machine: {meta['cpus']} CPUs, Python {meta['python']}, {meta['platform']}, "
        f"batchd {meta['batchd']}",
    ]


def replayed_by(meta: Mapping[str, Any]) -> Mapping[str, Any]:
    """The facts of the invocation that replayed the runs: this one, or the last that did
    when this one replayed nothing (``study.json``)."""
    return meta.get("replayed_by") or meta


def rewritten_lines(meta: Mapping[str, Any]) -> list[str]:
    """The header's line on a pass that replayed nothing and wrote the report again."""
    if replayed_by(meta) is meta:
        return []
    return [
        f"- Report written again from {RESULTS_FILE} (no replays) by `{meta['command']}` "
        f"on {meta['date']}"
    ]


def invocation_lines(meta: Mapping[str, Any]) -> list[str]:
    """The header's provenance: who replayed the runs (command, date, machine), how many
    there are and how they came about, and who wrote the report if another pass did."""
    made = replayed_by(meta)
    return [
        *provenance_lines(made),
        f"- Runs: {meta['new'] + meta['reused']}; {made['new']} replayed ({from_results(made)} "
        f"reused from {RESULTS_FILE}) in {made['workers']} worker processes in "
        f"{made['seconds']:.1f} s of wall time in all",
        *collected_lines(made),
        *rewritten_lines(meta),
    ]


def from_results(meta: Mapping[str, Any]) -> int:
    """How many of an invocation's reused runs came from results.json (not from OUT/runs)."""
    return int(meta["reused"]) - int(meta.get("collected") or 0)


def collected_lines(meta: Mapping[str, Any]) -> list[str]:
    """The header's line on the runs an invocation took from OUT/runs; none if it took none."""
    count = int(meta.get("collected") or 0)
    if not count:
        return []
    return [
        f"- {count:,} runs taken from the records in runs/, stored there as they finished by "
        "the shards of an array job (`--shard I/N`) or by an invocation that was stopped"
    ]


def figures_section(
    figures: Sequence[tuple[str, Path | None]], *, heading: str, missing: str
) -> list[str]:
    """Each (caption, PNG) as an image with its caption; a figure not drawn says ``missing``."""
    lines = [heading, ""]
    for caption, path in figures:
        if path is None:
            lines += [f"_{caption}: not drawn ({missing})._", ""]
        else:
            lines += [f"![{caption}]({path.name})", "", f"*{caption}.*", ""]
    return lines


def runtimes_section(lead: str, busy: float, wall: float, table: str) -> list[str]:
    """``busy``: seconds of all replays; ``wall``: the study's wall time."""
    return [
        "## Run times",
        "",
        f"{lead}{busy:,.1f} s in all, {wall:,.1f} s of study wall time.",
        "",
        table,
        "",
    ]


def failures_section(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """The runs that failed, one row each with its error last; nothing when none did."""
    if not rows:
        return []
    return ["## Failed runs", "", markdown_table(header, rows, left=len(header)), ""]


def discussion_section(out: Path, placeholder: str, note: str | None = None) -> list[str]:
    """OUT/discussion.md, written by a person from the numbers and kept across reruns.

    Without the file: ``placeholder``. ``note`` (in italics) goes before the text.
    """
    path = out / DISCUSSION_FILE
    if not path.is_file():
        return ["## Discussion", "", placeholder, ""]
    lines = ["## Discussion", ""]
    if note is not None:
        lines += [f"_{note}_", ""]
    return [*lines, path.read_text().strip(), ""]
