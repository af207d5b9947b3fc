"""Fixtures of the sweep tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from sweep_files import write_experiment, write_trace


@pytest.fixture
def small_sweep(tmp_path: Path) -> Path:
    """A 12-run experiment over two traces of this directory (relative paths)."""
    write_trace(tmp_path / "a.swf", seed=1)
    write_trace(tmp_path / "b.swf", seed=2)
    return write_experiment(
        tmp_path / "exp.toml",
        'traces = ["a.swf", "b.swf"]\nnodes = 32\npolicies = ["fcfs-easy", "dynp"]\n'
        'shrink = [1.0, 0.7]\n[sweep.params.dynp]\nquality = ["artww"]\n'
        "[sweep.params.fcfs-easy]\n",
    )
