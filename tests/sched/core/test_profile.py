"""The availability profile: both implementations against a plain second-by-second one.

``Plain`` counts the free nodes of every second from the intervals it was given and
searches start times one second at a time: slow, and too simple to be wrong. Each
operation on random small profiles must leave ``ListProfile`` and ``Profile`` with the
steps it computes, and give the starts it finds. Hand cases state the edges.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from batchd.model.times import NEVER
from batchd.sched.core.profile import ListProfile, Profile

AnyProfile = ListProfile | Profile


class Plain:
    """Free nodes of each second from ``origin`` on: capacity plus the intervals' deltas."""

    def __init__(self, capacity: int, origin: int) -> None:
        self.capacity = capacity
        self.origin = origin
        self.deltas: list[tuple[int, int, int]] = []  # (start, end, delta)

    def free_at(self, time: int) -> int:
        time = max(time, self.origin)
        return self.capacity + sum(d for s, e, d in self.deltas if s <= time < e)

    def steps(self) -> list[tuple[int, int]]:
        edges = {self.origin} | {x for s, e, _ in self.deltas for x in (s, e) if x > self.origin}
        out: list[tuple[int, int]] = []
        for x in sorted(edges):
            free = self.free_at(x)
            if not out or out[-1][1] != free:
                out.append((x, free))
        return out

    def earliest_start(self, width: int, duration: int, not_before: int) -> int:
        last = max([self.origin, not_before] + [e for _, e, _ in self.deltas])
        for start in range(max(not_before, self.origin), last + 1):
            if all(self.free_at(t) >= width for t in range(start, start + duration)):
                return start
        return NEVER

    def add(self, start: int, end: int, delta: int) -> None:
        if end > start:
            self.deltas.append((start, end, delta))

    def advance(self, now: int) -> None:
        self.origin = max(self.origin, now)


def built(kind: type[AnyProfile], capacity: int, now: int, ends: list[int], widths: list[int]):  # type: ignore[no-untyped-def]
    return kind.of_running(capacity, now, ends, widths)


KINDS = [ListProfile, Profile]


@pytest.mark.parametrize("kind", KINDS)
def test_a_new_profile_is_all_free_from_its_origin(kind: type[AnyProfile]) -> None:
    prof = kind(8, 5)
    assert prof.capacity == 8 and prof.origin == 5
    assert prof.steps() == [(5, 8)]
    assert prof.free_at(0) == 8 and prof.free_at(5) == 8 and prof.free_at(10**9) == 8
    assert kind(3).steps() == [(0, 3)]


@pytest.mark.parametrize("kind", KINDS)
def test_running_jobs_give_back_their_nodes_at_their_ends(kind: type[AnyProfile]) -> None:
    # 10 nodes at 100: 2 until 120, 3 until 120, 4 until 150; one ended at 100, one before.
    prof = built(kind, 10, 100, [90, 100, 120, 120, 150], [5, 6, 2, 3, 4])
    assert prof.steps() == [(100, 1), (120, 6), (150, 10)]
    assert prof.origin == 100
    assert [prof.free_at(t) for t in (99, 100, 119, 120, 149, 150)] == [1, 1, 1, 6, 6, 10]


@pytest.mark.parametrize("kind", KINDS)
def test_the_earliest_start_is_the_first_window_wide_and_long_enough(
    kind: type[AnyProfile],
) -> None:
    prof = built(kind, 10, 0, [10, 20, 30], [4, 2, 4])  # free: 0 from 0, 4 at 10, 6 at 20
    prof.reserve(40, 50, 5)  # 10 from 30, 5 in [40, 50), 10 again from 50
    assert prof.steps() == [(0, 0), (10, 4), (20, 6), (30, 10), (40, 5), (50, 10)]
    assert prof.earliest_start(4, 5, 0) == 10
    assert prof.earliest_start(4, 5, 12) == 12  # not before its floor
    assert prof.earliest_start(5, 5, 0) == 20
    assert prof.earliest_start(6, 20, 0) == 20  # ends at 40, as the reservation begins
    assert prof.earliest_start(6, 21, 0) == 50  # would overlap [40, 50) by a second
    assert prof.earliest_start(6, 20, 25) == 50
    assert prof.earliest_start(5, 100, 0) == 20  # 5 stay free beside the reservation
    assert prof.earliest_start(10, 1, 0) == 30
    assert prof.earliest_start(11, 1, 0) == NEVER  # wider than the machine
    assert prof.earliest_start(1, 1, -5) == 10  # a floor before the origin counts from it
    assert prof.earliest_start(1, 3, 1000) == 1000


