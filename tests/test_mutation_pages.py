"""The mutation results committed in docs/: every survivor of the last runs named on its
group's page, and the figures of docs/testing.md those of the runs."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _bench(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


mutate = _bench("mutate")
pages = _bench("mutation_pages")  # imports mutate, as it finds it beside it
RUNS = json.loads((ROOT / "docs" / "mutation" / "runs.json").read_text())


def test_a_page_names_mutants_in_full_by_number_by_method_in_lists_and_ranges() -> None:
    page = (
        "- `gate.xǁWindowGateǁjob_ended__mutmut_8`, `ǁwithdraw__mutmut_8`, `_16`: why.\n"
        "\n"
        "| `decider.x_classify__mutmut_8`, `_15` | a `<` | why |\n"
        "| `windows.xǁSpanWindowǁis_open__mutmut_19` to `_21` | a branch | why |\n"
        "| `_30` alone names nothing |\n"
        "\n"
        "- `profile.xǁListProfileǁsteps__mutmut_4, _7` and `_merge__mutmut_6, _9` and\n"
        "  `_12, _14`; `outline.xǁExtentǁ__init____mutmut_1`\n"
        "  to `_3` (why).\n"
    )
    assert pages.named(page) == {
        ("gate", "job_ended", 8),
        ("gate", "withdraw", 8),
        ("gate", "withdraw", 16),
        ("decider", "classify", 8),
        ("decider", "classify", 15),
        ("windows", "is_open", 19),
        ("windows", "is_open", 20),
        ("windows", "is_open", 21),
        ("profile", "steps", 4),
        ("profile", "steps", 7),
        ("profile", "_merge", 6),
        ("profile", "_merge", 9),
        ("profile", "_merge", 12),
        ("profile", "_merge", 14),
        ("outline", "__init__", 1),
        ("outline", "__init__", 2),
        ("outline", "__init__", 3),
    }


def test_a_survivor_of_another_module_or_number_is_not_named() -> None:
    page = "| `decider.x_classify__mutmut_8`, `_15` | a `<` | why |\n"
    survivors = [
        "batchd.sched.policies.decider.x_classify__mutmut_15",
        "batchd.sched.policies.decider.x_classify__mutmut_9",
        "batchd.sched.policies.other.x_classify__mutmut_8",
    ]
    assert pages.unnamed(survivors, page) == survivors[1:]


def test_every_group_has_a_recorded_run() -> None:
    assert sorted(RUNS) == sorted(mutate.GROUPS)


def test_every_survivor_of_the_last_runs_is_named_on_its_page() -> None:
    for group, run in RUNS.items():
        page = (ROOT / "docs" / "mutation" / f"{group}.md").read_text()
        assert pages.unnamed(run["survivors"], page) == [], group
        assert run["killed"] + len(run["survivors"]) == run["mutants"], group


def test_the_results_table_gives_the_runs_figures() -> None:
    text = (ROOT / "docs" / "testing.md").read_text()
    rows = re.findall(r"^\| ([a-z-]+) \| ([\d,]+) \| ([\d,]+) \| ([\d.]+) % \|", text, re.M)
    assert sorted(row[0] for row in rows) == sorted(RUNS)
    for group, mutants, killed, score in rows:
        run = RUNS[group]
        assert (int(mutants.replace(",", "")), int(killed.replace(",", ""))) == (
            run["mutants"],
            run["killed"],
        ), group
        assert float(score) == round(100 * run["killed"] / run["mutants"], 1), group


def test_the_table_per_module_gives_the_runs_figures() -> None:
    text = (ROOT / "docs" / "testing.md").read_text()
    rows = re.findall(
        r"^\| ([a-z-]+) \| `([\w/]+\.py)` \| ([\d,]+) / ([\d,]+) \| ([\d.]+) % \|", text, re.M
    )
    table = {
        (group, path): (int(k.replace(",", "")), int(t.replace(",", "")))
        for group, path, k, t, _ in rows
    }
    recorded = {
        (group, path): tuple(counts)
        for group, run in RUNS.items()
        for path, counts in run["modules"].items()
    }
    assert table == recorded
    for group, run in RUNS.items():
        modules = run["modules"].values()
        assert (sum(k for k, _ in modules), sum(t for _, t in modules)) == (
            run["killed"],
            run["mutants"],
        ), group
    for _, _, k, t, score in rows:
        assert float(score) == round(100 * int(k.replace(",", "")) / int(t.replace(",", "")), 1)
