"""The grid layer's own parts: its ports, the pass shared between them, homes, widths."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from gridutil import job

from batchd.model.job import Job, TraceLine
from batchd.sched.core.plans import running_arrays_of
from batchd.sched.core.policy import Placement
from batchd.sched.grid import GridLayer, GridParams, make_grid


class Recording(GridLayer):
    """A layer that records the events its ports hand it and plans one job a machine."""

    def __init__(self, nodes: list[int]) -> None:
        names = [f"m{i}" for i in range(len(nodes))]
        super().__init__(GridParams("central"), nodes, names, 0)
        self.events: list[tuple[str, int | None, int]] = []
        self.passes = 0

    def submitted(self, job: Job) -> None:
        self.events.append(("submitted", None, job.id))

    def withdraw(self, job: Job) -> None:
        self.events.append(("withdraw", None, job.id))

    def ended(self, machine: int, job: Job) -> None:
        self.events.append(("ended", machine, job.id))

    def resumed(self, machine: int, job: Job) -> None:
        self.events.append(("resumed", machine, job.id))

    def invalidate(self, machine: int) -> None:
        self.events.append(("invalidate", machine, 0))

    def waiting_on(self, machine: int) -> list[Job]:
        return [job(10 + machine, 0, 1, 1)]

    def plan_pass(self) -> list[list[Placement]]:
        self.passes += 1
        return [[self.place(job(self.passes * 10 + i, 0, 1, 1), i)] for i in range(self.n)]


class View:
    def __init__(self, now: int = 0, running: tuple[tuple[int, int], ...] = ()) -> None:
        self.now = now
        self._running = running

    def running_ends(self) -> list[int]:
        return [end for end, _ in self._running]

    def running_widths(self) -> list[int]:
        return [w for _, w in self._running]

    def running_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return running_arrays_of(self)


def test_ports_hand_every_event_to_the_layer() -> None:
    layer = Recording([2, 4])
    port = layer.ports[1]
    assert [p.machine for p in layer.ports] == [0, 1]
    assert port.layer is layer
    assert port.name == "grid-central"
    assert port.grid_wide
    assert port.order() == "FCFS"
    j = job(7, 0, 1, 1)
    view = None
    port.job_submitted(view, j)  # type: ignore[arg-type]
    port.job_ended(view, j)  # type: ignore[arg-type]
    port.withdraw(view, j)  # type: ignore[arg-type]
    port.job_resumed(view, j)  # type: ignore[arg-type]
    port.invalidate()
    assert layer.events == [
        ("submitted", None, 7),
        ("ended", 1, 7),
        ("withdraw", None, 7),
        ("resumed", 1, 7),
        ("invalidate", 1, 0),
    ]
    assert [j.id for j in port.waiting()] == [11]


def test_the_first_port_asked_decides_the_whole_pass() -> None:
    layer = Recording([2, 4, 8])
    ports = layer.ports
    # pass 1: asked in any order, each machine gets its share of one plan
    assert [(p.job.id, p.machine) for p in ports[1].schedule(None)] == [(11, 1)]  # type: ignore[arg-type]
    assert [p.job.id for p in ports[0].schedule(None)] == [10]  # type: ignore[arg-type]
    assert [p.job.id for p in ports[2].schedule(None)] == [12]  # type: ignore[arg-type]
    assert layer.passes == 1
    # a machine asked again starts the next pass
    assert [p.job.id for p in layer.placements(0)] == [20]
    assert [p.job.id for p in layer.placements(0)] == [30]
    assert layer.passes == 3
    assert [p.job.id for p in layer.placements(2)] == [32]
    assert [p.job.id for p in layer.placements(1)] == [31]
    placed = layer.placements(1)[0]
    assert (placed.machine, placed.width, placed.job.machine) == (1, 1, 1)


def test_attach_wants_one_view_per_machine() -> None:
    layer = Recording([2, 4])
    with pytest.raises(ValueError, match="^the grid layer has 2 machines, the engine 1$"):
        layer.attach([View()])  # type: ignore[list-item]
    layer.attach([View(5), View(5)])  # type: ignore[list-item]
    assert layer.now == 5
    assert layer.n == 2


def test_the_defaults_of_a_layer() -> None:
    layer = Recording([2, 4])
    j = job(3, 0, 1, 1)
    assert layer.assigned(j) is None
    assert layer.planned() == []
    assert layer.local_policy(0) is None
    assert layer.merge_parts([j]) == [j]
    layer.resume(j, 1)
    assert layer.events == [("submitted", None, 3)]
    base = make_grid("central", {}, [("m0", 4)])
    base.ended(0, j)  # nothing to do for central
    base.invalidate(0)
    base.resumed(0, j)


def test_stretch_job_keeps_the_requested_times() -> None:
    layer = Recording([4])
    j = job(1, 0, 2, 100, estimate=150)
    layer.stretch_job(j, Fraction(1))
    assert (j.runtime, j.estimate, layer.original) == (100, 150, {})
    layer.stretch_job(j, Fraction(3, 2))
    assert (j.runtime, j.estimate) == (150, 225)
    layer.stretch_job(j, Fraction(2))
    assert (j.runtime, j.estimate) == (300, 450)
    assert layer.original == {1: (100, 150)}  # the times as submitted, not the first stretch
    layer.forget(2)
    assert layer.original == {1: (100, 150)}
    layer.forget(1)
    assert layer.original == {}


def test_wide_enough_in_config_order() -> None:
    layer = Recording([4, 2, 8, 4])
    assert layer.wide_enough(1) == [0, 1, 2, 3]
    assert layer.wide_enough(4) == [0, 2, 3]
    assert layer.wide_enough(5) == [2]
    assert layer.wide_enough(8) == [2]
    assert layer.wide_enough(9) == []
    assert layer.wide_enough(4) == [0, 2, 3]  # asked again (cached)


def test_shadow_counts_the_jobs_started_in_this_pass() -> None:
    layer = Recording([8])
    # 4 nodes busy until 100, 1 idle; started in this pass: 1 node until 50 and 2
    # until 200. A 6-node job: 1 + 1 at 50 = 2, + 4 at 100 = 6 -> (100, 0).
    layer.attach([View(0, ((100, 4),))])  # type: ignore[list-item]
    assert layer.shadow(0, 6, 1, [(50, 1), (200, 2)]) == (100, 0)
    # a 7-node job needs the pass's 2-node job back too: (200, 1).
    assert layer.shadow(0, 7, 1, [(200, 2), (50, 1)]) == (200, 1)
    # 8 nodes: every node in service, (200, 0); 9 never fit.
    assert layer.shadow(0, 8, 1, [(50, 1), (200, 2)]) == (200, 0)
    assert layer.shadow(0, 9, 1, [(50, 1), (200, 2)]) is None
    # without the pass's jobs: 1 idle + 4 -> 5 at 100.
    assert layer.shadow(0, 5, 1, []) == (100, 0)
    assert layer.shadow(0, 4, 1, []) == (100, 1)
    assert layer.shadow(0, 6, 1, []) is None
    # enough idle nodes already: now, with the rest as extra
    layer.attach([View(7, ((100, 4),))])  # type: ignore[list-item]
    assert layer.shadow(0, 2, 3, []) == (7, 1)


def partition_job(jid: int, width: int, part: int, n_fields: int = 18) -> Job:
    record = [-1] * n_fields
    if n_fields > 15:
        record[15] = part
    else:  # the partition field is missing: a shorter line holds ``part`` elsewhere
        record[-1] = part
    return Job(id=jid, submit=0, width=width, estimate=1, runtime=1, trace=TraceLine(tuple(record)))


class FixedDraws:
    """A generator whose draws are given: ``randrange(n)`` returns the next one."""

    def __init__(self, *draws: int) -> None:
        self.draws = list(draws)
        self.asked: list[int] = []

    def randrange(self, n: int) -> int:
        self.asked.append(n)
        return self.draws.pop(0)


def decentral(nodes: list[int], home: str = "partition") -> GridLayer:
    machines = [(f"m{i}", n) for i, n in enumerate(nodes)]
    return make_grid("decentral", {"home": home}, machines)


def test_home_from_the_partition_field() -> None:
    layer = decentral([4, 2, 8])
    layer.rng = FixedDraws()  # type: ignore[assignment]
    assert layer.home_of(partition_job(1, 2, 1)) == 0
    assert layer.home_of(partition_job(1, 2, 2)) == 1
    assert layer.home_of(partition_job(1, 8, 3)) == 2
    assert layer.home_of(partition_job(1, 1, 3, n_fields=16)) == 2  # field 16 is the last


def test_home_drawn_when_the_partition_field_does_not_name_a_machine() -> None:
    layer = decentral([4, 2, 8])
    # part 0, part 4 (past the last machine), part 2 too narrow for 3 nodes, no field
    # 16, no trace: drawn among the machines wide enough (3 nodes: m0, m2).
    for j in (
        partition_job(1, 3, 0),
        partition_job(1, 3, 4),
        partition_job(1, 3, 2),
        partition_job(1, 3, 2, n_fields=15),
        job(1, 0, 3, 1),
    ):
        draws = FixedDraws(1)
        layer.rng = draws  # type: ignore[assignment]
        assert layer.home_of(j) == 2
        assert draws.asked == [2]


def test_home_random_ignores_the_partition_field() -> None:
    layer = decentral([4, 2, 8], home="random")
    draws = FixedDraws(0, 2)
    layer.rng = draws  # type: ignore[assignment]
    assert layer.home_of(partition_job(1, 1, 3)) == 0
    assert layer.home_of(partition_job(1, 1, 1)) == 2
    assert draws.asked == [3, 3]


def test_home_weighted_by_nodes() -> None:
    layer = decentral([2, 6, 4], home="weighted")
    # width 1: every machine, 12 nodes: draws 0-1 -> m0, 2-7 -> m1, 8-11 -> m2
    for draw, home in [(0, 0), (1, 0), (2, 1), (7, 1), (8, 2), (11, 2)]:
        draws = FixedDraws(draw)
        layer.rng = draws  # type: ignore[assignment]
        assert layer.home_of(partition_job(1, 1, 1)) == home
        assert draws.asked == [12]
    # width 3: m1 and m2, 10 nodes: 0-5 -> m1, 6-9 -> m2
    for draw, home in [(0, 1), (5, 1), (6, 2), (9, 2)]:
        draws = FixedDraws(draw)
        layer.rng = draws  # type: ignore[assignment]
        assert layer.home_of(job(1, 0, 3, 1)) == home
        assert draws.asked == [10]


def test_width_refusal_names_the_widest_machine() -> None:
    layer = Recording([8, 4, 8])
    assert layer.width_refusal(8) is None
    assert layer.width_refusal(1) is None
    assert layer.width_refusal(9) == "the widest machine of the grid, m0, has 8"
    assert Recording([2, 6, 4]).width_refusal(7) == "the widest machine of the grid, m1, has 6"
