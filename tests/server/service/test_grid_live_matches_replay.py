"""One grid layer: a trace through a live grid daemon at high speed gives the replay's
schedule, job for job and machine for machine.

``batchd serve --replay TRACE --start trace`` on a grid site file runs the trace through
the same grid layer (``make_grid``, the same engine) as ``batchd replay --machine`` of
that file; every job must start and end on the same emulated second, on the same
machine and nodes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import live_trace
from batchd.replay import ReplayOptions, run_replay
from live_trace import MONDAY

SITE = """
[[machine]]
name = "a"
nodes = 4
node_prefix = "a"

[[machine]]
name = "b"
nodes = 12
node_prefix = "b"

[server]
timezone = "UTC"

[grid]
structure = "{structure}"

[grid.params]
{params}
"""


WIDTHS = [1, 1, 2, 3, 4, 4, 6, 8, 12]


def write_trace(path: Path, jobs: int, seed: int, widths: list[int] = WIDTHS) -> None:
    """A seeded SWF trace of jobs of ``widths`` (by default none wider than the widest
    machine), some past their estimate."""
    live_trace.write_trace(path, jobs, seed, widths, first=3600, gap=1800, longest=3 * 3600)


def live_schedule(tmp: Path, site: Path, trace: Path, jobs: int) -> dict[int, tuple[Any, ...]]:
    return {
        n: (
            job["stime"] - MONDAY,
            job["end_time"] - MONDAY,
            job["outcome"],
            job["machine"],
            job["exec_host"],
        )
        for n, job in live_trace.replayed_live(tmp, site, trace, jobs).items()
    }


@pytest.mark.parametrize(
    ("structure", "params"),
    [
        ("central", 'scheduler = "easy"\nselect = "bestfit-free"'),
        ("central", 'scheduler = "cons"\nselect = "equalutil-max"'),
        ("hierarchical", 'select = "equalutil-max"\nlocal = "fcfs-easy"\n"local.a" = "fcfs"'),
        ("multisite", 'select = "bestfit-free"\nmin_part = "2"\noverhead = "3"\np = "0.25"'),
    ],
)
def test_the_grid_daemon_schedules_a_trace_as_the_grid_replay_does(
    tmp_path: Path, structure: str, params: str
) -> None:
    jobs = 60
    site = tmp_path / "site.toml"
    site.write_text(SITE.format(structure=structure, params=params))
    trace = tmp_path / "trace.swf"
    multi = structure == "multisite"
    write_trace(trace, jobs, seed=len(params), widths=[*WIDTHS, 14, 16] if multi else WIDTHS)
    replay = run_replay(ReplayOptions(trace=str(trace), machine=str(site)))
    names = ["a", "b"]
    # Every run on a machine (a multi-site job's parts each, in machine order).
    runs: dict[int, list[Any]] = {}
    for run in replay.runs:
        runs.setdefault(run.id, []).append(run)
    expected = {
        j.id: (
            j.start,
            j.end,
            j.result.outcome,
            names[runs[j.id][0].machine],
            [
                f"{names[r.machine]}/{names[r.machine]}{n + 1:03d}"
                for r in runs[j.id]
                for n in r.units
            ],
        )
        for j in replay.jobs
    }
    assert len(expected) == jobs
    # Both machines ran jobs, and some job waited: the structure decided something.
    assert {m for _, _, _, m, _ in expected.values()} == {"a", "b"}
    if multi:  # some jobs ran split, wider than either machine or not
        assert replay.summary["grid"]["multisite_jobs"] > 3
    assert live_schedule(tmp_path, site, trace, jobs) == expected
