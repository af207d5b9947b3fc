"""What a command costs before it does anything: qsub and qstat import little
(bench/client_startup.py times them), and what they do without is not missed."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys

import pytest

from batchclient.cli import Parser, terminal_columns

# Each costs a fresh command milliseconds to import; none is needed on a Unix socket.
HEAVY = (
    "http.client",
    "email.parser",
    "ssl",
    "socket",
    "urllib.parse",
    "dataclasses",
    "inspect",
    "typing",
    "shutil",
    "pathlib",
)


@pytest.mark.parametrize("command", ["qsub", "qstat"])
def test_a_command_imports_none_of_the_heavy_modules(command):
    code = (
        "import sys; before = set(sys.modules); "
        f"import batchclient.{command}; "
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules and m not in before))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "[]\n"


@pytest.mark.parametrize("columns", [None, "50", "200", "0", "wide"])
def test_the_terminal_width_is_shutils(monkeypatch, columns):
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert terminal_columns() == shutil.get_terminal_size().columns


@pytest.mark.parametrize("columns", ["40", "100"])
def test_help_is_wrapped_as_argparse_wraps_it(monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", columns)

    def fill(p: argparse.ArgumentParser) -> str:
        p.add_argument("-l", dest="res", metavar="RES[,RES...]", help="resources " * 12)
        p.add_argument("-q", dest="queue", help="destination queue")
        p.add_argument("script", nargs="?", help="job script (default: stdin)")
        return p.format_help()

    plain = argparse.ArgumentParser(prog="qsub", usage="qsub [-l RES] [script]", add_help=False)
    plain.add_argument("--help", action="help", help="show this help and exit")
    assert fill(Parser("qsub", usage="qsub [-l RES] [script]")) == fill(plain)
