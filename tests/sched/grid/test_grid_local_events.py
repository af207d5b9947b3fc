"""Hierarchical, decentral and pool grids: withdrawn and resumed jobs, the pool's pulls
and backlog, what the layer keeps of finished jobs. Jobs are (id, submit, width,
runtime), estimate = runtime; ``home`` the 1-based partition field."""

from __future__ import annotations

from gridutil import idle_grid, job, run_grid, table

from batchd.sched.grid.local import DecentralGrid, HierarchicalGrid, LocalGrid, PoolGrid


def ids(jobs: list) -> list[int]:
    return [j.id for j in jobs]


def test_hierarchical_resume_keeps_the_machine_it_had() -> None:
    layer, _ = idle_grid("hierarchical", [4, 8], select="bestfit-max")
    assert isinstance(layer, HierarchicalGrid)
    a = job(1, 0, 2, 100)
    layer.resume(a, 1)  # bestfit would choose m0
    assert (a.machine, layer.assigned(a), layer.queued) == (1, 1, [0, 2])
    assert ids(layer.waiting_on(1)) == [1]
    assert ids(layer.waiting_on(0)) == []
    # none, or a machine too narrow now: handed out as at submission (bestfit: m1)
    for machine in (None, 0):
        layer, _ = idle_grid("hierarchical", [2, 8], select="bestfit-max")
        b = job(2, 0, 4, 100)
        layer.resume(b, machine)
        assert (layer.assigned(b), layer.queued, ids(layer.waiting_on(1))) == (1, [0, 4], [2])
    layer.withdraw(b)
    assert (layer.queued, layer.waiting_on(1)) == ([0, 0], [])


def test_resumed_running_job_is_handed_to_its_machine_policy() -> None:
    layer, _ = idle_grid("hierarchical", [4, 8])
    assert isinstance(layer, LocalGrid)
    layer.ports[1].job_resumed(None, job(1, 0, 2, 100))  # type: ignore[arg-type]
    assert layer.local_policy(1) is layer.local[1]


def test_decentral_resume_and_withdraw_keep_homes_in_step() -> None:
    layer, _ = idle_grid("decentral", [4, 4], home="random")
    assert isinstance(layer, DecentralGrid)
    a = job(1, 0, 4, 100)
    layer.resume(a, 1)
    assert (layer.home, layer.queued, ids(layer.waiting_on(1))) == ({1: 1}, [0, 4], [1])
    assert layer.fresh == []  # waits as before the restart, not as an arrival
    layer.withdraw(a)
    assert (layer.home, layer.queued, layer.waiting_on(1)) == ({}, [0, 0], [])
    # a machine too narrow now: a new home, drawn as at submission
    layer, _ = idle_grid("decentral", [2, 4], home="random")
    assert isinstance(layer, DecentralGrid)
    b = job(2, 0, 4, 100)
    layer.resume(b, 0)
    assert (layer.home, layer.queued, layer.fresh) == ({2: 1}, [0, 4], [b])
    layer, _ = idle_grid("decentral", [2, 4], home="random")
    layer.resume(b, None)
    assert layer.home == {2: 1}  # type: ignore[attr-defined]


def test_pool_push_all_waits_in_the_pool_at_home() -> None:
    layer, engine = idle_grid("pool", [4, 2], push="all", home="random")
    assert isinstance(layer, PoolGrid)
    a, b = job(1, 0, 3, 100), job(2, 0, 1, 100)
    layer.rng.seed(0)
    layer.submitted(a)  # only m0 is wide enough
    layer.submitted(b)
    assert (a.machine, layer.assigned(a)) == (0, 0)
    assert b.machine == layer.assigned(b)
    assert ids(layer.waiting_on(0)) == [1, 2]  # the pool is reported by machine 0 alone
    assert ids(layer.waiting_on(1)) == []
    assert layer.stats.pool_pushes == 2
    engine.withdraw(a)  # through the port of the machine the job names
    assert ids(layer.pool) == [2]
    assert layer.assigned(a) is None


