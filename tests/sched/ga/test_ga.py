"""The ga policy (Lee's utility paper, sec. 6): its fitness by hand, its seed orders, the search
(deterministic for a seed, never below its best seed order, stopped by its budget) and its
parameters. Whole replays are in test_ga_replay.py."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from batchd.model.job import Job
from batchd.model.utility import Utility
from batchd.sched.core.whatif import easy_starts
from batchd.sched.ga.problem import SEEDS, Problem, worth_searching
from batchd.sched.ga.search import search
from batchd.sched.registry import PolicyError, make_policy


def job(i: int, submit: int, width: int, estimate: int, utility: str | None, **kw: int) -> Job:
    fn = Utility.parse(utility) if utility else None
    return Job(
        id=i, submit=submit, width=width, estimate=estimate, runtime=estimate, utility=fn, **kw
    )


def scores(problem: Problem, orders: list[list[int]]) -> list[float]:
    out = np.empty(len(orders))
    problem.fitness(np.array(orders, dtype=np.int64), out)
    return out.tolist()


# Two free nodes at now = 0, nothing running. Job 0: 1 node, 10 s, 0:60,20:0; job 1:
# 2 nodes, 10 s, 0:100,20:0.
# Order 0 1: job 0 [0,10) earns 60 - 60 x 10/20 = 30; job 1 (2 nodes) waits for it,
#   [10,20), ends 20 s after submission: 0. Total 30.
# Order 1 0: job 1 [0,10) earns 50; job 0 [10,20): 0. Total 50.
TWO = [job(1, 0, 1, 10, "0:60,20:0"), job(2, 0, 2, 10, "0:100,20:0")]


def test_fitness_is_the_aggregate_utility_of_the_easy_schedule_by_hand() -> None:
    problem = Problem.build(0, 2, [], [], TWO, 200)
    assert scores(problem, [[0, 1], [1, 0]]) == [30.0, 50.0]


def test_fitness_counts_running_jobs_and_the_unsearched_tail() -> None:
    # 4 nodes, 2 running until 5. Waiting (submitted at 0, now 2): a (2 nodes, 10 s,
    # 0:100,100:0), b (3 nodes, 10 s, 0:90,100:0), c (1 node, 4 s, 0:40,40:0); only the
    # first 2 are searched, c follows. Order a b c: a [2,12) ends 12 -> 88; b needs 3,
    # free 0 until 5 (2 free), 12 (4 free) -> [12,22) -> 90 - 0.9 x 22 = 70.2; c (1 node)
    # fits now? free 0 at 2 -> at 5 free 2, ends 9 <= shadow 12 -> [5,9) -> 40 - 9 = 31.
    jobs = [job(1, 0, 2, 10, "0:100,100:0"), job(2, 0, 3, 10, "0:90,100:0")]
    jobs.append(job(3, 0, 1, 4, "0:40,40:0"))
    problem = Problem.build(2, 4, [5], [2], jobs, 2)
    assert problem.k == 2
    [got] = scores(problem, [[0, 1, 2]])
    starts = easy_starts(2, 4, [5], [2], [2, 3, 1], [10, 10, 4], [0, 0, 0]).tolist()
    assert starts == [2, 12, 5]
    assert got == pytest.approx(88 + 70.2 + 31)


def test_the_seed_orders() -> None:
    # now 0, 10 free nodes. Job 0: class 2, worth 10 now over 1 node-hour -> 10/node-hour.
    # Job 1: class 0, worth 30 over 6 node-hours -> 5. Job 2: class 1, worth 20 over 1
    # node-hour -> 20. Job 3: class 0, no function -> 0.
    jobs = [
        job(1, 0, 1, 3600, "0:10,7200:10,7201:0", priority_class=2),
        job(2, 0, 2, 10800, "0:30,20000:30,20001:0"),
        job(3, 0, 1, 3600, "0:20,7200:20,7201:0", priority_class=1),
        job(4, 0, 1, 3600, None),
    ]
    problem = Problem.build(0, 10, [], [], jobs, 200)
    assert problem.current_utility().tolist() == [10.0, 30.0, 20.0, 0.0]
    orders = problem.seed_orders().tolist()
    assert len(orders) == len(SEEDS)
    assert orders == [[0, 1, 2, 3], [1, 3, 2, 0], [2, 0, 1, 3], [1, 2, 0, 3]]


def test_the_pbs_priority_comes_first_in_every_seed_order() -> None:
    jobs = [job(1, 0, 1, 10, "0:100,100:0"), job(2, 0, 1, 10, "0:1,100:0", priority=5)]
    problem = Problem.build(0, 10, [], [], jobs, 200)
    assert problem.seed_orders()[:, 0].tolist() == [0, 1, 1, 1]


def test_worth_searching() -> None:
    a, b = TWO
    assert worth_searching(2, 2, [a, b])
    assert not worth_searching(3, 3, [a, b])  # both start at once
    assert not worth_searching(0, 2, [a, b])  # nothing starts, in any order
    assert not worth_searching(2, 2, [a])
    plain = [job(1, 0, 1, 10, None), job(2, 0, 2, 10, None)]
    assert not worth_searching(2, 2, plain)  # every order earns 0
    huge = job(3, 0, 9, 10, "0:5,10:0")
    assert not worth_searching(2, 2, [a, huge])  # the 9-wide job never runs here


def random_problem(seed: int, n: int = 30, searched: int = 200) -> Problem:
    rng = random.Random(seed)
    now = 10_000
    jobs = []
    for i in range(n):
        est = rng.choice([60, 600, 3600, 7200])
        start = round(rng.uniform(10, 5000) * est / 600, 2)
        deadline = rng.randint(est, 4 * est + 20_000)
        util = f"0:{start},{deadline // 2}:{round(start / 3, 2)},{deadline}:0"
        jobs.append(job(i + 1, now - rng.randint(0, 5000), rng.randint(1, 16), est, util))
    jobs.sort(key=lambda j: (j.submit, j.id))
    ends = sorted(now + rng.randint(1, 7200) for _ in range(5))
    return Problem.build(now, 64, ends, [8] * 5, jobs, searched)


def test_the_search_is_deterministic_for_a_seed() -> None:
    problem = random_problem(1)
    runs = [
        search(problem, size=20, generations=30, mutation=0.1, rng=np.random.default_rng(s))
        for s in (7, 7, 8)
    ]
    assert runs[0].order.tolist() == runs[1].order.tolist()
    assert runs[0].fitness == runs[1].fitness
    assert sorted(runs[2].order.tolist()) == list(range(problem.n))


@pytest.mark.parametrize("seed", range(6))
def test_the_best_order_never_scores_below_the_best_seed_order(seed: int) -> None:
    problem = random_problem(seed, searched=20)
    result = search(problem, size=8, generations=25, mutation=0.3, rng=np.random.default_rng(seed))
    seeds = scores(problem, problem.seed_orders().tolist())
    assert result.best_seed == max(seeds)
    assert result.fitness >= result.best_seed
    # The answer is the fitness of the order it names, and a permutation with its tail.
    assert scores(problem, [result.order.tolist()]) == [result.fitness]
    assert sorted(result.order[:20].tolist()) == list(range(20))
    assert result.order[20:].tolist() == list(range(20, 30))


def test_no_generations_is_the_best_seed_and_the_budget_stops_the_search() -> None:
    problem = random_problem(3)
    zero = search(problem, size=6, generations=0, mutation=0.1, rng=np.random.default_rng(1))
    assert zero.generations == 0 and zero.fitness >= zero.best_seed
    ticks = itertools.count()
    result = search(
        problem,
        size=6,
        generations=1000,
        mutation=0.1,
        rng=np.random.default_rng(1),
        budget=3.5,
        clock=lambda: float(next(ticks)),  # one second a reading
    )
    # Readings: 0 at the start, then 1, 2, 3 before generations 1-3 (under 3.5 s), 4 stops.
    assert (result.generations, result.stopped) == (3, "budget")
    assert result.fitness >= result.best_seed


def test_search_refuses_what_it_cannot_do() -> None:
    problem = random_problem(2)
    with pytest.raises(ValueError, match="at least 4 orders"):
        search(problem, size=3, generations=1, mutation=0.1, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="at least two jobs"):
        search(Problem.build(0, 2, [], [], TWO[:1], 5), size=4, generations=1, mutation=0.1,
               rng=np.random.default_rng(0))  # fmt: skip


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"population": "3"},
            "parameter population='3': Input should be greater than or equal to 4",
        ),
        ({"population": "many"}, "parameter population='many'"),
        ({"generations": "-1"}, "parameter generations='-1'"),
        ({"mutation": "1.5"}, "parameter mutation='1.5': Input should be less than or equal to 1"),
        ({"searched": "1"}, "parameter searched='1'"),
        ({"budget": "-2"}, "parameter budget='-2'"),
        ({"seed": "-1"}, "parameter seed='-1'"),
        ({"generation": "5"}, "unknown parameter 'generation' (allowed: population, generations"),
    ],
)
def test_bad_parameters_are_refused_by_name(params: dict[str, str], message: str) -> None:
    with pytest.raises(PolicyError) as err:
        make_policy("ga", params)
    assert str(err.value).startswith("policy ga: ")
    assert message in str(err.value)
