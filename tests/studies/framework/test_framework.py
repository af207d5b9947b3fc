"""The study framework (batchd_studies.framework): run keys, the results file, resume."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from batchd_studies.dynp.configs import Config, config_set
from batchd_studies.dynp.runs import Task
from batchd_studies.dynp.runs import entry_identity as dynp_identity
from batchd_studies.dynp.runs import make_entry as dynp_entry
from batchd_studies.dynp.runs import results_file as dynp_results
from batchd_studies.framework import StudyError
from batchd_studies.framework.cli import Scope
from batchd_studies.framework.code import CODE_FIELD, code_digest
from batchd_studies.framework.markdown import docs_link
from batchd_studies.framework.results import ResultsFile, run_key
from batchd_studies.framework.runs import run_missing
from batchd_studies.framework.traces import read_trace
from batchd_studies.primetime.options import DEFAULT_DISCIPLINES, DEFAULT_LIMITS
from batchd_studies.primetime.runs import Run, plan_runs
from batchd_studies.primetime.runs import entry_identity as pt_identity
from batchd_studies.primetime.runs import make_entry as pt_entry
from batchd_studies.primetime.runs import results_file as pt_results
from paths import ROOT, TRACES

DYNP = Config("dynp-advanced-artww", "dynp", (("decider", "advanced"), ("quality", "artww")))
TASK = Task("KTH_syn", "out/jobsets/KTH_syn.swf", "b9a5af4e50a11ec8", 100, 0.8, DYNP, False, 9.0)
RUN = Run("KTH", "t/KTH.swf.gz", "0123456789abcdef", None, 100, "easy", 30, 100, True, 2.5)


def key(run: Any) -> str:
    return run_key(run.identity())


# --------------------------------------------------------------------------- keys


def test_run_key_is_a_digest_of_the_content() -> None:
    assert run_key({"a": 1, "b": {"x": "1", "y": "2"}}) == run_key(
        {"b": {"y": "2", "x": "1"}, "a": 1}
    )
    assert run_key({"a": 1}) != run_key({"a": 2})
    assert run_key({"a": 1}) != run_key({"a": 1, "b": None})
    assert len(run_key({})) == 64


@pytest.mark.parametrize(
    "change",
    [
        {"trace": "CTC_syn"},
        {"digest": "b9a5af4e50a11ec9"},
        {"nodes": 64},
        {"shrink": 0.75},
        {"perfect_estimates": True},
        {"config": dataclasses.replace(DYNP, name="dynp-x")},
        {"config": dataclasses.replace(DYNP, policy="dynp-basic")},
        {"config": dataclasses.replace(DYNP, params=(("decider", "simple"), ("quality", "artww")))},
    ],
)
def test_dynp_key_changes_with_every_input(change: dict[str, Any]) -> None:
    assert key(dataclasses.replace(TASK, **change)) != key(TASK)


@pytest.mark.parametrize(
    "change",
    [
        {"cost": 1.0},
        {"jobset": "elsewhere/KTH_syn.swf"},  # the content digest is what counts
        {"shrink": 0.8000000001},  # the same factor as written back from JSON
        {"config": dataclasses.replace(DYNP, weight=1.0)},
    ],
)
def test_dynp_key_ignores_what_does_not_change_the_result(change: dict[str, Any]) -> None:
    assert key(dataclasses.replace(TASK, **change)) == key(TASK)


@pytest.mark.parametrize(
    "change",
    [
        {"trace": "SDSC"},
        {"digest": "0123456789abcdee"},
        {"first": 16000},
        {"nodes": 64},
        {"discipline": "fcfs"},
        {"runtime": 40},
        {"jobsize": 90},
        {"must_fit": False},
    ],
)
def test_primetime_key_changes_with_every_input(change: dict[str, Any]) -> None:
    assert key(dataclasses.replace(RUN, **change)) != key(RUN)


@pytest.mark.parametrize("change", [{"cost": 9.0}, {"path": "/elsewhere/KTH.swf.gz"}])
def test_primetime_key_ignores_what_does_not_change_the_result(change: dict[str, Any]) -> None:
    assert key(dataclasses.replace(RUN, **change)) == key(RUN)


def test_an_entry_has_the_key_of_the_run_that_made_it() -> None:
    entry = json.loads(json.dumps(dynp_entry(TASK, {"jobs": 1}, 1.5)))
    assert run_key(dynp_identity(entry)) == key(TASK)
    entry = json.loads(json.dumps(pt_entry(RUN, {"jobs": 1}, {"drain": 0}, 1.5)))
    assert run_key(pt_identity(entry)) == key(RUN)


# --------------------------------------------------------------------------- resume


def fake_replay(task: Task) -> dict[str, Any]:
    """A results entry without a replay: the summary names the task."""
    return dynp_entry(task, {"jobs": 1, "made_for": task.label()}, 0.25)


def _tasks() -> list[Task]:
    return [
        dataclasses.replace(TASK, shrink=shrink, config=config)
        for shrink in (1.0, 0.8)
        for config in config_set("basic")
    ]


def _results(out: Path) -> ResultsFile:
    return dynp_results(out, ["KTH_syn"], ["fcfs-cons", "sjf-cons", "ljf-cons"])


def test_resume_reuses_exactly_the_matching_entries(tmp_path: Path) -> None:
    tasks = _tasks()
    results = _results(tmp_path)
    kept = [dynp_entry(t, {"jobs": 1, "made_for": "before"}, 1.0) for t in tasks[:3]]
    stale = dynp_entry(dataclasses.replace(tasks[3], nodes=64), {"made_for": "64 nodes"}, 1.0)
    other = dynp_entry(dataclasses.replace(tasks[4], trace="CTC_syn"), {"made_for": "CTC"}, 1.0)
    results.save([*kept, stale, other])

    runs = run_missing(tasks, fake_replay, results, workers=1, desc="test")
    assert (runs.new, runs.reused, runs.failures) == (3, 3, [])
    assert runs.results[:3] == kept
    assert [e["summary"]["made_for"] for e in runs.results[3:]] == [t.label() for t in tasks[3:]]
    saved = json.loads(results.path.read_text())
    assert len(saved) == 8  # entries of other options stay in the file
    assert stale in saved and other in saved

    again = run_missing(tasks, fake_replay, results, workers=1, desc="test")
    assert (again.new, again.reused) == (0, 6)
    assert again.results == runs.results


def test_a_new_entry_records_the_code_that_replayed_it(tmp_path: Path) -> None:
    """Entries replayed now say which code made them; entries read back are left as
    they were written."""
    tasks = _tasks()
    results = _results(tmp_path)
    before = dynp_entry(tasks[0], {"jobs": 1, "made_for": "before"}, 1.0)
    results.save([before])
    runs = run_missing(tasks[:2], fake_replay, results, workers=1, desc="test")
    assert CODE_FIELD not in runs.results[0] and runs.results[0] == before
    assert runs.results[1][CODE_FIELD] == code_digest()
    saved = json.loads(results.path.read_text())
    assert [e.get(CODE_FIELD) for e in saved] == [None, code_digest()]


def test_report_only_replays_nothing_and_names_what_is_missing(tmp_path: Path) -> None:
    tasks = _tasks()
    results = _results(tmp_path)
    results.save([dynp_entry(t, {}, 1.0) for t in tasks[:4]])
    before = results.path.read_text()
    with pytest.raises(StudyError, match=r"lacks 2 of the 6 runs \(e\.g\. KTH_syn"):
        run_missing(tasks, fake_replay, results, scope=Scope(report_only=True), desc="test")
    assert results.path.read_text() == before
    runs = run_missing(tasks[:4], fake_replay, results, scope=Scope(report_only=True), desc="x")
    assert (runs.new, runs.reused, len(runs.results)) == (0, 4, 4)
    assert results.path.read_text() == before


def test_unreadable_results_files_are_one_line_errors(tmp_path: Path) -> None:
    results = _results(tmp_path)
    results.path.write_text("[{")
    with pytest.raises(StudyError, match="not valid JSON"):
        results.load()
    results.path.write_text('{"trace": "x"}')
    with pytest.raises(StudyError, match="expected a list of results"):
        results.load()
    results.path.write_text('[{"shrink": 1.0, "config": "fcfs-cons"}]')
    with pytest.raises(StudyError, match="an entry lacks 'trace'"):
        results.load()


def test_a_dynp_results_file_of_the_old_code_is_reused(tmp_path: Path) -> None:
    """An entry as ``batchd report dynp`` wrote it before run keys existed."""
    old = {
        "trace": "KTH_syn",
        "shrink": 0.8,
        "config": "dynp-advanced-artww",
        "policy": "dynp",
        "params": {"decider": "advanced", "quality": "artww"},
        "summary": {"jobs": 10000, "artww": 25168.2},
        "nodes": 100,
        "jobset": "docs/dynp-study/jobsets/KTH_syn.swf",
        "jobset_sha256": "b9a5af4e50a11ec8",
        "perfect_estimates": False,
        "seconds": 2.5,
    }
    results = _results(tmp_path)
    results.path.write_text(json.dumps([old], indent=1) + "\n")
    runs = run_missing([TASK], fake_replay, results, workers=1, desc="test")
    assert (runs.new, runs.reused, runs.results) == (0, 1, [old])


@pytest.mark.skipif(not TRACES.is_dir(), reason="needs the shared traces")
def test_the_committed_primetime_results_are_reused() -> None:
    """docs/primetime-study/kth/results.json (written before run keys) answers its 200 runs."""
    trace = read_trace(TRACES / "KTH-SP2-1996-2.1-cln.swf.gz")
    runs = plan_runs(
        [trace],
        {"KTH": [100]},
        DEFAULT_DISCIPLINES,
        list(DEFAULT_LIMITS),
        first=None,
        must_fit=True,
    )
    results = pt_results(ROOT / "docs" / "primetime-study" / "kth")
    cache = results.load()
    assert len(runs) == len(cache) == 200
    assert {key(r) for r in runs} == set(cache)
    other_size = [dataclasses.replace(r, nodes=96) for r in runs[:3]]
    assert not {key(r) for r in other_size} & set(cache)


# --------------------------------------------------------------------------- cheap import


def test_building_the_cli_parser_loads_no_study() -> None:
    """``batchd replay`` builds the whole parser: ``report`` must not import a study."""
    code = (
        "import sys, batchd.cli; batchd.cli.build_parser(); "
        "print('\\n'.join(m for m in sys.modules if m.startswith(('batchd', 'numpy', "
        "'matplotlib', 'scipy'))))"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "daemon"), str(ROOT / "client")]),
    }
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    loaded = set(out.split())
    assert not {m for m in loaded if m.split(".")[0] in ("numpy", "matplotlib", "scipy")}
    assert "batchd.replay" not in loaded
    assert {m for m in loaded if m.startswith("batchd_studies")} <= {
        "batchd_studies",
        "batchd_studies.cli",
        "batchd_studies.framework",
        "batchd_studies.framework.cli",
        "batchd_studies.dynp",
        "batchd_studies.dynp.options",
        "batchd_studies.primetime",
        "batchd_studies.primetime.options",
        "batchd_studies.grid",
        "batchd_studies.grid.options",
        "batchd_studies.utility",
        "batchd_studies.utility.options",
        "batchd_studies.moldable",
        "batchd_studies.moldable.options",
    }


def test_a_study_runs_on_dask_with_the_same_entries(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    tasks = _tasks()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    local = run_missing(tasks, fake_replay, _results(tmp_path / "a"), workers=1, desc="t")
    on_dask = run_missing(
        tasks, fake_replay, _results(tmp_path / "b"), workers=1, dask="local", desc="t"
    )
    assert (on_dask.new, on_dask.failures) == (6, [])
    assert on_dask.results == local.results


def test_a_report_links_the_manual_from_any_depth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert docs_link(Path("docs/moldable-study"), "moldable.md") == "../moldable.md"
    assert docs_link(Path("docs/moldable-study/512-nodes"), "x.md") == "../../x.md"
    assert docs_link(tmp_path / "docs" / "a" / "b" / "c", "x.md") == "../../../x.md"
    assert docs_link(Path("elsewhere/study"), "x.md") == "../x.md"  # no manual above
