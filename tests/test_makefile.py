"""`make run` installs what running needs and no more; `make test` adds the extras."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from paths import ROOT


def planned(tmp_path: Path, target: str, what: str = "pip install") -> list[str]:
    """The commands make would run for ``target`` in a fresh checkout (nothing runs),
    those that contain ``what``."""
    if shutil.which("make") is None:
        pytest.skip("needs make")
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    done = subprocess.run(
        ["make", "-n", target], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    return [line for line in done.stdout.splitlines() if what in line]


def test_run_installs_the_project_alone(tmp_path: Path) -> None:
    installs = planned(tmp_path, "run")
    assert installs[-1].endswith("pip install -q -e .")
    assert not [line for line in installs if "[" in line]  # no extras


def test_test_adds_the_extras_after_what_run_installs(tmp_path: Path) -> None:
    installs = planned(tmp_path, "test")
    assert installs[-2].endswith("pip install -q -e .")
    assert installs[-1].endswith("pip install -q -e '.[test,report,sweep]'")


def test_mutate_adds_the_pinned_mutation_tool(tmp_path: Path) -> None:
    installs = planned(tmp_path, "mutate")
    assert installs[-2].endswith("pip install -q -e '.[test,report,sweep]'")
    assert installs[-1].endswith("pip install -q -e '.[test,report,sweep,mutate]'")


def test_run_writes_the_bytecode_of_both_packages(tmp_path: Path) -> None:
    # As an install from a wheel does: a host that writes none at run time would
    # compile every module each command imports.
    assert planned(tmp_path, "run", "compileall") == [
        ".venv/bin/python -m compileall -q daemon client"
    ]