def test_pool_resume_to_a_narrow_or_no_machine_is_a_new_arrival() -> None:
    for machine in (None, 0):
        layer, _ = idle_grid("pool", [2, 4], push="overflow", home="random")
        assert isinstance(layer, PoolGrid)
        a = job(1, 0, 4, 100)
        layer.resume(a, machine)
        # joins m1 (the only one wide enough) as a fresh arrival: the pass decides
        assert (layer.assigned(a), layer.fresh, layer.pool) == (1, [a], [])
        assert ids(layer.local[1].waiting()) == [1]
        layer.withdraw(a)
        assert (layer.home, layer.queued, layer.local[1].waiting()) == ({}, [0, 0], [])


def test_pool_pulls_down_to_the_last_idle_node() -> None:
    # push=all, fcfs, one machine of 4: J1 w3 and J2 w1 are both pulled at 0. J3 w1
    # arrives at 20, when one node is idle (J2 ended at 10): pulled at once.
    jobs = [job(1, 0, 3, 100), job(2, 0, 1, 10), job(3, 20, 1, 10)]
    _, _, out = run_grid("pool", [4], jobs, push="all")
    assert table(out) == {1: (0, 0, 100), 2: (0, 0, 10), 3: (0, 20, 30)}


# push=all, easy, migration 2; m0 10 nodes, m1 1 node; homes m0 but J6's (m1).
# t=0, m0 pulls in pool order: J1 w4 100 s (free 6). J2 w8 10 s does not fit:
# reservation at 100 (6 + 4 = 10 nodes), extra 2. J3 w3 100 s ends at 100, the
# shadow time itself: pulled (free 3), extra still 2. J4 w2 200 s ends after it but
# takes the 2 extra nodes: pulled (free 1, extra 0). J5 w1 200 s would delay J2:
# not pulled. J6 w1 50 s from m1: 50 * 2 = 100 s, ends at 100: pulled (free 0).
# m1 pulls J5 (200 * 2 = 400 s). t=100: J1, J3, J6 end: m0 has 8 idle, J2 [100,110).
def test_pool_easy_pulls_around_the_reservation() -> None:
    jobs = [
        job(1, 0, 4, 100, home=1),
        job(2, 0, 8, 10, home=1),
        job(3, 0, 3, 100, home=1),
        job(4, 0, 2, 200, home=1),
        job(5, 0, 1, 200, home=1),
        job(6, 0, 1, 50, home=2),
    ]
    layer, _, out = run_grid("pool", [10, 1], jobs, push="all", migration="2")
    assert table(out) == {
        1: (0, 0, 100),
        2: (0, 100, 110),
        3: (0, 0, 100),
        4: (0, 0, 200),
        5: (1, 0, 400),
        6: (0, 0, 100),
    }
    assert (layer.stats.pool_pushes, layer.stats.pool_pulls, layer.stats.migrations) == (6, 6, 2)


# push=overflow, backlog 2, one machine of 4. t=0: J1 w4 100 s starts; J2 w4 stays at
# home (0 + 4 <= 8). t=1: J3, J4, J5 w2 arrive: 4 + 2 = 6 and 6 + 2 = 8 nodes waiting
# keep J3 and J4 at home, J5 (8 + 2 > 8) goes to the pool.
def test_pool_overflow_counts_every_job_kept_at_home() -> None:
    layer, engine = idle_grid("pool", [4], push="overflow", backlog="2")
    assert isinstance(layer, PoolGrid)
    engine.load([job(1, 0, 4, 100), job(2, 0, 4, 10)] + [job(i, 1, 2, 10) for i in (3, 4, 5)])
    engine.run(until=1)
    assert ids(layer.local[0].waiting()) == [2, 3, 4]
    assert ids(layer.pool) == [5]
    assert layer.stats.pool_pushes == 1


# push=overflow, easy, one machine of 4. t=0: J1 w2 100 s starts; J2 w4 10 s waits at
# home (reservation at 100, when J1, started in this very pass, ends: extra 0); J3 w2
# 200 s goes to the pool (4 + 2 > 4) and is not pulled: it would end at 200 > 100 on
# the reserved nodes. t=100: J2 [100,110); t=110: J3 pulled [110,310).
def test_pool_pull_respects_a_reservation_made_in_the_same_pass() -> None:
    jobs = [job(1, 0, 2, 100), job(2, 0, 4, 10), job(3, 0, 2, 200)]
    layer, _, out = run_grid("pool", [4], jobs, push="overflow")
    assert table(out) == {1: (0, 0, 100), 2: (0, 100, 110), 3: (0, 110, 310)}
    assert (layer.stats.pool_pushes, layer.stats.pool_pulls) == (1, 1)


