"""Today's code still gives the committed studies' results: a few runs of each, replayed.

test_committed_studies.py draws the reports again from their results.json; this replays
the quickest committed runs of each study (a narrowed command: one trace, one load, a
few schedulers) and compares every field of their entries, wall times aside. A change
to the code that changes a schedule fails here, naming the run, the field and the
code digest the committed entry records. About 17 s of CPU in all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from batchd_studies.framework.code import CODE_FIELD, code_digest
from batchd_studies.framework.results import Entry
from batchd_studies.replaycheck import differences, pick, replay_committed
from paths import ROOT, TRACES

CTC = f"{TRACES}/CTC-SP2-1996-3.1-cln.swf.gz"
KTH = f"{TRACES}/KTH-SP2-1996-2.1-cln.swf.gz"
BLUE = f"{TRACES}/SDSC-BLUE-2000-4.2-cln.swf.gz"

# study -> (its committed command narrowed to a few runs, the folder, runs replayed)
NARROWED: dict[str, tuple[list[str], str, int]] = {
    "dynp": (
        ["dynp", "--trace", f"synthetic-from:{KTH}", "--shrink", "0.6"]
        + ["--jobs", "10000", "--seed", "1", "--configs", "basic"],
        "dynp-study",
        2,
    ),
    "primetime": (
        ["primetime", "--trace", KTH, "--nodes", "100", "--limits", "10"]
        + ["--disciplines", "fcfs,easy"],
        "primetime-study/kth",
        2,
    ),
    "grid": (
        ["grid", "--trace", f"CTC-prob={CTC}", "--config", str(ROOT / "conf/grid-2pown.toml")]
        + ["--jobs-per-node", "8", "--seed", "1"],
        "grid-study",
        3,
    ),
    "utility": (
        ["utility", "--trace", BLUE, "--seeds", "1", "--factors", "1"]
        + ["--deadline-factors", "1", "--schedulers", "fcfs-cons,fcfs-easy,prio-fifo"]
        + ["--value-orders", "formula"],
        "utility-study",
        2,
    ),
    "moldable": (
        ["moldable", "--trace", CTC, "--loads", "0.5", "--a", "system"]
        + ["--obf", "1", "--ef", "0", "--others", "rigid-easy"],
        "moldable-study",
        1,
    ),
}

needs_traces = pytest.mark.skipif(not TRACES.is_dir(), reason="needs the shared traces")


@needs_traces
@pytest.mark.parametrize("study", sorted(NARROWED))
def test_committed_runs_come_out_the_same_today(study: str, tmp_path: Path) -> None:
    argv, folder, count = NARROWED[study]
    replayed = replay_committed(
        argv, ROOT / "docs" / folder / "results.json", tmp_path / "out", count=count
    )
    assert len(replayed) >= count
    stale = [r.describe() for r in replayed if r.differences]
    assert not stale, (
        f"docs/{folder}/results.json is stale (replay the study and commit its results):\n"
        + "\n".join(stale)
    )


@needs_traces
def test_a_changed_schedule_is_found_and_named(tmp_path: Path) -> None:
    """The check can fail: a replay that finishes a job later is told apart."""
    from batchd_studies.primetime.runs import run_task

    def later(run: Any) -> Entry:
        entry = run_task(run)
        entry["summary"]["makespan"] += 1
        return entry

    argv, folder, _ = NARROWED["primetime"]
    replayed = replay_committed(
        argv, ROOT / "docs" / folder / "results.json", tmp_path / "out", count=1, work=later
    )
    (only,) = replayed
    assert only.differences == [
        f"summary.makespan: {m} -> {m + 1}" for m in [committed_makespan(folder, only.label)]
    ]
    assert "recorded by code older than the digests, today's code" in only.describe()
    assert code_digest() in only.describe()


def committed_makespan(folder: str, label: str) -> int:
    """The committed makespan of the KTH run ``label`` names (``KTH 100 easy 10/10``)."""
    _, nodes, discipline, limits = label.split()
    runtime, jobsize = (int(x) for x in limits.split("/"))
    entries = json.loads((ROOT / "docs" / folder / "results.json").read_text())
    (entry,) = [
        e
        for e in entries
        if (e["nodes"], e["discipline"], e["runtime_limit"], e["jobsize_limit"])
        == (int(nodes), discipline, runtime, jobsize)
    ]
    return int(entry["summary"]["makespan"])


def test_differences_leave_out_wall_times_and_out_files_only() -> None:
    old = {"summary": {"art": 1.5, "wall_seconds": 3.0}, "seconds": 2.0, "jobset": "a/x.swf"}
    new = {"summary": {"art": 1.5, "wall_seconds": 9.0}, "seconds": 7.0, "jobset": "b/x.swf"}
    new[CODE_FIELD] = code_digest()
    assert differences(old, new) == []
    new["summary"] = {"art": 2.5, "killed": 0}
    new["trace"] = "KTH"
    assert differences(old, new) == [
        "summary.art: 1.5 -> 2.5",
        "summary.killed: new field",
        "trace: new field",
    ]


def test_pick_tries_every_code_digest_the_entries_record() -> None:
    entries: list[Entry] = [
        {"seconds": 1.0},
        {"seconds": 0.5},
        {"seconds": 9.0, CODE_FIELD: "aaaa"},
        {"seconds": 8.0, CODE_FIELD: "aaaa"},
        {"seconds": 0.7},
    ]
    assert pick(entries, 1) == [1, 3]
    assert pick(entries, 3) == [1, 4, 3]


def test_the_code_digest_follows_the_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import batchd_studies.framework.code as code

    for name in code.PACKAGES:
        (tmp_path / name / "sub").mkdir(parents=True)
        (tmp_path / name / "sub" / "m.py").write_text("x = 1\n")
    monkeypatch.setattr(code, "package_dir", lambda name: tmp_path / name)
    code.code_digest.cache_clear()
    try:
        first = code.code_digest()
        (tmp_path / "batchd" / "sub" / "m.py").write_text("x = 2\n")
        code.code_digest.cache_clear()
        assert code.code_digest() != first and len(first) == 16
        (tmp_path / "batchd" / "sub" / "m.py").write_text("x = 1\n")
        (tmp_path / "batchd" / "sub" / "notes.txt").write_text("not code\n")
        code.code_digest.cache_clear()
        assert code.code_digest() == first
    finally:
        code.code_digest.cache_clear()
