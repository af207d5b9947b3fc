"""Small traces and experiment files for the sweep tests (tests/sweep)."""

from __future__ import annotations

import random
from pathlib import Path


def write_trace(path: Path, jobs: int = 120, seed: int = 1) -> Path:
    """An SWF trace of ``jobs`` random jobs on a 32-node machine (milliseconds to replay)."""
    rng = random.Random(seed)
    lines = ["; MaxNodes: 32", "; MaxProcs: 32"]
    submit = 0
    for i in range(1, jobs + 1):
        submit += rng.randint(0, 600)
        run = rng.randint(10, 3600)
        width = rng.choice([1, 2, 4, 8, 16, 32])
        estimate = run * rng.choice([1, 2, 3])
        fields = [i, submit, -1, run, width, -1, -1, width, estimate, -1, 1, 1, 1, 1, 1, 1, -1, -1]
        lines.append(" ".join(map(str, fields)))
    path.write_text("\n".join(lines) + "\n")
    return path


def write_experiment(path: Path, body: str) -> Path:
    path.write_text("[sweep]\n" + body)
    return path
