"""The layers of the code: model <- workload <- sched <- engine <- replay and server.

Every import in the package, at the top of a module, inside a function or only
for type checking, goes down the layers or stays in its own. The daemon never
imports the client. The studies (daemon/batchd_studies) build on batchd's public parts
only, and batchd never imports them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from paths import ROOT

PACKAGE = ROOT / "daemon" / "batchd"
STUDIES = ROOT / "daemon" / "batchd_studies"
BASE = {"model", "argtypes"}
# What each part of batchd may import besides itself and BASE.
ALLOWED: dict[str, set[str]] = {
    "model": set(),
    "argtypes": set(),
    "workload": set(),
    "sched": set(),
    "engine": {"sched"},
    "site": {"sched"},
    "metrics": {"sched", "engine"},
    "replay": {"workload", "sched", "engine", "site", "metrics"},
    "ui": set(),
    # The launcher and every supervisor run execution's code, as root under a root daemon:
    # it imports nothing else of batchd (test_execution_stands_alone).
    "execution": set(),
    "server": {"workload", "sched", "engine", "site", "metrics", "ui", "execution"},
    "sweep": {"workload", "sched", "engine", "site", "metrics", "replay"},
    "demo": set(),
    "augment": {"workload"},
    "cli": {
        "augment",
        "workload",
        "sched",
        "engine",
        "site",
        "metrics",
        "replay",
        "server",
        "sweep",
        "demo",
        "ui",
    },
    "__init__": set(),
}
# The parts of batchd the studies may import: its public API (``batchd`` itself for the
# version). Not the scheduler, the engine, the server or the command line.
STUDIES_USE = {
    "__init__",
    "argtypes",
    "model",
    "workload",
    "site",
    "metrics",
    "replay",
    "sweep",
}


def part_of(path: Path) -> str:
    first = path.relative_to(PACKAGE).parts[0]
    return first.removesuffix(".py")


def imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
    return out


def violations() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        part = part_of(path)
        allowed = ALLOWED[part] | BASE | {part}
        for line, module in imports(path):
            where = f"{path.relative_to(ROOT)}:{line}"
            if module.split(".")[0] == "batchclient":
                found.append(f"{where} imports the client ({module})")
                continue
            if module.split(".")[0] == "batchd_studies":
                found.append(f"{where} imports the studies ({module})")
                continue
            if not module.startswith("batchd."):
                continue
            target = module.split(".")[1]
            if target not in allowed:
                found.append(f"{where}: {part} imports {module}")
    return found


def studies_violations() -> list[str]:
    found = []
    for path in sorted(STUDIES.rglob("*.py")):
        for line, module in imports(path):
            where = f"{path.relative_to(ROOT)}:{line}"
            top = module.split(".")[0]
            if top == "batchclient":
                found.append(f"{where} imports the client ({module})")
            elif top == "batchd":
                part = module.split(".")[1] if "." in module else "__init__"
                if part not in STUDIES_USE:
                    found.append(f"{where}: the studies import {module}")
    return found


def test_execution_stands_alone() -> None:
    """Not even the model: what a supervisor loads is the standard library and its own."""
    found = []
    for path in sorted((PACKAGE / "execution").rglob("*.py")):
        for line, module in imports(path):
            if module.startswith("batchd.") and not module.startswith("batchd.execution"):
                found.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert found == []


def test_every_part_is_known() -> None:
    parts = {part_of(p) for p in PACKAGE.rglob("*.py")}
    assert parts <= set(ALLOWED), parts - set(ALLOWED)


def test_imports_go_down_the_layers() -> None:
    assert violations() == []


def test_the_studies_use_batchds_public_parts_only() -> None:
    assert studies_violations() == []


def test_the_walks_find_imports_of_and_by_the_studies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "batchd" / "replay").mkdir(parents=True)
    (tmp_path / "batchd" / "replay" / "oops.py").write_text("import batchd_studies.cli\n")
    (tmp_path / "batchd_studies").mkdir()
    (tmp_path / "batchd_studies" / "oops.py").write_text(
        "from batchd import __version__\nfrom batchd.replay import run_replay\n"
        "def f():\n    from batchd.sched.registry import make_policy\n"
    )
    monkeypatch.setattr(__import__(__name__), "PACKAGE", tmp_path / "batchd")
    monkeypatch.setattr(__import__(__name__), "STUDIES", tmp_path / "batchd_studies")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    assert violations() == [
        "batchd/replay/oops.py:1 imports the studies (batchd_studies.cli)",
    ]
    assert studies_violations() == [
        "batchd_studies/oops.py:4: the studies import batchd.sched.registry",
    ]


def test_the_walk_finds_an_upward_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "batchd" / "sched"
    bad.mkdir(parents=True)
    (bad / "oops.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from batchd.server.service import BatchService\n"
        "def f():\n    import batchclient.qsub\n"
    )
    monkeypatch.setattr(__import__(__name__), "PACKAGE", tmp_path / "batchd")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    assert violations() == [
        "batchd/sched/oops.py:3: sched imports batchd.server.service",
        "batchd/sched/oops.py:5 imports the client (batchclient.qsub)",
    ]


def test_the_daemon_and_the_client_agree_on_the_default_socket(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import batchclient.transport as client
    from batchd.server.paths import default_socket as daemon_default

    # A user's commands look for a system daemon's socket first: none here.
    monkeypatch.setattr(client, "SYSTEM_SOCKET", str(tmp_path / "no-system-daemon.sock"))
    monkeypatch.delenv("RUNTIME_DIRECTORY", raising=False)  # only a systemd unit has it
    for runtime in (str(tmp_path), None):
        if runtime is None:
            monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
        else:
            monkeypatch.setenv("XDG_RUNTIME_DIR", runtime)
        assert daemon_default() == client.default_socket()
