"""The layers of the code: model <- workload <- sched <- engine <- replay and server.

Every import in the package, absolute or relative, at the top of a module, inside a
function or only for type checking, goes down the layers or stays in its own. The
daemon never imports the client. Inside sched the rooms have layers of their own
(kernels <- core <- policies <- ga, registry <- grid), and no module of sched
imports, even lazily, one that imports it back. The studies (daemon/batchd_studies)
build on batchd's public parts only, and batchd never imports them.
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


def module_of(path: Path) -> str:
    """The dotted name of a module of the package (a package's is its directory's)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def absolute(path: Path, node: ast.ImportFrom) -> str:
    """The module a ``from`` import names, a relative one resolved against ``path``."""
    if node.level == 0:
        return node.module or ""
    package = module_of(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]  # a module's imports are relative to its package
    base = package[: len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imports(path: Path, typing: bool = True) -> list[tuple[int, str]]:
    """Every module ``path`` imports, with its line; ``typing=False`` leaves out the
    imports only for type checking (under ``if TYPE_CHECKING:``), which never run.
    ``from P import name`` counts as importing ``P.name`` when that is a module."""
    tree = ast.parse(path.read_text(), str(path))
    skipped: set[int] = set()
    if not typing:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
                skipped |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = absolute(path, node)
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                out.append((node.lineno, sub if is_module(sub) else module))
    return out


def is_module(name: str) -> bool:
    if not name.startswith("batchd."):
        return False
    where = PACKAGE.parent.joinpath(*name.split("."))
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


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


SCHED = PACKAGE / "sched"
# What each room of sched may import besides itself (and model).
SCHED_ALLOWED: dict[str, set[str]] = {
    "kernels": set(),
    "core": {"kernels"},
    "policies": {"core", "kernels"},
    "ga": {"core", "kernels", "policies"},
    "registry": {"core", "kernels", "policies", "ga"},
    "grid": {"core", "kernels", "policies", "registry"},
    "__init__": set(),
}


def room_of(module: str) -> str:
    return module.split(".")[2] if module.count(".") >= 2 else "__init__"


def sched_violations() -> list[str]:
    found = []
    for path in sorted(SCHED.rglob("*.py")):
        room = room_of(module_of(path))
        for line, module in imports(path):
            if not module.startswith("batchd.sched."):
                continue
            target = room_of(module)
            if target != room and target not in SCHED_ALLOWED[room]:
                found.append(f"{path.relative_to(ROOT)}:{line}: sched.{room} imports {module}")
    return found


def import_cycles(root: Path) -> list[list[str]]:
    """The modules under ``root`` that import each other round a circle, each circle
    sorted (Tarjan's strongly connected components of the imports that run)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        graph[module_of(path)] = {m for _, m in imports(path, typing=False)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                cycles.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return cycles


def test_the_rooms_of_sched_go_down() -> None:
    assert sched_violations() == []


def test_no_module_of_sched_imports_one_that_imports_it_back() -> None:
    assert import_cycles(SCHED) == []


def test_the_cycle_walk_finds_a_lazy_circle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = tmp_path / "batchd" / "sched"
    (pkg / "core").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "core" / "__init__.py").write_text("")
    (pkg / "core" / "policy.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from batchd.sched.core.forecast import F\n"
        "def build():\n    from batchd.sched import registry\n"
    )
    (pkg / "core" / "forecast.py").write_text("from .policy import build\n")
    (pkg / "registry.py").write_text("from .core import policy\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", tmp_path / "batchd")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    # forecast -> policy only for type checking back: no circle; registry <-> policy is one.
    assert import_cycles(pkg) == [["batchd.sched.core.policy", "batchd.sched.registry"]]
    monkeypatch.setattr(__import__(__name__), "SCHED", pkg)
    assert sched_violations() == [
        "batchd/sched/core/policy.py:5: sched.core imports batchd.sched.registry"
    ]


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
