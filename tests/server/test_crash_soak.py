"""The crash soak (bench/soak_crash.py) on a few cycles: ``pytest -m soak``.

Not in the default run: each cycle kills ``batchd serve`` with SIGKILL during a fast
replay with concurrent qsub clients, restarts it and checks every job through the API.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from paths import ROOT


def load_soak() -> ModuleType:
    """bench/soak_crash.py as a module (bench/ is no package)."""
    spec = importlib.util.spec_from_file_location("soak_crash", ROOT / "bench" / "soak_crash.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.soak
def test_kill_9_during_a_replay_with_concurrent_clients(tmp_path: Path) -> None:
    soak = load_soak()
    result = soak.run(soak.Options(cycles=5, seed=7), tmp_path)
    assert result.violations == []
    assert len(result.cycles) == 5
    assert sum(c.acked for c in result.cycles) > 0, "no submission was acknowledged"
    assert result.cycles[-1].cursor > result.cycles[0].cursor, "the trace feed did not go on"
