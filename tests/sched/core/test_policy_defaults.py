"""What every policy can do by default, what a wrapper passes on, and the ordered policy."""

from __future__ import annotations

import random

import pytest

from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.sched.core.order import fcfs_key, sjf_key
from batchd.sched.core.policy import (
    QUIET,
    BuildContext,
    MachineView,
    OrderedPolicy,
    Placement,
    Policy,
    QuietObserver,
    WrappingPolicy,
)
from machine_view import HandView


class Listed(Policy):
    """The least a policy must define: its waiting jobs kept in a list, nothing started."""

    name = "sjf-listed"

    def __init__(self, *jobs: Job) -> None:
        self.jobs = list(jobs)

    def job_submitted(self, view: MachineView, job: Job) -> None:
        self.jobs.append(job)

    def withdraw(self, view: MachineView, job: Job) -> None:
        self.jobs.remove(job)

    def schedule(self, view: MachineView) -> list[Placement]:
        return []

    def waiting(self) -> list[Job]:
        return list(self.jobs)


class Kept(WrappingPolicy, Listed):
    """A wrapper in front of ``inner``."""

    name = "kept"

    def __init__(self, inner: Policy) -> None:
        Listed.__init__(self)
        self.inner = inner


class Wide(Listed):
    def planned_width(self, job: Job) -> int:
        return 2 * job.width


class Recorder(QuietObserver):
    pass


class Queued(OrderedPolicy):
    """An ordered policy that starts nothing."""

    def schedule(self, view: MachineView) -> list[Placement]:
        return []


def test_the_defaults() -> None:
    a, b = Job(1, 0, 3, 10, 10), Job(2, 0, 5, 10, 10)
    policy = Listed(a, b)
    policy.machine = 4
    assert policy.place(a) == Placement(a, 4, 3)
    assert policy.place_all([a, b]) == [Placement(a, 4, 3), Placement(b, 4, 5)]
    assert type(policy.place_all([a])[0]) is Placement
    assert policy.place_all([]) == []
    assert policy.head() is a and Listed().head() is None
    assert policy.planned_width(b) == 5
    assert policy.explain(a, 0) is None
    assert policy.order() == "SJF"
    assert policy.deadline(a) is None
    assert policy.report() == {}
    assert policy.next_wakeup(0) is None
    assert policy.expired(HandView(0, 8)) == []
    assert policy.planned_start(HandView(0, 8), a) is None
    assert policy.observer is QUIET
    watcher = Recorder()
    policy.observe(watcher)
    assert policy.observer is watcher
    assert policy.find(Listed) is policy and policy.find(Kept) is None
    QUIET.switched("a", "b")
    QUIET.tuned("case", 1.0)
    QUIET.searched(1.0, "budget")


def test_planned_starts_are_a_full_plan_in_the_policy_order() -> None:
    # 8 nodes, 6 busy until 50: A (2 nodes) now; B (8) at 50; C (4) after B, at 60.
    a, b, c = Job(1, 0, 2, 100, 100), Job(2, 0, 8, 10, 10), Job(3, 0, 4, 5, 5)
    v = HandView(0, 8, [50], [6])
    assert Listed(a, b, c).planned_starts(v) == [(a, 0), (b, 100), (c, 50)]
    ordered = Listed(a, b, c)
    ordered.serves_in_order = True
    assert ordered.planned_starts(v) == [(a, 0), (b, 100), (c, 110)]
    assert ordered._forecast() is ordered._forecast()  # kept between calls


def test_a_wrapper_passes_on_to_the_inner_policy() -> None:
    inner = Wide()
    inner.name = "ljf-wide"
    wrapper = Kept(inner)
    job = Job(1, 0, 3, 10, 10)
    assert wrapper.order() == "LJF"
    assert wrapper.planned_width(job) == 6
    assert wrapper.find(Kept) is wrapper
    assert wrapper.find(Wide) is inner
    assert wrapper.find(OrderedPolicy) is None
    watcher = Recorder()
    wrapper.observe(watcher)
    assert wrapper.observer is watcher and inner.observer is watcher


def test_the_ordered_policy_keeps_its_queue_sorted() -> None:
    policy = Queued("sjf", sjf_key)
    assert policy.name == "sjf" and policy.queue.key is sjf_key
    assert policy.head() is None and policy.waiting() == []
    v = HandView(0, 8, [50], [6])
    long, short, mid = Job(1, 0, 2, 100, 100), Job(2, 1, 8, 10, 10), Job(3, 2, 4, 50, 50)
    for job in (long, short, mid):
        policy.job_submitted(v, job)
    assert policy.waiting() == [short, mid, long] and policy.head() is short
    listed = policy.waiting()
    listed.clear()  # a copy
    assert policy.waiting() == [short, mid, long]
    # 2 free until 50: SHORT (8 nodes) at 50; MID (4) after it, at 60; LONG (2 for 100 s)
    # finds no 2 nodes in [50, 60): beside MID at 60.
    assert policy.planned_starts(v) == [(short, 50), (mid, 60), (long, 60)]
    assert policy.planned_start(v, mid) == 60
    assert policy.planned_start(v, Job(9, 0, 1, 1, 1)) == NEVER
    policy.withdraw(v, short)
    assert policy.waiting() == [mid, long]
    assert policy.planned_starts(v) == [(mid, 50), (long, 0)]


def test_an_ordered_policy_in_order_serves_no_job_before_the_one_ahead() -> None:
    class InOrder(Queued):
        serves_in_order = True

    policy = InOrder("fcfs", fcfs_key)
    v = HandView(0, 8, [50], [6])
    a, b = Job(1, 0, 8, 10, 10), Job(2, 1, 1, 10, 10)
    policy.job_submitted(v, a)
    policy.job_submitted(v, b)
    # B would fit now, beside the running job: it waits for A, which takes all 8 at 50.
    assert policy.planned_starts(v) == [(a, 50), (b, 60)]
    assert policy.planned_start(v, b) == 60


def test_the_context_seeds_its_generator() -> None:
    assert BuildContext(seed=7).rng.random() == random.Random(7).random()
    ctx = BuildContext()
    assert (ctx.machine, ctx.nodes, ctx.origin, ctx.seed, ctx.offload) == (0, None, 0, 0, None)


def test_the_context_builds_with_its_builder() -> None:
    built: list[tuple[str, object, BuildContext]] = []
    inner = Listed()

    def builder(name: str, params: object, context: BuildContext) -> Policy:
        built.append((name, params, context))
        return inner

    ctx = BuildContext(machine=2).given(builder)
    assert ctx.build("fcfs", {"k": "v"}) is inner
    assert ctx.build("sjf") is inner
    assert built == [("fcfs", {"k": "v"}, ctx), ("sjf", None, ctx)]
    with pytest.raises(ValueError) as refused:
        BuildContext().build("x")
    assert str(refused.value) == (
        "cannot build policy 'x': this context was given no builder "
        "(build the wrapping policy with batchd.sched.registry.make_policy)"
    )
