"""Mutation testing of the scheduler core and the server's access checks, with mutmut.

    python bench/mutate.py                 # every group, one after the other
    python bench/mutate.py access model    # some groups
    python bench/mutate.py --list          # the groups, their modules and their tests

Each group mutates a few modules and runs against the test files that cover them;
mutmut narrows that further, per function, to the tests that called it in a first
clean run. The run happens in a staged copy, ``.mutate/GROUP/``: mutmut 3 wants the
package under ``src/`` (the tree keeps it under ``daemon/``), and it writes its mutants
beside a copy of the sources, so the working tree is never touched.

The kernels in ``sched/kernels`` are numba functions. mutmut leaves decorated functions
alone, so the staged copy drops their ``@njit`` lines and the run sets
``NUMBA_DISABLE_JIT=1``: what the tests then run is the same Python source that numba
compiles. Each mutant's status (with mutmut's version and the date) goes to
``.mutate/GROUP/summary.json``; the output shows the score per module and each
survivor's name for ``mutmut show``. ``--again`` runs only the last run's survivors.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAGE = ROOT / ".mutate"


@dataclass(frozen=True)
class Group:
    modules: tuple[str, ...]  # globs under daemon/, as mutmut's only_mutate sees them
    tests: tuple[str, ...]  # test files or folders that cover them


GROUPS: dict[str, Group] = {
    "access": Group(
        modules=(
            "batchd/server/service/access.py",
            "batchd/server/service/admission.py",
            "batchd/server/auth.py",
            "batchd/server/authguard.py",
        ),
        # Their unit tests: every API test passes through these checks, so with the API
        # tests each mutant would run a hundred servers.
        tests=(
            "tests/server/service/test_access.py",
            "tests/server/service/test_admission.py",
            "tests/server/test_auth.py",
            "tests/server/test_auth_guard.py",
        ),
    ),
    "model": Group(
        modules=("batchd/model/*",),
        tests=(
            "tests/model",
            "tests/site",
            "tests/sched/policies/test_limits.py",
            "tests/workload/test_swf_bounds.py",
        ),
    ),
    "kernels": Group(
        modules=("batchd/sched/kernels/*",),
        # Unit tests of the kernels against plain references, not whole policy runs: in
        # plain Python (numba off) a policy run per mutant is slow, and the profile's
        # loops run under every one of them.
        tests=(
            "tests/sched/kernels",
            "tests/sched/core/test_whatif.py",
            "tests/sched/policies/test_moldable_iterative.py::test_fig6_on_three_jobs_by_hand",
            "tests/sched/policies/test_moldable_iterative.py::"
            "test_a_job_that_never_fits_stays_at_its_minimum_and_blocks_nothing",
            "tests/sched/policies/test_moldable_iterative.py::"
            "test_rigid_and_fixed_jobs_keep_their_widths",
            "tests/sched/policies/test_moldable_iterative.py::"
            "test_the_compiled_search_plans_as_fig6_written_out",
            "tests/sched/kernels/test_kernel_edges.py",
            # plan_all's held starts, through Profile.plan_within
            "tests/sched/core/test_profile.py::test_a_plan_within_held_starts_is_the_plan_or_nothing",
        ),
    ),
    "sched-core": Group(
        modules=("batchd/sched/core/*",),
        # Unit tests only: the hand-made schedules and the engine comparisons of
        # test_forecast.py and test_whatif.py run whole policies, seconds a mutant.
        tests=(
            "tests/sched/core/test_forecaster.py",
            "tests/sched/core/test_order.py",
            "tests/sched/core/test_order_queue.py",
            "tests/sched/core/test_outline_units.py",
            "tests/sched/core/test_plans.py",
            "tests/sched/core/test_policy.py",
            "tests/sched/core/test_policy_defaults.py",
            "tests/sched/core/test_profile.py",
            "tests/sched/core/test_whatif_arguments.py",
            "tests/sched/kernels/test_compression_kernels.py",  # KeptCompression's
            # Profile.plan's choice between the plans one step at a time and on blocks.
            "tests/sched/kernels/test_blocked_plan.py::"
            "test_long_profiles_are_planned_on_blocks_and_short_ones_one_step_at_a_time",
        ),
    ),
    "policies-backfill": Group(
        modules=(
            "batchd/sched/policies/__init__.py",
            "batchd/sched/policies/conservative.py",
            "batchd/sched/policies/decider.py",
            "batchd/sched/policies/easy.py",
            "batchd/sched/policies/easy_queue.py",
            "batchd/sched/policies/gate.py",
            "batchd/sched/policies/inorder.py",
            "batchd/sched/policies/limits.py",
            "batchd/sched/policies/queues.py",
            "batchd/sched/policies/reordered.py",
            "batchd/sched/policies/reserved.py",
            "batchd/sched/policies/standing.py",
            "batchd/sched/registry.py",
        ),
        # Their unit tests, pass by pass on machines set by hand: the hand-made schedules
        # and the limits' random workloads run whole policies for every mutant.
        tests=(
            "tests/sched/policies/test_conservative.py",
            "tests/sched/policies/test_decider.py",
            "tests/sched/policies/test_easy.py",
            # Not the KTH replay of this file: 4 s of plain Python for every mutant of
            # EASY, the gates and the registry, which the unit tests cover.
            "tests/sched/policies/test_easy_queue.py::test_the_merge_meets_the_jobs_the_walk_takes",
            "tests/sched/policies/test_gate.py",
            "tests/sched/policies/test_limit_gate.py",
            "tests/sched/policies/test_queues.py",
            "tests/sched/policies/test_reordered.py",
            "tests/sched/policies/test_registry.py",
            "tests/sched/policies/test_reserved.py",
            "tests/sched/policies/test_standing.py",
            "tests/sched/policies/test_width_classes.py",
            # The plan outlines the gates and the conservative policies tell, and the run
            # limits' walk of newcomers, each against a whole walk (the quicker cases).
            "tests/sched/core/test_outline.py::test_the_outline_told_is_the_whole_plans[fcfs-cons]",
            "tests/sched/core/test_outline.py::test_the_outline_told_is_the_whole_plans[primetime]",
            "tests/sched/core/test_outline.py::test_jobs_held_by_run_limits_are_in_the_outline",
            "tests/sched/policies/test_limits.py::"
            "test_a_pass_walks_only_the_newcomers_and_decides_as_a_whole_walk[fcfs]",
            "tests/sched/policies/test_limits.py::"
            "test_a_pass_walks_only_the_newcomers_and_decides_as_a_whole_walk[fcfs-easy]",
        ),
    ),
    "policies-dynamic": Group(
        modules=(
            "batchd/sched/policies/current_utility.py",
            "batchd/sched/policies/dynp.py",
            "batchd/sched/policies/kept_orders.py",
            "batchd/sched/policies/moldable_fairshare.py",
            "batchd/sched/policies/moldable_greedy.py",
            "batchd/sched/policies/moldable_iterative.py",
            "batchd/sched/policies/primetime.py",
            "batchd/sched/policies/quality.py",
            "batchd/sched/policies/utility_easy.py",
        ),
        tests=(
            "tests/sched/policies/test_dynp.py",
            "tests/sched/policies/test_dynp_candidate.py",
            "tests/sched/policies/test_dynp_measure.py",
            "tests/sched/policies/test_dynp_withdraw.py",
            "tests/sched/policies/test_kept_orders.py",
            "tests/sched/policies/test_moldable_fairshare.py",
            "tests/sched/policies/test_moldable_greedy.py",
            "tests/sched/policies/test_moldable_iterative.py",
            "tests/sched/policies/test_moldable_queue.py",
            "tests/sched/policies/test_primetime.py",
            "tests/sched/policies/test_quality.py",
            "tests/sched/policies/test_utility_orders.py",
        ),
    ),
    "grid": Group(
        modules=("batchd/sched/grid/*",),
        tests=(
            "tests/sched/grid/test_grid_central.py",
            "tests/sched/grid/test_grid_local.py",
            "tests/sched/grid/test_grid_multisite.py",
            "tests/sched/grid/test_grid_central_pass.py",
            "tests/sched/grid/test_grid_central_plans.py",
            "tests/sched/grid/test_grid_layer.py",
            "tests/sched/grid/test_grid_local_events.py",
            "tests/sched/grid/test_grid_make.py",
            "tests/sched/grid/test_grid_multisite_parts.py",
            "tests/sched/grid/test_grid_overhead.py",
            "tests/sched/grid/test_grid_params.py",
            "tests/sched/grid/test_grid_select.py",
        ),
    ),
    "ga": Group(
        modules=("batchd/sched/ga/*",),
        # Not test_ga_replay.py: whole replays in plain Python (numba off) take seconds
        # per mutant, and the policy's unit tests cover what they check.
        tests=(
            "tests/sched/ga/test_ga.py",
            "tests/sched/ga/test_ga_operators.py",
            "tests/sched/ga/test_ga_policy.py",
            "tests/sched/ga/test_ga_search.py",
        ),
    ),
    "engine": Group(
        modules=("batchd/engine/*",),
        tests=(
            "tests/engine/test_engine.py",
            # Every policy on random workloads: nine tenths of the group's test time, and
            # what it checks of the engine the unit tests and the schedules check too.
            "--deselect=tests/engine/test_engine.py::test_no_stuck_jobs_on_synthetic_workloads",
            "tests/engine/test_engine_control.py",
            "tests/engine/test_control.py",
            "tests/engine/test_external.py",
            "tests/engine/test_reservations.py",
            "tests/engine/test_restored.py",
            "tests/engine/test_shared_nodes.py",
            "tests/engine/test_transitions.py",
            # The warm-up's logic; test_warm.py, which compiles the kernels, is too slow.
            "tests/engine/test_warm_units.py",
            # Not test_state_writers.py: it reads the package's source under daemon/,
            # which the staged copy keeps under src/ (and mutmut rewrites).
            "tests/sched/test_schedules.py",
        ),
    ),
}

# What the staged copy needs besides the package and the tests (mutmut copies tests/).
ALSO_COPY = ("conf",)
# Each mutant's pytest run ends with two full collections (pytest's check for
# exceptions raised in __del__): in a child forked from a process that holds the
# package, its tests and mutmut, they took two thirds of a quick mutant's time. Freezing
# what exists when a run starts leaves them only the run's own objects to scan.
FREEZE_CONFTEST = """\
import gc


