"""dynP: Table 1 of Streit's dynP paper for both deciders, and traces that make dynP switch."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.sched.policies import kept_orders
from batchd.sched.policies.decider import CASES, FCFS, LJF, SJF, classify, decide, simple_decider
from batchd.sched.policies.dynp import DynP, DynPBasic
from batchd.sched.registry import PolicyError, make_policy

# Table 1: (FCFS, SJF, LJF) qualities, current policy, case, simple decider, advanced decider.
TABLE_1 = [
    ((5, 5, 5), FCFS, "1", FCFS, FCFS),
    ((5, 5, 5), SJF, "1", FCFS, SJF),
    ((5, 5, 5), LJF, "1", FCFS, LJF),
    ((5, 3, 7), FCFS, "2", SJF, SJF),
    ((5, 3, 7), LJF, "2", SJF, SJF),
    ((3, 5, 7), SJF, "3", FCFS, FCFS),
    ((3, 7, 5), LJF, "3", FCFS, FCFS),
    ((5, 7, 3), FCFS, "4a", LJF, LJF),
    ((7, 5, 3), SJF, "4c", LJF, LJF),
    ((5, 5, 3), FCFS, "5", LJF, LJF),  # also 4b: FCFS = SJF > LJF
    ((5, 5, 7), FCFS, "6a", FCFS, FCFS),
    ((5, 5, 7), SJF, "6b", FCFS, SJF),
    ((5, 5, 7), LJF, "6c", FCFS, FCFS),
    ((5, 3, 5), LJF, "7", SJF, SJF),
    ((3, 5, 3), FCFS, "8a", FCFS, FCFS),
    ((3, 5, 3), SJF, "8b", FCFS, FCFS),
    ((3, 5, 3), LJF, "8c", FCFS, LJF),
    ((3, 5, 5), SJF, "9", FCFS, FCFS),
    ((5, 3, 3), FCFS, "10a", SJF, SJF),
    ((5, 3, 3), SJF, "10b", SJF, SJF),
    ((5, 3, 3), LJF, "10c", SJF, LJF),
]


@pytest.mark.parametrize(("q", "current", "case", "simple", "advanced"), TABLE_1)
def test_table_1(q: tuple[int, int, int], current: str, case: str, simple: str, advanced: str):
    f, s, l = q  # noqa: E741
    assert classify(f, s, l, current) == case
    assert decide(f, s, l, current, "simple") == (simple, case)
    assert decide(f, s, l, current, "advanced") == (advanced, case)


def test_every_case_is_covered_except_4b_which_is_case_5():
    covered = {row[2] for row in TABLE_1}
    assert covered == set(CASES) - {"4b"}


def test_deciders_differ_exactly_in_the_bold_cases():
    # Table 1 marks cases 1, 6b, 8c and 10c: the only places the deciders disagree.
    differ = {case for (_, _, case, simple, adv) in TABLE_1 if simple != adv}
    assert differ == {"1", "6b", "8c", "10c"}


def test_simple_decider_is_the_papers_pseudo_code_on_all_orderings():
    for f in range(3):
        for s in range(3):
            for l in range(3):  # noqa: E741
                got = simple_decider(f, s, l)
                best = min(f, s, l)
                # FCFS whenever it is among the best; else SJF before LJF on a tie.
                want = FCFS if f == best else (SJF if s == best else LJF)
                assert got == want, (f, s, l)


def test_exact_fractions_compare_equal():
    a = Fraction(10, 3)
    assert classify(a, Fraction(20, 6), a, SJF) == "1"


def _run(policy, jobs: list[Job], nodes: int) -> list[Job]:
    engine = Engine(Grid([Machine("m", nodes)]), [policy])
    engine.load(jobs)
    engine.run()
    return jobs


def test_dynp_basic_switches_to_sjf_then_ljf():
    # One node, busy with job 1 until 100000. Jobs 2-6 (estimate 1000) make the AERT
    # 1000 <= 7200 at the fifth waiting job: SJF. Jobs 7-9 (estimate 50000) push it to
    # (5*1000 + 50000)/6 = 9167 > 9000: LJF, kept for jobs 8 and 9.
    jobs = [Job(1, 0, 1, 100_000, 100_000)]
    jobs += [Job(i, i - 1, 1, 1000, 1000) for i in range(2, 7)]
    jobs += [Job(i, i - 1, 1, 50_000, 50_000) for i in range(7, 10)]
    policy = DynPBasic(make_policy("dynp-basic").params)
    _run(policy, jobs, 1)
    report = policy.report()["dynp"]
    assert report["decider_calls"] == 4  # at jobs 6, 7, 8, 9
    assert report["switches"] == {FCFS: 0, SJF: 1, LJF: 1}
    assert report["jobs_started"] == {FCFS: 1, SJF: 0, LJF: 8}
    by_id = {j.id: j for j in jobs}
    # LJF: the 50000 s jobs first (ties by submit time), then the short ones.
    order = sorted(jobs, key=lambda j: j.start)
    assert [j.id for j in order] == [1, 7, 8, 9, 2, 3, 4, 5, 6]
    assert by_id[7].start == 100_000 and by_id[8].start == 150_000


def test_dynp_switches_to_sjf_when_its_plan_is_better():
    # One node busy until 1000. Job 2 (estimate 5000) and job 3 (estimate 100) wait.
    # FCFS and LJF plan 2 then 3; SJF plans 3 then 2, which ends job 3 4900 s earlier:
    # FCFS = LJF > SJF is case 7, and both deciders take SJF.
    for decider in ("simple", "advanced"):
        jobs = [Job(1, 0, 1, 1000, 1000), Job(2, 10, 1, 5000, 5000), Job(3, 20, 1, 100, 100)]
        policy = make_policy("dynp", {"decider": decider})
        assert isinstance(policy, DynP)
        _run(policy, jobs, 1)
        report = policy.report()["dynp"]
        assert report["switches"][SJF] == 1
        assert report["cases"]["7"] >= 1
        assert sum(report["cases"].values()) == report["decider_calls"]
        assert sum(report["jobs_started"].values()) == 3
        assert jobs[2].start == 1000 and jobs[1].start == 1100  # job 3 overtakes job 2
        assert jobs[2].result.started_by == SJF


def test_dynp_with_makespan_quality_picks_ljf():
    # Two nodes, both free. A long wide job first in LJF order packs better: with job 1
    # (1 node, 100 s) running, waiting jobs 2 (2 nodes, 10 s) and 3 (1 node, 300 s).
    # FCFS/SJF: 2 at 100..110, then 3 at 110..410 -> makespan 410.
    # LJF: 3 at 0..300 on the free node, 2 at 300..310 -> makespan 310.
    jobs = [Job(1, 0, 1, 100, 100), Job(2, 1, 2, 10, 10), Job(3, 2, 1, 300, 300)]
    policy = make_policy("dynp", {"quality": "ms"})
    _run(policy, jobs, 2)
    report = policy.report()["dynp"]
    assert report["switches"][LJF] == 1
    assert jobs[2].start == 2 and jobs[2].result.started_by == LJF


def test_slackness_keeps_the_current_policy_when_the_gain_is_small():
    # Same as the SJF case, but SJF gains only 4900/... < 90 %: with slackness 90 the
    # current FCFS plan is judged 10x better than it is and is kept.
    jobs = [Job(1, 0, 1, 1000, 1000), Job(2, 10, 1, 5000, 5000), Job(3, 20, 1, 100, 100)]
    policy = make_policy("dynp", {"slackness": "90"})
    _run(policy, jobs, 1)
    assert policy.report()["dynp"]["switches"][SJF] == 0
    assert jobs[1].start == 1000  # FCFS order kept


def test_reduced_future_measures_only_the_first_jobs():
    # With K=1 only the first job to start counts: FCFS starts job 2 (resp 5990+...),
    # SJF starts job 3 first; SJF is still better on that one job.
    jobs = [Job(1, 0, 1, 1000, 1000), Job(2, 10, 1, 5000, 5000), Job(3, 20, 1, 100, 100)]
    policy = make_policy("dynp", {"reduced_future": "1"})
    _run(policy, jobs, 1)
    assert policy.report()["dynp"]["switches"][SJF] == 1
    policy = make_policy("dynp", {"reduced_future": "6h"})
    assert policy.first_k is None and policy.horizon == 21600


@pytest.mark.parametrize(
    ("name", "params", "needle"),
    [
        ("dynp", {"decider": "clever"}, "decider"),
        ("dynp", {"quality": "speed"}, "quality"),
        ("dynp", {"slackness": "-1"}, "slackness"),
        ("dynp", {"reduced_future": "soon"}, "reduced_future"),
        ("dynp", {"colour": "red"}, "unknown parameter 'colour'"),
        ("dynp-basic", {"lower": "9000", "upper": "7200"}, r"lower \(9000\) must not exceed"),
        ("dynp-basic", {"threshold": "zero"}, "threshold"),
        ("fcfs-easy", {"replan": "rebuild"}, "unknown parameter"),
        ("sjf-cons", {"replan": "sometimes"}, "replan"),
    ],
)
def test_bad_parameters_are_named(name: str, params: dict[str, str], needle: str):
    with pytest.raises(PolicyError, match=needle):
        make_policy(name, params)


def test_dynp_report_has_exactly_the_documented_keys():
    policy = make_policy("dynp")
    assert set(policy.report()["dynp"]) == {
        "jobs_started", "decider_calls", "switches", "kept_share", "avg_backlog",
        "cases", "tuning_seconds_mean", "tuning_seconds_max",
    }  # fmt: skip
    assert set(make_policy("dynp-basic").report()["dynp"]) == {
        "jobs_started", "decider_calls", "switches",
    }  # fmt: skip


def test_a_step_plans_once_for_orders_that_list_the_jobs_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One node busy until 1000; job 2 (estimate 100) then job 3 (estimate 5000) wait.
    # FCFS and SJF list them 2, 3 and LJF 3, 2: two plans per step, not three, and the
    # same schedule: job 2 at 1000, job 3 at 1100.
    from batchd.sched.core.profile import Profile

    calls: list[int] = []
    plan = Profile.plan

    def counted(
        self: Profile,
        widths: np.ndarray,
        durations: np.ndarray,
        not_before: int,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        calls.append(len(widths))
        return plan(self, widths, durations, not_before, out)

    monkeypatch.setattr(Profile, "plan", counted)
    # Every step plans afresh here (none from the last step's plans: test_kept_orders.py).
    monkeypatch.setattr(kept_orders, "placed_again", lambda *args, **kw: None)
    jobs = [Job(1, 0, 1, 1000, 1000), Job(2, 10, 1, 100, 100), Job(3, 20, 1, 5000, 5000)]
    policy = make_policy("dynp")
    assert isinstance(policy, DynP)
    _run(policy, jobs, 1)
    steps = policy.report()["dynp"]["decider_calls"]
    assert steps >= 2  # at job 3's submit and at job 1's end, both with jobs 2 and 3 waiting
    assert calls.count(2) == 2 * steps
    assert jobs[1].start == 1000 and jobs[2].start == 1100


def test_the_submit_sums_follow_the_waiting_jobs() -> None:
    # Kept as jobs come, start and are withdrawn: at every step they are the sums over
    # the waiting queue, plain and times the width, as ART and ARTwW need them.
    import random
    from collections.abc import Callable

    from batchd.model.states import JobState

    rng = random.Random(3)
    jobs = []
    for i in range(1, 121):
        estimate = rng.choice([10, 60, 300, 900])
        jobs.append(Job(i, 3 * i, rng.randint(1, 6), estimate, rng.randint(1, estimate)))
    policy = make_policy("dynp")
    assert isinstance(policy, DynP)
    seen: list[bool] = []
    tune = policy.tune

    def checked(view: object, newcomer: Job | None = None) -> None:
        waiting = policy.queue.jobs
        expected = [sum(j.submit for j in waiting), sum(j.width * j.submit for j in waiting)]
        seen.append(policy.submit_sums == expected)
        tune(view, newcomer)  # type: ignore[arg-type]

    policy.tune = checked  # type: ignore[method-assign]
    engine = Engine(Grid([Machine("m", 8)]), [policy])
    engine.load(jobs)

    def withdrawal(job: Job) -> Callable[[], None]:
        def withdraw() -> None:
            if job.state is JobState.QUEUED:
                engine.withdraw(job)

        return withdraw

    for job in jobs[::7]:
        engine.call_at(job.submit + 2, withdrawal(job))
    engine.run()
    assert len(seen) > 50 and all(seen)
    assert policy.submit_sums == [0, 0]
