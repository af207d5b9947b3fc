"""Runs in declaration order, keyed by content; the store writes each key once, whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from batchd.sweep import SweepError
from batchd.sweep.experiment import load_experiment
from batchd.sweep.files import FileChanged, read_ref
from batchd.sweep.plan import plan_runs
from batchd.sweep.store import RunStore
from batchd.sweep.table import results_table
from sweep_files import write_experiment, write_trace


def plan(path: Path) -> list:
    table, base = load_experiment(path)
    return plan_runs(table, base, str(path))


def test_runs_follow_the_declaration_order(tmp_path: Path) -> None:
    write_trace(tmp_path / "a.swf")
    exp = write_experiment(
        tmp_path / "e.toml",
        'traces = ["a.swf", "synthetic:50"]\nnodes = [32, 16]\npolicies = ["sjf-cons", "dynp"]\n'
        'load = [1.0, 1.5]\nseeds = [3, 4]\n[sweep.params.dynp]\nquality = ["ms", "artww"]\n',
    )
    runs = plan(exp)
    assert len(runs) == 2 * 2 * 3 * 2 * 2
    first = [(r.trace, r.nodes, r.policy, dict(r.params), r.load, r.seed) for r in runs[:7]]
    assert first == [
        ("a.swf", 32, "sjf-cons", {}, 1.0, 3),
        ("a.swf", 32, "sjf-cons", {}, 1.0, 4),
        ("a.swf", 32, "sjf-cons", {}, 1.5, 3),
        ("a.swf", 32, "sjf-cons", {}, 1.5, 4),
        ("a.swf", 32, "dynp", {"quality": "ms"}, 1.0, 3),
        ("a.swf", 32, "dynp", {"quality": "ms"}, 1.0, 4),
        ("a.swf", 32, "dynp", {"quality": "ms"}, 1.5, 3),
    ]
    assert runs[2].replay_shrink() == pytest.approx(1 / 1.5)
    assert [r.index for r in runs] == list(range(len(runs)))
    assert len({r.key() for r in runs}) == len(runs)


def test_the_key_follows_the_trace_content_not_its_path(tmp_path: Path) -> None:
    write_trace(tmp_path / "a.swf")
    body = 'traces = ["a.swf"]\nnodes = 32\npolicies = "fcfs-easy"\n'
    key = plan(write_experiment(tmp_path / "e.toml", body))[0].key()
    (tmp_path / "moved").mkdir()
    (tmp_path / "a.swf").rename(tmp_path / "moved" / "a.swf")
    moved = write_experiment(tmp_path / "moved" / "e.toml", body)
    assert plan(moved)[0].key() == key
    write_trace(tmp_path / "moved" / "a.swf", seed=9)
    assert plan(moved)[0].key() != key


def test_a_bad_policy_parameter_fails_before_anything_runs(tmp_path: Path) -> None:
    exp = write_experiment(
        tmp_path / "e.toml",
        'traces = "synthetic:5"\nnodes = 8\npolicies = "dynp"\n[sweep.params.dynp]\nqality = 1\n',
    )
    with pytest.raises(SweepError, match=r"e\.toml: policies: .*unknown parameter 'qality'"):
        plan(exp)


def test_a_file_with_another_checksum_is_refused_where_no_bytes_come(tmp_path: Path) -> None:
    ref = read_ref(str(write_trace(tmp_path / "a.swf")))
    assert ref.local_path() == ref.path
    write_trace(tmp_path / "a.swf", seed=5)
    with pytest.raises(FileChanged, match="changed after the sweep started"):
        ref.local_path()


def test_inline_bytes_stand_in_for_a_missing_file(tmp_path: Path) -> None:
    ref = read_ref(str(write_trace(tmp_path / "a.swf")), inline=True)
    (tmp_path / "a.swf").unlink()
    copy = Path(ref.local_path())
    assert copy != tmp_path / "a.swf" and copy.read_bytes() == ref.inline


def record(key: str, **summary: object) -> dict:
    coordinates = {"trace": "t", "policy": "p", "params": {}, "nodes": 4}
    return {"key": key, "coordinates": coordinates, "summary": summary, "batchd": "0",
            "trace_sha256": None, "timing": {}}  # fmt: skip


def test_the_store_writes_a_key_once_and_leaves_no_partial_files(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    assert store.put(record("k1", awt=1.0)) is True
    assert store.put(record("k1", awt=2.0)) is False  # a retried run's second result
    assert store.get("k1")["summary"] == {"awt": 1.0}
    assert sorted(p.name for p in store.folder.iterdir()) == ["k1.json"]
    assert store.done(["k1", "k2"]) == {"k1"} and store.written == 1


def test_an_unreadable_record_is_named(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.folder.mkdir()
    store.path("k1").write_text('{"key": "k1", "summ')
    with pytest.raises(SweepError, match=r"k1\.json: cannot read this run's record"):
        store.get("k1")
    store.path("k2").write_text(json.dumps(record("k3")))
    with pytest.raises(SweepError, match="not the record of run k2"):
        store.get("k2")


def test_rows_flatten_the_summary_and_give_each_column_one_type() -> None:
    a = record("k1", policy="p", nodes=4, awt=1, dynp={"cases": {"1": 2}}, skipped={})
    b = record("k2", policy="p", nodes=4, awt=2.5, dynp={"cases": {"1": 3}}, skipped={})
    b["coordinates"]["params"] = {"quality": "ms"}
    table = results_table([a, b])
    assert table.columns == [
        "trace", "policy", "params.quality", "nodes", "summary.policy", "summary.nodes",
        "awt", "dynp.cases.1", "key", "batchd_version", "trace_sha256",
    ]  # fmt: skip
    assert table.types["awt"] == "float" and table.types["dynp.cases.1"] == "int"
    assert table.column("awt") == [1.0, 2.5]
    assert table.column("params.quality") == [None, "ms"]