def pytest_configure(config):
    gc.freeze()
"""
NJIT = re.compile(r"^@njit\(.*\)\n", re.MULTILINE)
RESULT = re.compile(r"^\s+(\S+)__mutmut_(\d+): (.+)$")


def stage(name: str, group: Group) -> Path:
    """A fresh copy of the tree laid out for mutmut, with the group's settings."""
    where = STAGE / name
    shutil.rmtree(where, ignore_errors=True)
    src = where / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc")
    for package in ("daemon/batchd", "daemon/batchd_studies", "client/batchclient"):
        shutil.copytree(ROOT / package, src / Path(package).name, ignore=ignore)
    shutil.copytree(ROOT / "tests", where / "tests", ignore=ignore)
    for extra in ALSO_COPY:
        shutil.copytree(ROOT / extra, where / extra, ignore=ignore)
    (where / "conftest.py").write_text(FREEZE_CONFTEST)
    for kernel in (src / "batchd" / "sched").rglob("*.py"):
        text = kernel.read_text()
        if NJIT.search(text):
            kernel.write_text(NJIT.sub("", text))
    settings = {
        "source_paths": ["src"],
        "only_mutate": [f"src/{module}" for module in group.modules],
        "also_copy": [*ALSO_COPY, "conftest.py"],
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "-p", "no:xdist", "-q"],
        "pytest_add_cli_args_test_selection": list(group.tests),
    }
    write_settings(where, settings, TIMEOUT_CONSTANT)
    return where