def test_local_reservation_of_the_own_first_job() -> None:
    layer, _ = idle_grid("pool", [4], push="overflow")
    assert isinstance(layer, PoolGrid)
    assert layer.local_reservation(0, 4, []) is None  # nothing waits at home
    layer.join(job(1, 0, 2, 10), 0)
    # it fits the idle nodes: they are held now, the rest is extra
    assert layer.local_reservation(0, 3, []) == (0, 1)
    assert layer.local_reservation(0, 2, []) == (0, 0)
    # 1 idle node, 1 more back at 50 from a job started in this pass
    assert layer.local_reservation(0, 1, [(50, 1), (80, 2)]) == (50, 0)
    blocked, _ = idle_grid("pool", [4], push="blocked")
    assert isinstance(blocked, PoolGrid)
    blocked.join(job(1, 0, 2, 10), 0)
    assert blocked.local_reservation(0, 1, [(50, 1)]) is None  # own queues empty


def test_finished_jobs_leave_no_home_behind() -> None:
    jobs = [job(1, 0, 4, 100, home=1), job(2, 0, 2, 100, home=1), job(3, 0, 4, 10, home=1)]
    layer, _, _ = run_grid("decentral", [4, 4], jobs, migration="1.5")
    assert layer.home == {}  # type: ignore[attr-defined]
    for push in ("blocked", "all", "overflow"):
        jobs = [job(1, 0, 4, 100, home=1), job(2, 0, 2, 50, home=1), job(3, 0, 4, 10, home=2)]
        layer, _, _ = run_grid("pool", [4, 4], jobs, push=push)
        assert layer.home == {}  # type: ignore[attr-defined]


def test_pool_homes_are_seeded() -> None:
    def homes(seed: int) -> list[int]:
        jobs = [job(i, i * 1000, 1, 10) for i in range(1, 31)]  # never waits: runs at home
        return [j.machine for j in run_grid("pool", [4, 4], jobs, seed=seed, home="random")[2]]

    assert homes(3) == homes(3)
    assert homes(3) != homes(4)
    assert set(homes(3)) == {0, 1}


# push=all, easy, one machine of 4: J1 w3 1 s; J2 w4 10 s reserved at 1 (extra 0);
# J3 w1 with no estimate (0 s) counts as ending at 0 + 1 = 1, the shadow time: pulled.
def test_pool_job_without_estimate_counts_one_second() -> None:
    jobs = [job(1, 0, 3, 1), job(2, 0, 4, 10), job(3, 0, 1, 0)]
    _, _, out = run_grid("pool", [4], jobs, push="all")
    assert table(out) == {1: (0, 0, 1), 2: (0, 1, 11), 3: (0, 0, 0)}


# Local conservative policies plan with the machine's view and the ended job itself.
# hierarchical bestfit-max on m0 4, m1 8, all at 0: J1 w2 100 s and J2 w2 100 s -> m0,
# J3 w4 100 s and J4 w4 50 s -> m1: all start at 0. J5 w8 10 s -> m1 (the only one
# wide enough): at 100.
def test_local_conservative_policies() -> None:
    jobs = [
        job(1, 0, 2, 100),
        job(2, 0, 2, 100),
        job(3, 0, 4, 100),
        job(4, 0, 4, 50),
        job(5, 0, 8, 10),
    ]
    _, _, out = run_grid("hierarchical", [4, 8], jobs, select="bestfit-max", local="fcfs-cons")
    assert table(out) == {
        1: (0, 0, 100),
        2: (0, 0, 100),
        3: (1, 0, 100),
        4: (1, 0, 50),
        5: (1, 100, 110),
    }
    # decentral, homes m0: J1 w4 100 s at home, J2 w2 100 s moves to m1 (no stretch).
    jobs = [job(1, 0, 4, 100, home=1), job(2, 0, 2, 100, home=1), job(3, 0, 4, 10, home=1)]
    _, _, out = run_grid("decentral", [4, 4], jobs, local="fcfs-cons")
    assert table(out) == {1: (0, 0, 100), 2: (1, 0, 100), 3: (0, 100, 110)}


