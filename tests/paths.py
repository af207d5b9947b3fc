"""Where the tests find the repository, their data files and the shared traces."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
TRACES = ROOT.parent / "shared" / "traces"
