"""Multi-site grids: which widths are refused, withdrawn jobs, and split jobs merged
back into one (started with its parts, ended with the last, killed if any part was)."""

from __future__ import annotations

import dataclasses

from gridutil import idle_grid, job, run_grid, table

from batchd.model.job import Job, TraceLine
from batchd.model.states import JobState
from batchd.model.utility import Utility
from batchd.sched.grid import make_grid
from batchd.sched.grid.multisite import MultisiteGrid, split_widths


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


def test_parts_carry_what_the_job_asked_for() -> None:
    # J1 w6 on m0 4 + m1 2 at its submission, 3; p = 0: no stretch.
    big = Job(
        id=1,
        submit=3,
        width=6,
        estimate=100,
        runtime=80,
        user="ann",
        queue="long",
        name="big",
        priority=5,
        trace=TraceLine((1, 3)),
        utility=Utility([(0, 10), (100, 0)]),
    )
    _, runs, _ = run_grid("multisite", [4, 4], [big])
    assert [(j.machine, j.width) for j in runs] == [(0, 4), (1, 2)]
    for p in runs:
        assert (p.id, p.submit, p.user, p.queue, p.name, p.priority) == (
            1,
            3,
            "ann",
            "long",
            "big",
            5,
        )
        assert (p.estimate, p.runtime, p.start, p.end) == (100, 80, 3, 83)
        assert p.trace == TraceLine((1, 3))
        assert p.utility is big.utility


def test_split_widths_takes_machines_with_exactly_min_part_free() -> None:
    assert split_widths(5, [3, 2], 2) == [(0, 3), (1, 2)]
    assert split_widths(5, [3, 1, 2], 2) == [(0, 3), (2, 2)]
    # 3 + 1: the last takes 1 more, leaving the first exactly min_part
    assert split_widths(4, [3, 3], 2) == [(0, 2), (1, 2)]
    # three parts: 4 + 4 + 1 -> 4 + 3 + 2
    assert split_widths(9, [4, 4, 4], 2) == [(0, 4), (1, 3), (2, 2)]


# m0 and m1 of 4. J1 w6 100 s splits 4 + 2; J2 w2 10 s takes m1's last 2 nodes;
# J3 w2 10 s finds none (FCFS: waits) and starts at 10 on m1. Two split jobs at 200
# (J4 w8 and J5 w5 behind it) count twice.
def test_a_split_uses_up_the_free_nodes_it_takes() -> None:
    jobs = [
        job(1, 0, 6, 100),
        job(2, 0, 2, 10),
        job(3, 0, 2, 10),
        job(4, 200, 8, 10),
        job(5, 200, 5, 10),
    ]
    layer, _, out = run_grid("multisite", [4, 4], jobs)
    assert table(out) == {
        1: (0, 0, 100),
        2: (1, 0, 10),
        3: (1, 10, 20),
        4: (0, 200, 210),
        5: (0, 210, 220),
    }
    assert layer.stats.multisite_jobs == 3


# m0 4 nodes, m1 2. J1 w4 100 s -> m0, the only machine wide enough; J2 w4 10 s can
# start on no machine (m0 is full) and not split (2 free in all): it waits for m0;
# J3 w2 10 s waits behind it (FCFS) and starts at 100 on m1.
def test_a_machine_without_the_free_nodes_is_no_candidate() -> None:
    jobs = [job(1, 0, 4, 100), job(2, 0, 4, 10), job(3, 0, 2, 10)]
    _, _, out = run_grid("multisite", [4, 2], jobs)
    assert table(out) == {1: (0, 0, 100), 2: (0, 100, 110), 3: (1, 100, 110)}
    jobs = [job(1, 0, 4, 100), job(2, 0, 3, 100), job(3, 0, 2, 10)]
    _, _, out = run_grid("multisite", [4, 4], jobs)
    # J3 finds 1 free node (m1): neither alone nor split; waits for J2's end at 100.
    assert table(out) == {1: (0, 0, 100), 2: (1, 0, 100), 3: (0, 100, 110)}


# equalutil-free: J1 w2 util tie -> m0 (2/4 busy); J2 w2: m1 0 < 2/4 -> m1.
# random-free draws from the layer's seeded generator.
def test_multisite_selects_by_its_strategy() -> None:
    jobs = [job(1, 0, 2, 10), job(2, 0, 2, 10)]
    _, _, out = run_grid("multisite", [4, 8], jobs, select="equalutil-free")
    assert table(out) == {1: (0, 0, 10), 2: (1, 0, 10)}
    many = [job(i, 0, 1, 10) for i in range(1, 21)]

    def machines(seed: int) -> list[int]:
        jobs = [dataclasses.replace(j) for j in many]
        return [
            j.machine for j in run_grid("multisite", [20, 20], jobs, seed, select="random-free")[2]
        ]

    assert machines(4) == machines(4)
    assert machines(4) != machines(5)


def test_a_split_job_without_runtime_adds_no_node_seconds() -> None:
    # J1 w6, runtime 0 (estimate 10), split 4 + 2 with model 1 and p = 1 (factor 4):
    # 0 s stretched is 0 s.
    layer, _, _ = run_grid("multisite", [4, 4], [job(1, 0, 6, 0, estimate=10)], p="1")
    assert (layer.stats.multisite_jobs, layer.stats.multisite_added_node_seconds) == (1, 0)