def test_a_job_running_before_a_restart_ends() -> None:
    for structure in ("decentral", "pool"):
        layer, _ = idle_grid(structure, [4, 4])
        running = job(1, 0, 2, 100)
        layer.ports[1].job_resumed(None, running)  # type: ignore[arg-type]
        layer.ports[1].job_ended(None, running)  # type: ignore[arg-type]
        assert layer.home == {}  # type: ignore[attr-defined]


# decentral, m0 and m1 of 4, homes m0 unless said. J1 w4 100 s starts at home; J9 w3
# 100 s (home m1) leaves m1 one idle node; J2 w1 10 s cannot start at home: moves to
# m1's last node at 0.
def test_decentral_moves_a_job_to_a_single_idle_node() -> None:
    jobs = [job(1, 0, 4, 100, home=1), job(9, 0, 3, 100, home=2), job(2, 0, 1, 10, home=1)]
    layer, _, out = run_grid("decentral", [4, 4], jobs)
    assert table(out) == {1: (0, 0, 100), 9: (1, 0, 100), 2: (1, 0, 10)}
    assert layer.stats.migrations == 1


# J1 w4 100 s at home m0; J9 w2 100 s at home m1 (2 idle); J2 w4 10 s (home m0) waits
# at home, the head of its queue: m1 has 2 idle, too few. J3 w1 and J4 w1 arrive at 5
# (home m0) behind J2: each is offered at its arrival second and moves to m1 [5,15).
def test_decentral_offers_each_arrival_not_only_the_head() -> None:
    jobs = [
        job(1, 0, 4, 100, home=1),
        job(9, 0, 2, 100, home=2),
        job(2, 0, 4, 10, home=1),
        job(3, 5, 1, 10, home=1),
        job(4, 5, 1, 10, home=1),
    ]
    layer, _, out = run_grid("decentral", [4, 4], jobs)
    assert table(out) == {
        1: (0, 0, 100),
        9: (1, 0, 100),
        2: (0, 100, 110),
        3: (1, 5, 15),
        4: (1, 5, 15),
    }
    assert layer.stats.migrations == 2


# Three machines of 4: J1 w4 100 s fills m0, its home; J2 w2 10 s (home m0) moves to
# the first machine that can start it, m1, once only.
def test_decentral_moves_a_job_once() -> None:
    jobs = [job(1, 0, 4, 100, home=1), job(2, 0, 2, 10, home=1)]
    layer, _, out = run_grid("decentral", [4, 4, 4], jobs)
    assert table(out) == {1: (0, 0, 100), 2: (1, 0, 10)}
    assert layer.stats.migrations == 1


# push=blocked, migration 2, m0 and m1 of 4: J1 w4 50 s waited before a restart with
# home m0; it goes back to the pool with that home, and m0 (the first to pull) runs it
# unstretched.
def test_pool_resume_keeps_the_home() -> None:
    layer, engine = idle_grid("pool", [4, 4], migration="2")
    assert isinstance(layer, PoolGrid)
    a = job(1, 0, 4, 50)
    layer.resume(a, 0)
    assert (a.machine, layer.assigned(a), ids(layer.pool)) == (0, 0, [1])
    engine.instant(0)  # a pass at second 0
    engine.run()
    assert (a.machine, a.start, a.end) == (0, 0, 50)
    assert (layer.stats.migrations, layer.stats.pool_pulls) == (0, 1)


# push=all, easy, one machine of 8: J1 w4 100 s pulled (4 free); J2 w6 10 s does not
# fit: reservation at 100, extra 2; J3 w5 10 s does not fit either: passed over, and
# the pulls go on: J4 w1 10 s ends before 100: pulled at 0. t=100: J2 [100,110);
# t=110: J3 [110,120).
def test_pool_easy_pulls_past_jobs_that_do_not_fit() -> None:
    jobs = [job(1, 0, 4, 100), job(2, 0, 6, 10), job(3, 0, 5, 10), job(4, 0, 1, 10)]
    _, _, out = run_grid("pool", [8], jobs, push="all")
    assert table(out) == {1: (0, 0, 100), 2: (0, 100, 110), 3: (0, 110, 120), 4: (0, 0, 10)}
