"""The base profile of every plan and full plans of a queue onto it, worked out by hand."""

from __future__ import annotations

import numpy as np

from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.sched.core.order import OrderedQueue, fcfs_key
from batchd.sched.core.plans import base_profile, machine_signature, plan_in_order, plan_queue
from machine_view import HandView

# 10 nodes at 100: 4 busy until 120, 3 until 150; 5 reserved in [130, 140), 2 in [200, 210).
VIEW = HandView(100, 10, [120, 150], [4, 3], [(130, 140, 5), (200, 210, 2)])


def test_the_base_holds_the_running_jobs_and_the_reservations() -> None:
    profile = base_profile(VIEW, 3)
    assert profile.capacity == 10 and profile.origin == 100
    assert profile.steps() == [
        (100, 3),
        (120, 7),
        (130, 2),
        (140, 7),
        (150, 10),
        (200, 8),
        (210, 10),
    ]


def test_an_idle_machine_is_all_free() -> None:
    assert base_profile(HandView(7, 4), 0).steps() == [(7, 4)]


def test_a_queue_is_planned_in_its_order_from_now() -> None:
    queue = OrderedQueue(fcfs_key)
    for job in (
        Job(1, 0, 5, 30, 30),
        Job(2, 1, 3, 10, 10),
        Job(3, 2, 8, 5, 5),
        Job(4, 3, 11, 1, 1),
    ):
        queue.insert(job)
    profile, starts = plan_queue(queue, VIEW)
    # 5 for 30 s: 7 free at 120 but 2 in [130, 140); at 140 7 free, 10 from 150 -> 140.
    # 3 for 10 s: 3 free now -> 100. 8 for 5 s: 10 free from 150, 5 taken to 170 -> 170.
    # 11 nodes: never.
    assert starts.dtype == np.int64
    assert starts.tolist() == [140, 100, 170, NEVER]
    assert profile.steps()[:3] == [(100, 0), (110, 3), (120, 7)]
    assert profile.free_at(145) == 2 and profile.free_at(172) == 2 and profile.free_at(175) == 10


def test_jobs_in_order_on_a_profile() -> None:
    profile = base_profile(VIEW, 2)
    # Job.duration: an estimate of 0 holds its nodes a second.
    jobs = [Job(1, 0, 7, 0, 0), Job(2, 0, 3, 20, 20), Job(3, 0, 3, 20, 20)]
    # 7 for 1 s at 120; 3 for 20 s: 0 free at 120, 2 in [130, 140) -> 140, and the next too.
    assert plan_in_order(profile, jobs, 110) == [120, 140, 140]
    assert profile.free_at(120) == 0 and profile.free_at(121) == 7 and profile.free_at(145) == 1
    assert plan_in_order(profile, [], 0) == []
    later = base_profile(VIEW, 1)
    assert plan_in_order(later, [Job(9, 0, 1, 5, 5)], 400) == [400]


def test_the_signature_is_the_machine_a_plan_depends_on() -> None:
    assert machine_signature(VIEW) == (10, (120, 150), (4, 3), ((130, 140, 5), (200, 210, 2)))
    moved = HandView(105, 10, [120, 150], [4, 3], [(130, 140, 5), (200, 210, 2)])
    assert machine_signature(moved) == machine_signature(VIEW)  # time is not part of it


def test_room_for_many_running_jobs_and_reservations() -> None:
    ends = [10, 20, 30, 40, 50]
    pending = [(100 + 10 * k, 105 + 10 * k, 1) for k in range(5)]
    profile = base_profile(HandView(0, 20, ends, [1] * 5, pending), 0)
    running = [(0, 15), (10, 16), (20, 17), (30, 18), (40, 19), (50, 20)]
    reserved = [(t, f) for s, e, _ in pending for t, f in ((s, 19), (e, 20))]
    assert profile.steps() == running + reserved