@pytest.mark.parametrize("kind", KINDS)
def test_reserve_and_release_split_and_merge_steps(kind: type[AnyProfile]) -> None:
    prof = kind(6, 0)
    prof.reserve(10, 20, 2)
    assert prof.steps() == [(0, 6), (10, 4), (20, 6)]
    prof.reserve(15, 25, 4)
    assert prof.steps() == [(0, 6), (10, 4), (15, 0), (20, 2), (25, 6)]
    prof.release(15, 25, 4)
    assert prof.steps() == [(0, 6), (10, 4), (20, 6)]
    prof.release(10, 20, 2)
    assert prof.steps() == [(0, 6)]
    prof.reserve(0, 5, 6)
    assert prof.steps() == [(0, 0), (5, 6)]
    assert prof.free_at(4) == 0 and prof.free_at(5) == 6


def test_an_empty_interval_changes_nothing() -> None:
    prof = ListProfile(4, 0)
    prof.reserve(10, 10, 2)
    prof.release(10, 9, 2)
    assert prof.steps() == [(0, 4)]


@pytest.mark.parametrize("kind", KINDS)
def test_advance_forgets_the_past(kind: type[AnyProfile]) -> None:
    prof = built(kind, 8, 0, [10, 20], [3, 2])  # 3 free, 6 at 10, 8 at 20
    prof.advance(5)
    assert prof.steps() == [(5, 3), (10, 6), (20, 8)] and prof.origin == 5
    prof.advance(10)
    assert prof.steps() == [(10, 6), (20, 8)]
    prof.advance(25)
    assert prof.steps() == [(25, 8)] and prof.origin == 25
    prof.advance(3)  # going back changes nothing
    assert prof.steps() == [(25, 8)]


@pytest.mark.parametrize("kind", KINDS)
def test_place_reserves_the_earliest_slot(kind: type[AnyProfile]) -> None:
    prof = built(kind, 4, 0, [10], [3])  # 1 free, 4 from 10
    assert prof.place(2, 5, 0) == 10
    assert prof.steps() == [(0, 1), (10, 2), (15, 4)]
    assert prof.place(1, 20, 0) == 0
    assert prof.steps() == [(0, 0), (10, 1), (15, 3), (20, 4)]
    assert prof.place(5, 1, 0) == NEVER
    assert prof.steps() == [(0, 0), (10, 1), (15, 3), (20, 4)]


@pytest.mark.parametrize("kind", KINDS)
def test_plan_places_jobs_in_order(kind: type[AnyProfile]) -> None:
    prof = built(kind, 4, 0, [10], [3])
    widths, durations = [2, 1, 4, 9, 1], [5, 20, 1, 1, 5]
    if kind is Profile:
        got = prof.plan(np.array(widths), np.array(durations), 0).tolist()  # type: ignore[arg-type]
    else:
        got = prof.plan(widths, durations, 0)  # type: ignore[arg-type]
    assert got == [10, 0, 20, NEVER, 10]
    assert prof.steps() == [(0, 0), (15, 3), (20, 0), (21, 4)]


