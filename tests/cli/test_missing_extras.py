"""A command that needs a package of an extra `make run` leaves out says which extra to
install, in one line; any other missing module is a bug and shows as one."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from batchd import cli


def needs(module: str) -> Any:
    def command(args: Any) -> int:
        __import__(module)
        return 0

    return command


def test_a_missing_extra_is_named(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    monkeypatch.setattr(cli, "cmd_warm", needs("matplotlib"))
    assert cli.main(["warm"]) == cli.EXIT_USAGE
    assert capsys.readouterr().err == (
        "batchd: error: this needs matplotlib, which is not installed: "
        "pip install 'batchd[report]' (in a checkout, make test installs every extra)\n"
    )


def test_another_missing_module_is_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "no_such_module_here", None)
    monkeypatch.setattr(cli, "cmd_warm", needs("no_such_module_here"))
    with pytest.raises(ModuleNotFoundError):
        cli.main(["warm"])
