"""The cost of keeping a study's runs: a record per run as it finishes, results.json once.

The runs are those of the committed dynP study (docs/dynp-study/results.json: 486
runs, 0.7 MB), each "replayed" by handing back its committed summary, so that what is
timed is the study framework alone: keying, the record written and flushed, the
records read back and combined into results.json. Timed in this process (one
worker): the whole study in one pass; the same in ``--shards`` shards, then
``--collect``; and, for comparison, results.json rewritten after every run, as the
studies kept their runs before the records (the cost that grew with the square of
the runs). Every pass must give the committed file's entries.

    PYTHONPATH=daemon:client .venv/bin/python bench/study_shards.py
    PYTHONPATH=daemon:client .venv/bin/python bench/study_shards.py --shards 16
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from batchd.sweep.shard import Shard
from batchd_studies.dynp.configs import Config
from batchd_studies.dynp.runs import Task, make_entry, results_file
from batchd_studies.framework.cli import Scope
from batchd_studies.framework.results import ResultsFile, run_key
from batchd_studies.framework.runs import run_missing

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "docs" / "dynp-study" / "results.json"
SUMMARIES: dict[str, dict[str, Any]] = {}  # run key -> committed summary (this process)


def task_of(entry: dict[str, Any]) -> Task:
    config = Config(entry["config"], entry["policy"], tuple(entry["params"].items()))
    return Task(entry["trace"], entry["jobset"], entry["jobset_sha256"], entry["nodes"],
                entry["shrink"], config, entry["perfect_estimates"], 1.0)  # fmt: skip


def committed_summary(task: Task) -> dict[str, Any]:
    """The run's results entry, its summary the committed one, without a replay."""
    return make_entry(task, SUMMARIES[run_key(task.identity())], 0.0)


def study_file(out: Path, entries: list[dict[str, Any]]) -> ResultsFile:
    traces = list(dict.fromkeys(e["trace"] for e in entries))
    configs = list(dict.fromkeys(e["config"] for e in entries))
    return results_file(out, traces, configs)


def timed(out: Path, tasks: list[Task], entries: list[dict[str, Any]], scope: Scope) -> float:
    began = time.perf_counter()
    done = run_missing(
        tasks, committed_summary, study_file(out, entries), scope=scope, workers=1, desc="bench"
    )
    seconds = time.perf_counter() - began
    if done.failures:
        raise SystemExit(f"bench: runs failed: {done.failures[:1]}")
    return seconds


def rewritten_each_time(out: Path, tasks: list[Task], entries: list[dict[str, Any]]) -> float:
    """results.json saved after every run, as before the records."""
    results = study_file(out, entries)
    cache: dict[str, dict[str, Any]] = {}
    began = time.perf_counter()
    for task in tasks:
        cache[run_key(task.identity())] = committed_summary(task)
        results.save(cache.values())
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=4)
    args = parser.parse_args()
    entries = json.loads(COMMITTED.read_text())
    tasks = [task_of(e) for e in entries]
    for task, entry in zip(tasks, entries, strict=True):
        SUMMARIES[run_key(task.identity())] = entry["summary"]
    n = len(tasks)
    expected = [{**e, "seconds": 0.0} for e in entries]
    print(f"{os.cpu_count()} CPUs; {n} runs of {COMMITTED.relative_to(ROOT)}, one worker")
    rows = []
    with tempfile.TemporaryDirectory(dir=ROOT) as tmp:
        whole = Path(tmp) / "whole"
        rows.append(("whole study, one pass", timed(whole, tasks, entries, Scope()), n))
        sharded = Path(tmp) / "sharded"
        for i in range(args.shards):
            scope = Scope(shard=Shard(i, args.shards))
            mine = sum(1 for k in range(n) if k % args.shards == i)
            rows.append((f"shard {i}/{args.shards}", timed(sharded, tasks, entries, scope), mine))
        records = sum(1 for _ in (sharded / "runs").glob("*.json"))
        rows.append(("--collect", timed(sharded, tasks, entries, Scope(collect=True)), n))
        old = Path(tmp) / "old"
        old.mkdir()
        rows.append(("results.json after every run", rewritten_each_time(old, tasks, entries), n))
        same = [
            json.loads((d / "results.json").read_text()) == expected for d in (whole, sharded, old)
        ]
        size = (whole / "results.json").stat().st_size
    print("| pass | runs | wall | a run |\n|---|--:|--:|--:|")
    for name, seconds, count in rows:
        print(f"| {name} | {count} | {seconds:.3f} s | {1000 * seconds / count:.2f} ms |")
    print(f"records before --collect: {records}; results.json {size / 1e6:.2f} MB; "
          f"every pass gave the committed entries: {all(same)}")  # fmt: skip


if __name__ == "__main__":
    main()
