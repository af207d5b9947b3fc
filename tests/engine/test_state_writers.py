"""The engine is the one writer of job state.

Outside daemon/batchd/engine/ (and ``change_state``, the check every transition goes
through) no module stores into the ``state`` of anything but its own object: a job's
state changes through the engine's transitions (engine/core.py, engine/transitions.py,
engine/restored.py), so that the server cannot put a job in a state its queues do
not know of.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from paths import ROOT

PACKAGE = ROOT / "daemon" / "batchd"
WRITERS = ("engine/",)  # the package's only writers of job state
PRIMITIVE = "model/states.py"  # change_state: the check the engine's transitions use


def _targets(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.Tuple | ast.List):
        return [t for elt in node.elts for t in _targets(elt)]
    if isinstance(node, ast.Starred):
        return _targets(node.value)
    return [node]


def _own(node: ast.Attribute) -> bool:
    """``self.state``: an object's own attribute of that name (not a job's)."""
    return isinstance(node.value, ast.Name) and node.value.id == "self"


def state_writes(source: str, name: str = "<snippet>") -> list[str]:
    """Each place in ``source`` that stores into some other object's ``state``
    (``x.state = ...``, in a tuple, augmented, annotated, or ``setattr(x, "state", ...)``),
    as ``NAME:LINE``."""
    found: list[int] = []
    for node in ast.walk(ast.parse(source, name)):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = [t for target in node.targets for t in _targets(target)]
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = _targets(node.target)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value == "state"
        ):
            found.append(node.lineno)
        for target in targets:
            if isinstance(target, ast.Attribute) and target.attr == "state" and not _own(target):
                found.append(target.lineno)
    return [f"{name}:{line}" for line in sorted(found)]


def test_only_the_engine_writes_job_state() -> None:
    found: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(WRITERS) or rel == PRIMITIVE:
            continue
        found += state_writes(path.read_text(), rel)
    assert not found, (
        "job state is written outside the engine (use an engine transition: "
        f"engine/core.py, engine/transitions.py, engine/restored.py): {found}"
    )


@pytest.mark.parametrize(
    "snippet",
    [
        "rec.job.state = JobState.HELD",
        "job.state = JobState.WAITING if waiting else JobState.QUEUED",
        "part.end, part.outcome, part.state = at, outcome, JobState.FINISHED",
        "a = job.state = JobState.FINISHED",
        "job.state: JobState = JobState.HELD",
        "setattr(job, 'state', JobState.HELD)",
        "def f(job):\n    for part in job.parts:\n        [part.state, x] = done, 1",
    ],
)
def test_scanner_catches_a_planted_write(snippet: str) -> None:
    assert state_writes(snippet) != []


@pytest.mark.parametrize(
    "snippet",
    [
        "self.state = state",  # an object's own attribute
        "state = job.state",
        "if job.state is JobState.HELD:\n    pass",
        "Job(id=1, state=JobState.HELD)",
        "getattr(job, 'state')",
    ],
)
def test_scanner_leaves_reads_and_own_fields(snippet: str) -> None:
    assert state_writes(snippet) == []


def test_scanner_names_file_and_line() -> None:
    assert state_writes("x = 1\n\njob.state = s\n", "server/x.py") == ["server/x.py:3"]


def test_the_package_is_scanned() -> None:
    assert (PACKAGE / "server" / "service" / "lifecycle.py").is_file()
    assert Path(PACKAGE / PRIMITIVE).is_file()
