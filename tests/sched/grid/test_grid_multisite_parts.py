"""Multi-site grids: which widths are refused, withdrawn jobs, and split jobs merged
back into one (started with its parts, ended with the last, killed if any part was)."""

from __future__ import annotations

import dataclasses

from gridutil import idle_grid, job, run_grid

from batchd.model.job import Job
from batchd.model.states import JobState
from batchd.sched.grid import make_grid
from batchd.sched.grid.multisite import MultisiteGrid


def multisite(sizes: list[int], **params: str) -> MultisiteGrid:
    layer = make_grid("multisite", params, [(f"m{i}", n) for i, n in enumerate(sizes)])
    assert isinstance(layer, MultisiteGrid)
    return layer


def test_width_refusal() -> None:
    layer = multisite([4, 4])
    assert layer.width_refusal(4) is None  # one machine
    assert layer.width_refusal(6) is None  # split 4 + 2
    assert layer.width_refusal(8) is None  # the whole grid
    assert layer.width_refusal(9) == "the grid's machines have 8 in all (multisite)"
    # min_part 3: 5 = 4 + 1 cannot be evened out (4 - 2 < 3); 7 = 4 + 3 can.
    layer = multisite([4, 4], min_part="3")
    assert layer.width_refusal(7) is None
    assert layer.width_refusal(5) == (
        "it is wider than every machine and cannot be split over them in parts of at "
        "least 3 nodes (min_part)"
    )
    assert multisite([2, 6, 4]).width_refusal(12) is None
    assert multisite([2, 6, 4]).width_refusal(13) == (
        "the grid's machines have 12 in all (multisite)"
    )


def test_withdraw_and_waiting() -> None:
    layer, _ = idle_grid("multisite", [4, 4])
    a, b = job(1, 0, 6, 10), job(2, 0, 1, 10)
    layer.submitted(a)
    layer.submitted(b)
    assert layer.waiting_on(0) == [a, b]
    assert layer.waiting_on(1) == []
    layer.withdraw(a)
    assert layer.waiting_on(0) == [b]


def test_forget_drops_a_split_job() -> None:
    layer, _, _ = run_grid("multisite", [4, 4], [job(1, 0, 6, 100), job(2, 0, 2, 10)], p="1")
    assert isinstance(layer, MultisiteGrid)
    assert list(layer.parents) == [1]
    layer.forget(2)
    assert list(layer.parents) == [1]
    layer.forget(1)
    assert layer.parents == {}


def part(parent: Job, machine: int, width: int, end: int, killed: bool) -> Job:
    done = dataclasses.replace(
        parent,
        machine=machine,
        width=width,
        state=JobState.FINISHED,
        start=5,
        end=end,
        units=list(range(width)),
    )
    done.result = dataclasses.replace(
        parent.result,
        killed=killed,
        outcome="walltime" if killed else "ok",
        started_by=f"by-{machine}",
    )
    return done


def test_merge_parts_by_hand() -> None:
    layer = multisite([4, 4, 4])
    parent = job(7, 0, 9, 100)
    layer.parents[7] = parent
    alone = dataclasses.replace(job(3, 0, 2, 10), state=JobState.FINISHED, start=1, end=11)
    for killed in ((False, True, False), (True, False, False), (False, False, False)):
        parts = [
            part(parent, 2, 4, 40, killed[0]),
            part(parent, 0, 4, 60, killed[1]),
            part(parent, 1, 1, 50, killed[2]),
        ]
        merged = layer.merge_parts([parts[0], alone, parts[1], parts[2]])
        assert [j.id for j in merged] == [3, 7]
        assert merged[0] is alone
        one = merged[1]
        assert (one.machine, one.width, one.start, one.end) == (2, 9, 5, 60)
        assert (one.state, one.units) == (JobState.FINISHED, [])
        assert one.result.killed == any(killed)
        assert one.result.outcome == ("walltime" if any(killed) else "ok")
        assert one.result.started_by == "by-2"
        assert parent.state is JobState.QUEUED  # the job as submitted is not changed


def test_merge_parts_of_a_job_killed_at_its_estimate() -> None:
    # J1 w6 runtime 100, estimate 50: both parts (m0 4, m1 2) are killed at 50.
    _, runs, out = run_grid("multisite", [4, 4], [job(1, 0, 6, 100, estimate=50), job(2, 0, 2, 10)])
    assert [(j.id, j.width, j.result.outcome) for j in runs] == [
        (1, 4, "walltime"),
        (1, 2, "walltime"),
        (2, 2, "ok"),
    ]
    merged = out[0]
    assert (merged.id, merged.width, merged.end, merged.result.killed) == (1, 6, 50, True)
    assert merged.result.outcome == "walltime"
    assert merged.result.started_by == "grid-multisite"
