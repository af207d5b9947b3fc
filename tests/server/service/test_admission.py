"""What a job may ask for, limit by limit, and the words of each refusal."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from batchd.model.windows import DAY, TimeWindow
from batchd.server.errors import ApiError
from batchd.server.service.admission import Admission
from batchd.site.config import SiteConfig
from batchd.site.tables import QueueConfig

T0 = 10 * DAY  # midnight


def site(**server: Any) -> SiteConfig:
    return SiteConfig.model_validate(
        {
            "machine": [
                {"name": "mini", "nodes": 8},
                {"name": "fat", "nodes": 4, "cores_per_node": 4, "shared": True},
                {"name": "duo", "nodes": 2, "cores_per_node": 2, "shared": True},
            ],
            "server": {"policy": "fcfs-easy", **server},
            "queue": [
                {"name": "workq", "default_walltime": 3600},
                {"name": "small", "max_nodes": 2, "max_walltime": "01:00:00"},
                {"name": "off", "enabled": False},
                {"name": "fatq", "machine": "fat", "max_nodes": 1, "default_walltime": 60},
                {"name": "big", "machine": "fat", "max_walltime": 600},
                {"name": "duoq", "machine": "duo", "max_nodes": 1},
            ],
        }
    )


@dataclass(frozen=True)
class Daily:
    """Open from ``opens`` to ``closes`` seconds into every day; never open when equal."""

    opens: int
    closes: int
    text: str = "daily"

    def is_open(self, t: int) -> bool:
        return self.opens <= t % DAY < self.closes

    def next_change(self, t: int) -> int | None:
        if self.opens == self.closes:
            return None
        day = t - t % DAY
        for at in (day + self.opens, day + self.closes, day + DAY + self.opens):
            if at > t:
                return at
        return None


def admission(windows: dict[str, TimeWindow] | None = None, **server: Any) -> Admission:
    return Admission(site(**server), windows or {})


def refusal(adm: Admission, queue: str, nodes: int, walltime: int | None) -> tuple[int, str]:
    with pytest.raises(ApiError) as refused:
        adm.check(queue, nodes, walltime, T0)
    return refused.value.status, refused.value.message


def test_a_job_within_every_limit_gets_its_queue_and_walltime() -> None:
    adm = admission()
    queue, walltime = adm.check("small", 2, 3600, T0)  # both limits exactly
    assert (queue.name, walltime) == ("small", 3600)
    assert adm.check("workq", 8, None, T0)[1] == 3600  # the queue's default walltime
    assert adm.check("fatq", 4, None, T0)[1] == 60  # one shared node: its 4 cores


def test_an_unknown_queue_names_the_queues() -> None:
    assert refusal(admission(), "nosuch", 1, None) == (
        400,
        "unknown queue 'nosuch'; queues: workq, small, off, fatq, big, duoq",
    )


def test_a_reservations_queue_is_found_through_the_service() -> None:
    adm = admission()
    resv = QueueConfig(name="R1", max_nodes=2)
    adm.reserved = lambda name: resv if name == "R1" else None
    assert adm.queue("R1") is resv
    assert adm.queue("small").name == "small"


def test_a_disabled_queue_says_how_a_manager_enables_it() -> None:
    adm = admission()
    assert refusal(adm, "off", 1, None) == (
        400,
        "Queue is not enabled: queue off takes no new jobs; a manager enables it: "
        "enabled = true in the site file, then SIGHUP to the daemon, or "
        'qmgr -c "set queue off enabled = True"',
    )
    adm.set_live = lambda name: name == "off"
    assert refusal(adm, "off", 1, None)[1].endswith(
        'takes no new jobs; a manager enables it: qmgr -c "set queue off enabled = True"'
    )


def test_more_nodes_than_the_machine_has_names_the_queues_that_take_it() -> None:
    adm = admission()
    assert refusal(adm, "workq", 9, None) == (
        400,
        "nodes: 9 nodes requested; machine mini has 8; queues that take it: big",
    )
    assert refusal(adm, "fatq", 17, None) == (400, "ncpus: 17 cores requested; machine fat has 16")
    assert refusal(adm, "fatq", 5, None) == (
        400,
        "ncpus: 5 cores exceed the limit of queue fatq (resources_max.nodect = 1; "
        "4 cores a node); queues that take it: workq, big",
    )
    assert refusal(adm, "duoq", 3, None) == (
        400,
        "ncpus: 3 cores exceed the limit of queue duoq (resources_max.nodect = 1; "
        "2 cores a node); queues that take it: workq, fatq, big",
    )
    assert refusal(adm, "small", 3, None) == (
        400,
        "nodes: 3 nodes exceed the limit of queue small (resources_max.nodect = 2); "
        "queues that take it: workq, fatq, big",  # 3 cores of one shared node
    )


def test_too_long_a_walltime_names_the_limit_and_the_queues_that_take_it() -> None:
    adm = admission()
    assert refusal(adm, "small", 1, 3601) == (
        400,
        "walltime: 01:00:01 exceeds the limit of queue small (resources_max.walltime = "
        "01:00:00); queues that take it: workq, fatq, duoq",
    )


def test_the_takers_leave_out_disabled_too_small_and_too_short_queues() -> None:
    adm = admission()
    assert adm.takers(1, None, T0) == "; queues that take it: workq, small, fatq, big, duoq"
    assert adm.takers(3, None, T0) == "; queues that take it: workq, fatq, big"  # 3 cores
    assert adm.takers(5, None, T0) == "; queues that take it: workq, big"
    assert adm.takers(8, None, T0) == "; queues that take it: workq, big"  # mini's 8 nodes
    assert adm.takers(9, None, T0) == "; queues that take it: big"  # fat's 16 cores
    assert adm.takers(17, None, T0) == ""
    assert adm.takers(1, 3600, T0) == "; queues that take it: workq, small, fatq, duoq"
    assert adm.takers(1, 3601, T0) == "; queues that take it: workq, fatq, duoq"


def test_under_a_grid_the_layer_says_why_a_width_never_runs() -> None:
    adm = admission()
    adm.site.grid_table = object()  # type: ignore[assignment]
    adm.grid_width = lambda nodes: "the widest machine has 8 nodes" if nodes > 8 else None
    assert refusal(adm, "workq", 9, None) == (
        400,
        "nodes: 9 nodes requested; the widest machine has 8 nodes",
    )
    assert adm.check("workq", 8, None, T0)[0].name == "workq"
    assert adm.takers(9, None, T0) == ""
    assert adm.takers(2, None, T0) == "; queues that take it: workq, small, fatq, big, duoq"


def test_a_reservation_queue_is_checked_against_its_machine_under_a_grid_too() -> None:
    adm = admission()
    adm.site.grid_table = object()  # type: ignore[assignment]
    adm.grid_width = lambda nodes: "never"
    resv = QueueConfig(name="R1")
    adm.reserved = lambda name: resv if name == "R1" else None
    assert adm.check("R1", 8, 60, T0) == (resv, 60)
    assert refusal(adm, "R1", 9, None) == (400, "nodes: 9 nodes requested; machine mini has 8")


def test_a_job_must_fit_in_an_opening_of_its_queues_window() -> None:
    night = Daily(0, 6 * 3600)  # 00:00-06:00
    adm = admission({"small": night, "workq": night})
    assert adm.check("workq", 1, 6 * 3600, T0)[1] == 6 * 3600  # exactly the opening
    assert refusal(adm, "workq", 1, 6 * 3600 + 1) == (
        400,
        "walltime: 06:00:01 does not fit in any opening of queue workq's window (daily) in "
        "the next 14 days (the longest is 06:00:00): ask for less walltime or use another "
        "queue; queues that take it: fatq, duoq",
    )
    # Not enforced when the site lets jobs run past the close.
    assert admission({"workq": night}, window_must_fit=False).check("workq", 1, 7 * 3600, T0)


def test_a_queue_whose_window_never_opens_says_so() -> None:
    adm = admission({"workq": Daily(0, 0)})
    assert refusal(adm, "workq", 1, 60) == (
        400,
        "queue workq is closed (daily) and does not open in the next 14 days: use another queue",
    )
    assert adm.takers(1, 60, T0) == "; queues that take it: small, fatq, big, duoq"
    assert adm.takers(1, None, T0) == "; queues that take it: workq, small, fatq, big, duoq"


def test_a_reservations_queue_takes_only_its_authorized_users() -> None:
    adm = admission()
    adm.check_authorized("workq", "bob")  # not a reservation's queue
    adm.resv_owner = lambda name: "alice" if name == "R1" else None
    adm.check_authorized("R1", "alice")
    with pytest.raises(ApiError) as refused:
        adm.check_authorized("R1", "bob")
    assert (refused.value.status, refused.value.message) == (
        403,
        "Unauthorized Request: queue R1 takes only the jobs of reservation R1's "
        "Authorized_Users (alice)",
    )


def test_every_refusal_hints_with_the_walltime_asked_and_the_time_now() -> None:
    night = Daily(0, 6 * 3600)
    adm = admission({"workq": night, "big": night})

    def hint(queue: str, nodes: int, walltime: int) -> str:
        return refusal(adm, queue, nodes, walltime)[1].partition("; queues that take it: ")[2]

    assert hint("workq", 9, 601) == ""  # big takes ten minutes at most
    assert hint("workq", 9, 60) == "big"
    assert hint("fatq", 5, 601) == "workq"
    assert hint("fatq", 5, 60) == "workq, big"
    assert hint("small", 3, 601) == "workq, fatq"
    assert hint("small", 3, 60) == "workq, fatq, big"
    assert hint("small", 1, 3601) == "workq, fatq, duoq"
    # A walltime that fits no opening of workq's window leaves it out.
    assert hint("small", 1, 6 * 3600 + 1) == "fatq, duoq"


def test_alone_it_knows_no_grid_reservation_live_setting_or_queued_limit() -> None:
    adm = admission()
    assert adm.grid_width(10**6) is None
    assert adm.reserved("R1") is None
    assert adm.resv_owner("R1") is None
    assert adm.set_live("workq") is False
    assert adm.check_queued("workq", "alice", 0) is None