@pytest.mark.parametrize("kind", KINDS)
def test_a_copy_is_independent(kind: type[AnyProfile]) -> None:
    prof = built(kind, 4, 3, [10], [3])
    twin = prof.copy()
    assert type(twin) is kind
    assert twin.capacity == 4 and twin.origin == 3 and twin.steps() == prof.steps()
    twin.reserve(20, 30, 4)
    assert prof.steps() == [(3, 1), (10, 4)]
    prof.reserve(3, 10, 1)
    assert twin.steps() == [(3, 1), (10, 4), (20, 0), (30, 4)]


def test_the_compiled_profile_grows_past_its_room() -> None:
    prof = Profile(100, 0, room=1)
    for k in range(40):  # 80 steps and more, from 4 slots
        prof.reserve(10 * k + 1, 10 * k + 5, 1 + k % 3)
    steps = prof.steps()
    assert len(steps) == 81
    assert steps[:3] == [(0, 100), (1, 99), (5, 100)] and steps[-1] == (395, 100)


def test_reserve_all_and_compress() -> None:
    prof = Profile.of_running(4, 0, [10], [4])
    widths, durations = np.array([2, 2, 4]), np.array([5, 5, 3])
    starts = np.array([20, NEVER, 30])
    prof.reserve_all(widths, durations, starts)
    assert prof.steps() == [(0, 0), (10, 4), (20, 2), (25, 4), (30, 0), (33, 4)]
    moved = prof.compress(widths, durations, starts, 0)
    assert moved.tolist() == [10, 10, 15]
    assert starts.tolist() == [20, NEVER, 30]  # the caller's starts are left alone
    assert prof.steps() == [(0, 0), (18, 4)]


def compiled_many(prof: Profile, widths: list[int], durations: list[int], floor: int) -> list[int]:
    starts: list[int] = prof.plan(np.array(widths), np.array(durations), floor).tolist()
    return starts


