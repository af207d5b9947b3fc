"""One scheduler: a trace through the live daemon at high speed gives the replay's schedule.

The site has queue windows (and, in one case, prime time inside them); the trace starts
on a Monday by its header. ``batchd serve --replay TRACE --start trace`` runs it on an
accelerated clock that starts when the trace's first job arrived, and every job must
start and end on the same emulated second as in ``batchd replay`` of the same site file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import live_trace
from batchd.engine.core import StuckJobsError
from batchd.replay import ReplayOptions, run_replay
from live_trace import MONDAY

NODES = 16

SITE = """
[[machine]]
name = "live"
nodes = 16

[server]
policy = "{policy}"
timezone = "UTC"
default_queue = "day"
overflow = "{overflow}"
{params}

[[queue]]
name = "day"
window = ["{window}"]

[[queue]]
name = "any"
"""


def write_trace(path: Path, jobs: int, seed: int) -> None:
    """A seeded SWF trace over two and a half days, some jobs longer than their estimate."""
    live_trace.write_trace(
        path, jobs, seed, [1, 1, 2, 4, 4, 8, 12, 16],
        first=6 * 3600, gap=5400, longest=5 * 3600, max_nodes=NODES,
    )  # fmt: skip


def live_schedule(tmp: Path, site: Path, trace: Path, jobs: int) -> dict[int, tuple[Any, ...]]:
    return {
        n: (
            job["stime"] - MONDAY if job["stime"] is not None else None,
            job["end_time"] - MONDAY,
            job["outcome"],
        )
        for n, job in live_trace.replayed_live(tmp, site, trace, jobs).items()
    }


DAY = "Mon-Fri 07:00-21:00"
PRIMETIME = (
    '[server.policy_params]\nprime_nodes = "50%"\nprime_runtime = "30%"\ndiscipline = "easy"'
)


@pytest.mark.parametrize(
    ("policy", "overflow", "params", "window"),
    [
        ("fcfs-easy", "kill", "", DAY),
        ("sjf-cons", "requeue", "", DAY),
        # Large jobs run in non-prime time, weekday nights inside the weekday window.
        ("primetime", "kill", PRIMETIME, "Mon-Fri 00:00-24:00"),
    ],
)
def test_the_daemon_schedules_a_trace_as_the_replay_does(
    tmp_path: Path, policy: str, overflow: str, params: str, window: str
) -> None:
    jobs = 60
    site = tmp_path / "site.toml"
    site.write_text(SITE.format(policy=policy, overflow=overflow, params=params, window=window))
    trace = tmp_path / "trace.swf"
    write_trace(trace, jobs, seed=len(policy))
    replay = run_replay(ReplayOptions(trace=str(trace), machine=str(site)))
    expected = {
        j.id: (j.start if j.start >= 0 else None, j.end, j.result.outcome) for j in replay.jobs
    }
    assert len(expected) == jobs
    assert {o for _, _, o in expected.values()} >= {"ok"}
    # The windows matter: some job waited for its queue to open, or overflowed at its close.
    held_back = [
        i
        for i, (s, _, o) in expected.items()
        if o == "overflow" or (s is not None and s >= 21 * 3600)
    ]
    assert held_back
    assert live_schedule(tmp_path, site, trace, jobs) == expected


def test_a_replay_whose_jobs_no_window_lets_run_stops_and_says_why(tmp_path: Path) -> None:
    """Large prime-time jobs must fit in non-prime time and in the queue's day window
    (19:00-21:00 on weekdays): those over two hours never run."""
    site = tmp_path / "site.toml"
    site.write_text(SITE.format(policy="primetime", overflow="kill", params=PRIMETIME, window=DAY))
    trace = tmp_path / "trace.swf"
    write_trace(trace, 60, seed=9)
    with pytest.raises(StuckJobsError, match="no window lets them run .*nonprime time"):
        run_replay(ReplayOptions(trace=str(trace), machine=str(site)))


def test_the_daemon_serves_priority_classes_as_the_replay_does(tmp_path: Path) -> None:
    """prio-fifo on a trace whose jobs carry priority_class= tokens (as `batchd utility`
    writes them): `serve --replay` injects each job with its class."""
    jobs = 60
    site = tmp_path / "site.toml"
    site.write_text(SITE.format(policy="prio-fifo", overflow="kill", params="", window=DAY))
    trace = tmp_path / "trace.swf"
    write_trace(trace, jobs, seed=3)
    lines = trace.read_text().splitlines()
    trace.write_text(
        "\n".join(
            line if line.startswith(";") else f"{line} priority_class={int(line.split()[0]) % 3}"
            for line in lines
        )
        + "\n"
    )
    replay = run_replay(ReplayOptions(trace=str(trace), machine=str(site)))
    expected = {
        j.id: (j.start if j.start >= 0 else None, j.end, j.result.outcome) for j in replay.jobs
    }
    fcfs = run_replay(ReplayOptions(trace=str(trace), machine=str(site), policy="fcfs-easy"))
    # The classes matter: fcfs-easy, which ignores them, starts some job at another time.
    assert {j.id: j.start for j in fcfs.jobs} != {j.id: j.start for j in replay.jobs}
    assert live_schedule(tmp_path, site, trace, jobs) == expected


def test_a_machine_of_shared_nodes_runs_a_trace_as_the_replay_does(tmp_path: Path) -> None:
    """4 nodes of 4 cores shared: the trace's widths are cores, live as in the replay."""
    jobs = 60
    site = tmp_path / "site.toml"
    text = SITE.format(policy="fcfs-easy", overflow="kill", params="", window=DAY)
    site.write_text(text.replace("nodes = 16", "nodes = 4\ncores_per_node = 4\nshared = true"))
    trace = tmp_path / "trace.swf"
    write_trace(trace, jobs, seed=5)
    replay = run_replay(ReplayOptions(trace=str(trace), machine=str(site)))
    assert replay.summary["nodes"] == NODES  # 16 cores
    expected = {
        j.id: (j.start if j.start >= 0 else None, j.end, j.result.outcome) for j in replay.jobs
    }
    assert live_schedule(tmp_path, site, trace, jobs) == expected