# mutmut stops a mutant after (clean time of its tests + constant) x 1.5 s of wall time
# (and twice that of CPU time), rather than its default 15x plus 1 s: minutes a mutant
# on a whole policy's tests. A loaded host can make a mutant's tests that slow, so the
# time-outs of a run are run once more with the longer constant before they count as
# killed; the mutants that really loop pay it once.
TIMEOUT_MULTIPLIER = 1.5
TIMEOUT_CONSTANT = 3.0
RECHECK_CONSTANT = 10.0


def write_settings(where: Path, settings: Mapping[str, object], constant: float) -> None:
    timeouts = {"timeout_multiplier": TIMEOUT_MULTIPLIER, "timeout_constant": constant}
    config = (ROOT / "pyproject.toml").read_text() + "\n[tool.mutmut]\n"
    config += "".join(
        f"{key} = {json.dumps(value)}\n" for key, value in {**settings, **timeouts}.items()
    )
    (where / "pyproject.toml").write_text(config)


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the staged copy, not the working tree, must be imported
    env["NUMBA_DISABLE_JIT"] = "1"
    return env


def mutmut(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).parent / "mutmut"), *args]
    return subprocess.run(command, cwd=where, env=environment(), text=True, capture_output=True)


KILLED = ("killed", "timeout", "caught by type check")


def results(where: Path) -> dict[str, str]:
    """Each mutant's status, as ``mutmut results`` lists them."""
    listed = mutmut(where, "results", "--all", "true").stdout
    found = (RESULT.match(line) for line in listed.splitlines())
    return {f"{m[1]}__mutmut_{m[2]}": m[3].strip() for m in found if m}


def by_module(statuses: dict[str, str]) -> dict[str, dict[str, object]]:
    """Per module: how many mutants were killed, and the survivors with their status."""
    modules: dict[str, dict[str, object]] = {}
    for name, status in sorted(statuses.items()):
        parts = name.partition("__mutmut_")[0].split(".")
        module = ".".join(p for p in parts if not p.startswith(("x_", "x\u01c1")))
        entry = modules.setdefault(module, {"killed": 0, "total": 0, "survivors": []})
        entry["total"] = int(str(entry["total"])) + 1
        if status in KILLED:
            entry["killed"] = int(str(entry["killed"])) + 1
        else:
            survivors = entry["survivors"]
            assert isinstance(survivors, list)
            survivors.append(f"{name}: {status}")
    return modules