@pytest.mark.parametrize("seed", range(12))
def test_both_profiles_follow_the_plain_one(seed: int) -> None:
    rng = random.Random(seed)
    capacity, now = rng.randint(1, 8), rng.randint(0, 20)
    count = rng.randint(0, 4)
    ends = sorted(rng.randint(now - 5, now + 40) for _ in range(count))
    widths = [rng.randint(1, max(1, capacity // 2)) for _ in ends]
    plain = Plain(capacity, now)
    for e, w in zip(ends, widths, strict=True):
        if e > now:
            plain.add(now, e, -w)
    profiles: list[AnyProfile] = [
        ListProfile.of_running(capacity, now, ends, widths),
        Profile.of_running(capacity, now, ends, widths, room=rng.randint(0, 2)),
    ]
    for step in range(30):
        op = rng.choice(["place", "place", "reserve", "release", "advance", "start", "plan"])
        width = rng.randint(1, capacity + 1)
        duration = rng.randint(1, 15)
        floor = rng.randint(plain.origin - 3, plain.origin + 40)
        where = f"seed {seed} step {step}: {op}"
        if op == "start":
            want = plain.earliest_start(width, duration, floor)
            assert [p.earliest_start(width, duration, floor) for p in profiles] == [want] * 2, where
        elif op == "place":
            want = plain.earliest_start(width, duration, floor)
            assert [p.place(width, duration, floor) for p in profiles] == [want] * 2, where
            if want != NEVER:
                plain.add(want, want + duration, -width)
        elif op == "plan":
            ws = [rng.randint(1, capacity) for _ in range(3)]
            ds = [rng.randint(1, 10) for _ in range(3)]
            want_all = []
            for w, d in zip(ws, ds, strict=True):
                s = plain.earliest_start(w, d, floor)
                want_all.append(s)
                if s != NEVER:
                    plain.add(s, s + d, -w)
            listed = profiles[0]
            assert isinstance(listed, ListProfile)
            compiled = profiles[1]
            assert isinstance(compiled, Profile)
            assert listed.plan(ws, ds, floor) == want_all, where
            assert compiled_many(compiled, ws, ds, floor) == want_all, where
        elif op == "advance":
            to = rng.randint(plain.origin - 2, plain.origin + 15)
            plain.advance(to)
            for p in profiles:
                p.advance(to)
        else:
            start = rng.randint(plain.origin, plain.origin + 30)
            end = start + rng.randint(0, 10)
            sign = -1 if op == "reserve" else 1
            plain.add(start, end, sign * width)
            for p in profiles:
                getattr(p, op)(start, end, width)
        want_steps = plain.steps()
        for p in profiles:
            assert p.steps() == want_steps, f"{where}: {type(p).__name__}"
            assert p.origin == plain.origin, where
            probe = rng.randint(plain.origin - 2, plain.origin + 50)
            assert p.free_at(probe) == plain.free_at(probe), where


def nearly_full() -> Profile:
    """A compiled profile with one spare slot: 3 steps in its 4."""
    prof = Profile(5, 0, room=1)
    prof.reserve(10, 20, 1)
    assert prof.n == 3 and len(prof.t) == 4
    return prof


# Each job placed inside a step splits it twice: the arrays must grow first.
AFTER = [(0, 5), (10, 4), (20, 5), (25, 3), (28, 5)]


def test_plan_makes_room_for_its_jobs() -> None:
    prof = nearly_full()
    assert prof.plan(np.array([2]), np.array([3]), 25).tolist() == [25]
    assert prof.steps() == AFTER


def test_a_plan_written_into_an_array_of_the_callers() -> None:
    widths, durations = np.array([2, 1, 5]), np.array([3, 4, 2])
    want = nearly_full().plan(widths, durations, 25)
    out = np.full(3, -1, dtype=np.int64)
    prof = nearly_full()
    assert prof.plan(widths, durations, 25, out) is out
    assert out.tolist() == want.tolist() and prof.steps() == nearly_full_planned(want)


def nearly_full_planned(starts: np.ndarray) -> list[tuple[int, int]]:
    prof = nearly_full()
    prof.reserve_all(np.array([2, 1, 5]), np.array([3, 4, 2]), starts)
    return prof.steps()


def test_a_plan_within_held_starts_makes_room_for_its_jobs() -> None:
    # 5 jobs from 25 ending at 28, 30, ...: six new steps in a profile with one spare.
    prof = nearly_full()
    widths, durations = np.array([1] * 5), np.array([3, 5, 7, 9, 11])
    got = prof.plan_within(widths, durations, 25, np.array([25] * 5))
    assert got is not None and got.tolist() == [25] * 5
    assert prof.steps()[3:] == [(25, 0), (28, 1), (30, 2), (32, 3), (34, 4), (36, 5)]


def test_reserve_all_makes_room_for_its_jobs() -> None:
    prof = nearly_full()
    prof.reserve_all(np.array([2]), np.array([3]), np.array([25]))
    assert prof.steps() == AFTER


def test_compress_makes_room_for_its_jobs() -> None:
    prof = nearly_full()
    assert prof.compress(np.array([2]), np.array([3]), np.array([NEVER]), 25).tolist() == [25]
    assert prof.steps() == AFTER


def test_place_reserve_and_release_make_room() -> None:
    for op in ("place", "reserve", "release"):
        prof = nearly_full()
        if op == "place":
            assert prof.place(2, 3, 25) == 25
        else:
            getattr(prof, op)(25, 28, 2 if op == "reserve" else -2)
        assert prof.steps() == AFTER, op


def all_ints(steps: list[tuple[int, int]]) -> bool:
    return all(type(x) is int for step in steps for x in step)


def test_the_compiled_steps_are_integers_after_growing() -> None:
    prof = Profile(9, 0, room=1)
    assert all_ints(prof.steps())
    for k in range(6):
        prof.reserve(10 * k + 1, 10 * k + 5, 1)
    assert len(prof.t) > 4 and all_ints(prof.steps())
    assert prof.t.dtype == np.int64 and prof.f.dtype == np.int64


def test_room_for_many_running_jobs_and_more() -> None:
    ends = list(range(10, 110, 10))
    prof = Profile.of_running(20, 0, ends, [1] * 10, room=10)
    assert prof.steps() == [(0, 10)] + [(e, 10 + k + 1) for k, e in enumerate(ends)]
    assert all_ints(prof.steps())


def test_many_jobs_placed_inside_steps_grow_the_arrays() -> None:
    # 5 jobs from 25 ending at 28, 30, ...: each adds a step, the first two.
    widths, durations = np.array([1] * 5), np.array([3, 5, 7, 9, 11])
    want = [(0, 5), (10, 4), (20, 5), (25, 0), (28, 1), (30, 2), (32, 3), (34, 4), (36, 5)]
    prof = nearly_full()
    assert prof.plan(widths, durations, 25).tolist() == [25] * 5
    assert prof.steps() == want
    prof = nearly_full()
    assert prof.compress(widths, durations, np.array([NEVER] * 5), 25).tolist() == [25] * 5
    assert prof.steps() == want
    # A compression made from the plan in force places jobs without a start the same way.
    for count in (1, 5):
        prof = nearly_full()
        starts = np.array([NEVER] * count)
        left = np.zeros(count, dtype=np.int64), np.zeros(count, dtype=np.int64)
        ws, ds = widths[:count], durations[:count]
        none = np.zeros(count, dtype=np.int64)
        assert prof.compress_again(ws, ds, starts, (none, none, 0), left, 25) == 0
        assert starts.tolist() == [25] * count
        planned = nearly_full()
        planned.plan(ws, ds, 25)
        assert prof.steps() == planned.steps()
    # Three apart: each splits a step twice.
    prof = nearly_full()
    prof.reserve_all(np.array([2, 2, 2]), np.array([3, 3, 3]), np.array([25, 35, 45]))
    assert prof.steps() == [(0, 5), (10, 4), (20, 5), (25, 3), (28, 5), (35, 3), (38, 5)] + [
        (45, 3),
        (48, 5),
    ]


def test_the_reference_refuses_lists_of_different_lengths() -> None:
    with pytest.raises(ValueError):
        ListProfile.of_running(4, 0, [10, 20], [1])
    with pytest.raises(ValueError):
        ListProfile(4).plan([1, 1], [5], 0)


def test_room_for_a_hundred_running_jobs() -> None:
    ends = list(range(1, 101))
    prof = Profile.of_running(200, 0, ends, [1] * 100)
    assert prof.steps() == [(0, 100)] + [(e, 100 + e) for e in ends]


def test_release_all_grows_a_full_profile_and_gives_the_slots_back() -> None:
    # Eight slots, two used: four slots given back need eight more (two per job).
    profile = Profile(4, 0, room=8)
    profile.reserve(0, 100, 4)
    assert profile.steps() == [(0, 0), (100, 4)] and len(profile.t) == 8
    widths = np.array([4, 4, 4, 4], dtype=np.int64)
    durations = np.array([5, 5, 5, 5], dtype=np.int64)
    profile.release_all(widths, durations, np.array([10, 20, 30, 40], dtype=np.int64))
    gaps = [(0, 0), (10, 4), (15, 0), (20, 4), (25, 0), (30, 4), (35, 0), (40, 4), (45, 0)]
    assert profile.steps() == [*gaps, (100, 4)]
    profile.release_all(widths[:1], durations[:1], np.array([NEVER], dtype=np.int64))
    assert profile.steps() == [*gaps, (100, 4)]  # planned at NEVER: it held nothing


@pytest.mark.parametrize("count", [1, 31, 32, 33, 200])
def test_release_all_gives_back_what_one_release_after_another_does(count: int) -> None:
    # From RELEASED_TOGETHER_FROM slots on they are summed with the steps in time order;
    # slots side by side, at NEVER, of no width, and a planned start at the origin.
    rng = np.random.default_rng(count)
    profile = Profile.of_running(64, 100, [150, 400, 900], [8, 8, 8], room=8)
    widths = rng.integers(0, 9, 300).astype(np.int64)
    durations = rng.integers(1, 500, 300).astype(np.int64)
    durations[10:20] = 50
    widths[10:20] = 2
    starts = profile.plan(widths, durations, 100)
    pick = np.sort(rng.choice(300, size=count, replace=False))
    pick[0] = 0  # the first job, planned at the origin
    starts[pick[-1]] = NEVER  # held nothing
    together = profile.copy()
    together.release_all(widths[pick], durations[pick], starts[pick])
    one_by_one = profile.copy()
    for k in pick.tolist():
        if starts[k] != NEVER and widths[k] > 0:
            one_by_one.release(int(starts[k]), int(starts[k] + durations[k]), int(widths[k]))
    assert together.steps() == one_by_one.steps()


def test_same_steps_compares_count_times_and_free_nodes() -> None:
    profile = Profile(4, 0)
    profile.reserve(10, 20, 2)
    assert profile.same_steps(profile.copy())
    other_times = profile.copy()
    other_times.t[1] = 11
    assert not profile.same_steps(other_times)
    other_free = profile.copy()
    other_free.f[1] = 1
    assert not profile.same_steps(other_free)
    shorter = profile.copy()
    shorter.n = 2
    assert not profile.same_steps(shorter)
    assert not shorter.same_steps(profile)


@pytest.mark.parametrize("blocked_from", [0, 10**9], ids=["blocks", "steps"])
@pytest.mark.parametrize("seed", range(10))
def test_a_plan_within_held_starts_is_the_plan_or_nothing(
    seed: int, blocked_from: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Jobs of three shapes, often side by side (placed together), some too wide to fit
    # (NEVER). Held at their own plan's starts, or later, the plan is the plan; held
    # one second earlier anywhere, or at random, it is nothing exactly when some job
    # would start later than held.
    monkeypatch.setattr(Profile, "BLOCKED_FROM", blocked_from)
    rng = random.Random(seed)
    capacity = 12
    ends = sorted(rng.randint(1, 50) for _ in range(3))
    shapes = [(rng.randint(1, capacity), rng.choice([3, 10, 40])) for _ in range(2)]
    shapes.append((capacity + 1, 10))  # never fits
    jobs = [rng.choice(shapes) for _ in range(rng.randint(20, 60))]
    widths = np.array([w for w, _ in jobs], dtype=np.int64)
    durs = np.array([d for _, d in jobs], dtype=np.int64)

    def base() -> Profile:
        return Profile.of_running(capacity, 0, ends, [3, 4, 2], room=8)

    planned = base()
    starts = planned.plan(widths, durs, 0)
    for held in (starts, np.where(starts == NEVER, NEVER, starts + 5)):
        profile = base()
        got = profile.plan_within(widths, durs, 0, held.copy())
        assert got is not None and got.tolist() == starts.tolist()
        assert profile.same_steps(planned)
    placed = np.flatnonzero((starts > 0) & (starts != NEVER))
    for k in rng.sample(placed.tolist(), min(5, len(placed))):
        held = starts.copy()
        held[k] -= 1
        assert base().plan_within(widths, durs, 0, held) is None
    for k in np.flatnonzero(starts == NEVER).tolist()[:3]:
        held = starts.copy()
        held[k] = 100  # a job that fits nowhere now had a start
        assert base().plan_within(widths, durs, 0, held) is None
    for _ in range(10):
        held = np.array([rng.choice([s, s - 1, NEVER, 0]) for s in starts.tolist()])
        got = base().plan_within(widths, durs, 0, held)
        assert (got is None) == bool((starts > held).any())
        assert got is None or got.tolist() == starts.tolist()
