"""One way to change state: a route that changes something calls one operation
(server/service/operations), and an operation makes its change inside one
``svc.change()`` (one change, one scheduling pass, one commit).

Read from the source: each POST, PATCH, PUT and DELETE handler of server/routes.py
calls exactly one ``op.KIND.NAME``; each function of the operations package opens
``svc.change()`` at most once, and nothing outside it and the facade's ``Changes``
opens one.
"""

from __future__ import annotations

import ast
from pathlib import Path

from paths import ROOT

SERVER = ROOT / "daemon" / "batchd" / "server"
OPERATIONS = SERVER / "service" / "operations"
CHANGING = {"post", "patch", "put", "delete"}
READS_BY_POST = {"/plan"}  # validated and planned, not made
# Loads what a change will need (compiled kernels) off the loop, changes nothing.
PREPARATIONS = {"scheduler.kernels_for"}


def _route(fn: ast.AsyncFunctionDef) -> tuple[str, str] | None:
    for deco in fn.decorator_list:
        if (
            isinstance(deco, ast.Call)
            and isinstance(deco.func, ast.Attribute)
            and isinstance(deco.func.value, ast.Name)
            and deco.func.value.id == "routes"
            and deco.args
            and isinstance(deco.args[0], ast.Constant)
        ):
            return deco.func.attr, str(deco.args[0].value)
    return None


def operation_calls(fn: ast.AST) -> list[str]:
    """The ``op.KIND.NAME(...)`` calls in ``fn``, as ``KIND.NAME``."""
    found = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            kind = node.func.value
            if (
                isinstance(kind, ast.Attribute)
                and isinstance(kind.value, ast.Name)
                and kind.value.id == "op"
            ):
                found.append(f"{kind.attr}.{node.func.attr}")
    return found


def changes_opened(fn: ast.AST) -> int:
    """How many ``with svc.change():`` blocks ``fn`` opens."""
    count = 0
    for node in ast.walk(fn):
        if isinstance(node, ast.With):
            for item in node.items:
                call = item.context_expr
                if (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "change"
                ):
                    count += 1
    return count


def changing_routes() -> dict[str, list[str]]:
    tree = ast.parse((SERVER / "routes.py").read_text())
    out: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.AsyncFunctionDef):
            route = _route(node)
            if route is not None and route[0] in CHANGING and route[1] not in READS_BY_POST:
                calls = [c for c in operation_calls(node) if c not in PREPARATIONS]
                out[f"{route[0].upper()} {route[1]}"] = calls
    return out


def test_each_changing_route_calls_one_operation() -> None:
    routes = changing_routes()
    assert len(routes) >= 15  # jobs, nodes, queues, reservations, scheduler, server
    wrong = {route: calls for route, calls in routes.items() if len(calls) != 1}
    assert not wrong, f"a changing route must call exactly one operation: {wrong}"


def test_each_operation_opens_one_change_at_most() -> None:
    for path in sorted(OPERATIONS.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                opened = changes_opened(node)
                assert opened <= 1, f"{path.name}:{node.name} opens {opened} changes"


def test_changes_are_opened_by_operations_only() -> None:
    outside = []
    for path in sorted(SERVER.rglob("*.py")):
        if OPERATIONS in path.parents:
            continue
        if changes_opened(ast.parse(path.read_text())):
            outside.append(path.relative_to(SERVER).as_posix())
    assert outside == [], f"svc.change() is opened outside the operations: {outside}"


def test_the_checks_see_what_they_look_for() -> None:
    handler = ast.parse(
        "async def h(request):\n"
        "    rec = op.jobs.hold(svc, c, ref, t)\n"
        "    op.jobs.release(svc, c, ref, t)\n"
    )
    assert operation_calls(handler) == ["jobs.hold", "jobs.release"]
    assert operation_calls(ast.parse("svc.hold(c, ref)\ncommands.rerun(svc, c, ref)")) == []
    twice = (
        "def f(svc):\n    with svc.change():\n        pass\n    with svc.change():\n        pass\n"
    )
    assert changes_opened(ast.parse(twice)) == 2
    assert Path(OPERATIONS / "__init__.py").is_file()