def run(
    name: str, group: Group, max_children: int, again: bool, modules: tuple[str, ...] = ()
) -> dict[str, dict[str, object]]:
    """Mutate the group; ``again``: only the mutants the last run left alive, the rest
    keeping their last status (after new tests, say); ``modules`` narrows ``again`` to
    the survivors of those modules (``batchd.model.windows``, say)."""
    last = STAGE / name / "summary.json"
    previous: dict[str, str] = json.loads(last.read_text())["statuses"] if again else {}
    only = [
        mutant
        for mutant, status in previous.items()
        if status not in KILLED and (not modules or _in_modules(mutant, modules))
    ]
    if again and not only:
        return by_module(previous)
    where = stage(name, group)
    started = time.monotonic()
    mutate(name, where, max_children, only, "w")
    now = results(where)
    timeouts = [m for m in (only or now) if now.get(m) == "timeout"]
    if timeouts:
        settings = _settings_of(where)
        write_settings(where, settings, RECHECK_CONSTANT)
        mutate(name, where, max_children, timeouts, "a")
        now = results(where)
    statuses = {**previous, **{mutant: now[mutant] for mutant in only}} if again else now
    seconds = round(time.monotonic() - started)
    still = sum(1 for m in timeouts if now.get(m) == "timeout")
    print(f"{name}: {seconds} s; {len(timeouts)} time-outs run again, {still} still", flush=True)
    summary = {
        "group": name,
        "mutmut": version("mutmut"),
        "date": dt.date.today().isoformat(),
        "seconds": seconds,
        "timeouts_rechecked": len(timeouts),
        "timeouts_after_recheck": still,
        "statuses": statuses,
    }
    (where / "summary.json").write_text(json.dumps(summary, indent=0) + "\n")
    return by_module(statuses)


def mutate(name: str, where: Path, max_children: int, mutants: list[str], mode: str) -> None:
    """One ``mutmut run`` in the staged copy (``mutants``: only these), its output logged."""
    log = where / "run.log"
    command = [str(Path(sys.executable).parent / "mutmut"), "run", "--max-children"]
    with log.open(mode) as out:
        done = subprocess.run(
            [*command, str(max_children), *mutants],
            cwd=where,
            env=environment(),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    if done.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
        raise SystemExit(f"mutate: mutmut run failed for {name} (see {where}/run.log):\n{tail}")


def _settings_of(where: Path) -> dict[str, object]:
    """The group's [tool.mutmut] settings as staged, but the time-out's."""
    config = tomllib.loads((where / "pyproject.toml").read_text())["tool"]["mutmut"]
    return {k: v for k, v in config.items() if not k.startswith("timeout_")}


def _in_modules(mutant: str, modules: tuple[str, ...]) -> bool:
    return any(mutant.startswith(f"{module}.") for module in modules)


def report(name: str, modules: dict[str, dict[str, object]]) -> None:
    for module, entry in sorted(modules.items()):
        killed, total = int(str(entry["killed"])), int(str(entry["total"]))
        print(f"{name:10} {module:45} {killed:4}/{total:<4} {100 * killed / max(total, 1):5.1f} %")
        survivors = entry["survivors"]
        assert isinstance(survivors, list)
        for survivor in survivors:
            print(f"{'':10}   survived: {survivor}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("groups", nargs="*", help=f"some of {', '.join(GROUPS)} (default all)")
    parser.add_argument("--list", action="store_true", help="show the groups and stop")
    parser.add_argument("--max-children", type=int, default=1, help="mutants run at once")
    parser.add_argument(
        "--again", action="store_true", help="run only the last run's survivors again"
    )
    parser.add_argument(
        "--only",
        nargs="+",
        default=(),
        metavar="MODULE",
        help="with --again: only the survivors of these modules (batchd.model.windows ...)",
    )
    args = parser.parse_args()
    if args.only and not args.again:
        parser.error("--only narrows --again: give --again too")
    unknown = [name for name in args.groups if name not in GROUPS]
    if unknown:
        parser.error(f"no group {', '.join(unknown)}: choose from {', '.join(GROUPS)}")
    if args.list:
        for name, group in GROUPS.items():
            print(f"{name}: {' '.join(group.modules)}\n    tests: {' '.join(group.tests)}")
        return
    for name in args.groups or list(GROUPS):
        report(name, run(name, GROUPS[name], args.max_children, args.again, tuple(args.only)))


if __name__ == "__main__":
    main()
