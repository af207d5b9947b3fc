"""An EASY replay of an SWF trace imports only what it runs: each module a run imports
is loaded (and, without a bytecode cache, compiled) on every run."""

from __future__ import annotations

import subprocess
import sys

from paths import DATA, ROOT

# Modules a plain EASY replay never needs: the grid layer (--grid-param), the planners'
# arrays, and what a type hint or a shrink factor pulled in.
UNNEEDED = ("batchd.sched.grid", "numpy", "concurrent.futures", "logging", "fractions")

SCRIPT = """
import sys
from batchd import cli
code = cli.main(["replay", sys.argv[1], "--policy", "fcfs-easy"])
print(" ".join(sorted(sys.modules)))
sys.exit(code)
"""


def test_an_easy_replay_imports_none_of_the_unneeded_modules() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(DATA / "sched_easy_extra.swf")],
        env={"PYTHONPATH": str(ROOT / "daemon"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    loaded = set(out.stdout.splitlines()[-1].split())
    assert "batchd.engine.core" in loaded  # the run did replay
    assert sorted(m for m in UNNEEDED if m in loaded) == []
