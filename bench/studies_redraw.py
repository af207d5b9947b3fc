"""Write every committed study's report again from its results.json and compare the folders.

For each docs/*-study folder (and its sub-folders) whose report names the pass that wrote
it ("Report written again from results.json (no replays) by `CMD` on DATE"), the folder's
results.json, study.json and discussion.md are copied into a tree laid out like the
repository (OUT/shared -> the traces' folder, OUT/repo/conf -> conf), CMD is run there
with that date and a wall time of 0 s, and the written folder is compared with the
committed one, file by file (report, figures, study.json). The wall time of the pass
that wrote a report is measured, not recorded, and is left out of the comparison. The
dynP report describes the pass that wrote it; its CMD is its own command with
--report-only, and the lines of that description (and of the wall time) are left out.

    PYTHONPATH=daemon:client python bench/studies_redraw.py OUT

Exit status 1 if a file differs.
"""

from __future__ import annotations

import filecmp
import os
import re
import shlex
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT.parent / "shared" / "traces"
WRITTEN = "- Report written again from results.json (no replays) by `"
KEPT = ("results.json", "study.json", "discussion.md")
DYNP = "dynp-study"
DYNP_INVOCATION = ("- Command:", "- All options:", "- Date:", "- Machine:", "- Runs: ")
DYNP_WALL = "Wall seconds of each replay"
# The wall time of the pass that wrote a report is measured, not recorded: masked.
WALL_TIME = re.compile(r"[\d,]+\.\d s of study wall time")


def dynp_command(report: str) -> str:
    command = next(line for line in report.splitlines() if line.startswith("- Command: `"))
    return command.removeprefix("- Command: `").removesuffix("`") + " --report-only"


def pass_of(report: str) -> tuple[str, str | None]:
    """The command that wrote ``report`` and its date (None: the date is not compared)."""
    for line in report.splitlines():
        if line.startswith(WRITTEN):
            command, date = line.removeprefix(WRITTEN).rsplit("` on ", 1)
            return command, date
    return dynp_command(report), None


def redraw(folder: Path, out: Path) -> list[str]:
    """Write ``folder`` again under ``out``; the names of the files that differ."""
    import batchd_studies.framework.meta as meta
    import batchd_studies.framework.study as study
    from batchd.cli import main

    rel = folder.relative_to(ROOT)
    repo = out / "repo"
    target = repo / rel
    target.mkdir(parents=True)
    for name in KEPT:
        if (folder / name).is_file():
            shutil.copy(folder / name, target / name)
    committed_report = (folder / "report.md").read_text()
    command, date = pass_of(committed_report)
    if date is not None:
        meta.now = lambda: date
    study.elapsed = lambda since: 0.0  # type: ignore[attr-defined]
    argv = shlex.split(command)
    sys.argv = argv
    cwd = Path.cwd()
    try:
        os.chdir(repo)
        if main(argv[1:]) != 0:
            return [f"{rel}: `{command}` failed"]
    finally:
        os.chdir(cwd)
    differ = []
    compare = filecmp.dircmp(folder, target)
    differ += [
        f"{rel}/{name}: only in the committed folder"
        for name in compare.left_only
        if (folder / name).is_file()
    ]
    differ += [
        f"{rel}/{name}: only in the written folder"
        for name in compare.right_only
        if (target / name).is_file()
    ]
    for name in compare.common_files:
        if name == "report.md":
            differ += report_differences(committed_report, (target / name).read_text(), rel)
        elif not filecmp.cmp(folder / name, target / name, shallow=False):
            differ.append(f"{rel}/{name}: differs")
    return differ


def report_differences(committed: str, written: str, rel: Path) -> list[str]:
    """The lines that differ, but for the measured wall time (and dynP's invocation)."""
    old, new = committed.splitlines(), written.splitlines()
    if len(old) != len(new):
        return [f"{rel}/report.md: {len(new)} lines, committed {len(old)}"]
    skip = (*DYNP_INVOCATION, DYNP_WALL) if rel.name == DYNP else ()
    return [
        f"{rel}/report.md: {a!r} -> {b!r}"
        for a, b in zip(old, new, strict=True)
        if WALL_TIME.sub("", a) != WALL_TIME.sub("", b)
        and not (skip and a.startswith(skip) and b.startswith(skip))
    ]


def main() -> int:
    out = Path(sys.argv[1]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    (out / "shared").mkdir()
    (out / "shared" / "traces").symlink_to(TRACES, target_is_directory=True)
    (out / "repo").mkdir()
    (out / "repo" / "conf").symlink_to(ROOT / "conf", target_is_directory=True)
    folders = sorted(p.parent for p in (ROOT / "docs").glob("*-study/**/results.json"))
    bad: list[str] = []
    for folder in folders:
        differ = redraw(folder, out)
        files = sorted(p.name for p in folder.iterdir() if p.is_file())
        print(f"{folder.relative_to(ROOT)}: {len(files)} files, {len(differ)} differ", flush=True)
        for line in differ:
            print(f"  {line}", flush=True)
        bad += differ
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
