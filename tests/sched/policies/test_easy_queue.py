"""EASY's backfilling over width classes takes the jobs a walk of the queue takes."""

from __future__ import annotations

import random

import pytest

from batchd.model.job import Job
from batchd.replay import ReplayOptions, run_replay
from batchd.sched.core.order import fcfs_key, sjf_key
from batchd.sched.policies.easy_queue import WidthFiledQueue
from paths import TRACES

KTH = TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"


def walk(
    queue: WidthFiledQueue, after: int, free: int, now: int, shadow: int, extra: int
) -> list[Job]:
    """The reference: EASY's walk of the whole queue after position ``after``."""
    taken = []
    for m in range(after + 1, len(queue)):
        w, d = queue.widths[m], queue.durations[m]
        if w > free:
            continue
        if now + d <= shadow:
            free -= w
        elif w <= extra:
            free -= w
            extra -= w
        else:
            continue
        taken.append(queue.jobs[m])
        if free == 0:
            break
    return taken


@pytest.mark.parametrize("seed", range(30))
def test_the_merge_meets_the_jobs_the_walk_takes(seed: int) -> None:
    rng = random.Random(seed)
    queue = WidthFiledQueue(rng.choice([fcfs_key, sjf_key]))
    jobs = [
        Job(id=i, submit=rng.randrange(100), width=rng.choice([1, 2, 3, 5, 8, 16, 40, 100]),
            estimate=rng.choice([1, 5, 10, 50]), runtime=1)
        for i in range(rng.randint(1, 300))
    ]  # fmt: skip
    for job in jobs:
        queue.insert(job)
    if rng.random() < 0.5:
        queue.filed()  # kept up to date through the changes below, else built after them
    queue.remove_many(rng.sample(queue.jobs, rng.randint(0, len(jobs) // 2)))
    if len(queue) > 3:
        queue.pop_front(rng.randint(0, 2))
        queue.remove(queue.jobs[-1])
    for job in jobs[: rng.randint(0, 20)]:
        if job not in queue:
            queue.insert(job)
    filed = queue.filed()
    assert sorted(e[3].id for c in filed.values() for e in c) == sorted(j.id for j in queue)
    by_class = [sum(1 for w in queue.widths if w.bit_length() == c) for c in range(64)]
    assert queue.counts == by_class
    for _ in range(20):
        if not queue.jobs:
            break
        after = rng.randrange(len(queue))
        free, now = rng.randint(0, 60), 0
        shadow, extra = rng.choice([0, 1, 5, 10, 50]), rng.randint(0, 12)
        got = queue.backfill(queue.keys[after], free, now, shadow, extra)
        assert got == walk(queue, after, free, now, shadow, extra)


def test_a_replay_is_the_same_by_merge_or_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """KTH's first 4,000 jobs on a third of its machine: a deep queue. Forcing every
    pass to merge the classes, then to walk the queue, gives the same schedule."""
    if not KTH.is_file():
        pytest.skip(f"real traces not found: {KTH}")
    opts = ReplayOptions(str(KTH), policy="sjf-easy", nodes=34, first=4000, hosts=False)
    merged = {}
    for way, merge in (("merge", True), ("walk", False)):
        monkeypatch.setattr(WidthFiledQueue, "worth_merging", lambda *_, m=merge: m)
        merged[way] = [(j.id, j.start) for j in run_replay(opts).jobs]
    assert merged["merge"] == merged["walk"]
