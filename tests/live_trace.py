"""A seeded SWF trace, and a live daemon that replays it to the end: the two halves of
the tests that compare the daemon's schedule with ``batchd replay``'s."""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from daemon_proc import Daemon

MONDAY = 1_136_160_000  # Mon 2006-01-02 00:00 UTC


def write_trace(
    path: Path,
    jobs: int,
    seed: int,
    widths: Sequence[int],
    *,
    first: int,
    gap: int,
    longest: int,
    max_nodes: int | None = None,
) -> None:
    """``jobs`` jobs from Monday ``first`` seconds on, ``gap`` seconds apart at most, of
    ``widths``, running up to ``longest`` seconds; a third exactly as estimated, the others
    estimated at half to twice their runtime (some run past their estimate)."""
    rng = random.Random(seed)
    lines = ["; Version: 2.2", f"; UnixStartTime: {MONDAY}", "; TimeZoneString: UTC"]
    if max_nodes is not None:
        lines.append(f"; MaxNodes: {max_nodes}")
    t = first
    for i in range(1, jobs + 1):
        t += rng.randint(0, gap)
        width = rng.choice(widths)
        runtime = rng.randint(60, longest)
        estimate = runtime if rng.random() < 0.3 else rng.randint(runtime // 2, 2 * runtime)
        fields = [i, t, -1, runtime, width, -1, -1, width, max(estimate, 60), -1, 1, 1, 1, 1,
                  1, 1, -1, -1]  # fmt: skip
        lines.append(" ".join(map(str, fields)))
    path.write_text("\n".join(lines) + "\n")


def replayed_live(tmp: Path, site: Path, trace: Path, jobs: int) -> dict[int, dict[str, Any]]:
    """Every job of ``trace`` as the daemon on ``site`` ran it at 40,000x from the trace's
    start, by its number in the trace; the daemon stops cleanly."""
    with Daemon(
        tmp, "--speed", "40000", "--replay", str(trace), "--start", "trace", config=str(site)
    ) as d:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            server = d.call("GET", "/server")[1]
            if server["replay"]["cursor"] == jobs and server["jobs"]["F"] == jobs:
                break
            time.sleep(0.2)
        else:
            pytest.fail(f"the daemon did not finish the trace in time: {server}")
        listed = d.call("GET", "/jobs?history=true")[1]["jobs"]
        assert d.stop() == 0
    return {int(job["name"].removeprefix("swf")): job for job in listed}
