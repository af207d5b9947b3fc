"""Every test can fail: it checks something, and no check of it holds whatever the code does.

A test function must hold an ``assert``, a ``raise``, a ``pytest.raises``/``warns``/
``fail``/``skip``, a call ``check=True`` or an ``assert_*`` method, or call a helper
of the tests that does (helpers are followed by name, through any depth). An ``assert``
of a constant or a tuple, or of a name compared with itself, holds always. What this
cannot see, the mutation runs (``make mutate``) find: a test whose checks pass with the
line they are about changed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from paths import ROOT

TESTS = ROOT / "tests"
Function = ast.FunctionDef | ast.AsyncFunctionDef
CHECKING_CALLS = frozenset({"raises", "warns", "fail", "skip", "xfail", "deprecated_call"})


def called_name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def checks_itself(function: Function) -> bool:
    for node in ast.walk(function):
        if isinstance(node, ast.Assert | ast.Raise):
            return True
        if isinstance(node, ast.Call):
            name = called_name(node)
            if name in CHECKING_CALLS or name.startswith("assert"):
                return True
            if any(
                k.arg == "check" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in node.keywords
            ):
                return True
    return False


def functions(tree: ast.AST) -> Iterator[Function]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def parsed() -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(), str(path)) for path in sorted(TESTS.rglob("*.py"))}


def checking_helpers(trees: dict[Path, ast.Module]) -> set[str]:
    """Names of the functions in tests/ that check something, directly or through others."""
    defined: dict[str, list[Function]] = {}
    for tree in trees.values():
        for function in functions(tree):
            defined.setdefault(function.name, []).append(function)
    checking = {name for name, fs in defined.items() if any(checks_itself(f) for f in fs)}
    grown = True
    while grown:
        grown = False
        for name, fs in defined.items():
            if name not in checking and any(calls(f) & checking for f in fs):
                checking.add(name)
                grown = True
    return checking


def calls(function: Function) -> set[str]:
    return {called_name(node) for node in ast.walk(function) if isinstance(node, ast.Call)}


def all_tests(trees: dict[Path, ast.Module]) -> Iterator[tuple[Path, Function]]:
    for path, tree in trees.items():
        if path.name.startswith("test_"):
            for function in functions(tree):
                if function.name.startswith("test"):
                    yield path, function


def always_true(test: ast.expr) -> bool:
    if isinstance(test, ast.Constant | ast.Tuple):
        return bool(test.value) if isinstance(test, ast.Constant) else bool(test.elts)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return any(always_true(value) for value in test.values)
    if isinstance(test, ast.Compare) and len(test.comparators) == 1:
        left, right = test.left, test.comparators[0]
        plain = ast.Name | ast.Attribute | ast.Constant | ast.Subscript
        return (
            isinstance(left, plain)
            and isinstance(test.ops[0], ast.Eq | ast.Is | ast.LtE | ast.GtE)
            and ast.dump(left) == ast.dump(right)
        )
    return False


def where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"


def test_every_test_checks_something() -> None:
    trees = parsed()
    helpers = checking_helpers(trees)
    unchecked = [
        f"{where(path, test)} {test.name}"
        for path, test in all_tests(trees)
        if not checks_itself(test) and not calls(test) & helpers
    ]
    assert unchecked == []


def test_no_assert_holds_whatever_the_code_does() -> None:
    trees = parsed()
    vacuous = [
        where(path, node)
        for path, test in all_tests(trees)
        for node in ast.walk(test)
        if isinstance(node, ast.Assert) and always_true(node.test)
    ]
    assert vacuous == []


def test_the_scan_finds_what_it_is_for() -> None:
    sample = ast.parse(
        "def test_runs():\n    run()\n"
        "def test_true():\n    assert True\n"
        "def test_tuple():\n    assert (x == 1, 'message')\n"
        "def test_same():\n    assert a.b == a.b\n"
        "def test_or():\n    assert f() or 1\n"
        "def test_real():\n    assert f() == f()\n    assert x == 1\n"
        "def test_raises():\n    with pytest.raises(ValueError):\n        run()\n"
        "def check(x):\n    assert x\n"
        "def test_helper():\n    check(run())\n"
    )
    trees = {TESTS / "test_sample.py": sample}
    helpers = checking_helpers(trees)
    unchecked = [
        t.name for _, t in all_tests(trees) if not checks_itself(t) and not calls(t) & helpers
    ]
    assert unchecked == ["test_runs"]
    vacuous = [
        t.name
        for _, t in all_tests(trees)
        for node in ast.walk(t)
        if isinstance(node, ast.Assert) and always_true(node.test)
    ]
    assert vacuous == ["test_true", "test_tuple", "test_same", "test_or"]
