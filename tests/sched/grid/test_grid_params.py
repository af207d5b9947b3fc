"""The grid structures' parameters: what each structure takes, its defaults, and the
message that refuses a bad value (it names the structure, the key, the value and what
is allowed)."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from batchd.sched.grid import GridError, parse_grid_param_args, parse_grid_params, widest_job

MACHINES = ["m0", "m1", "m2"]
POLICIES = ["fcfs", "fcfs-easy", "cons"]


def parse(structure: str, **raw: str) -> object:
    return parse_grid_params(structure, raw, MACHINES, POLICIES)


def refused(message: str, structure: str, **raw: str) -> None:
    with pytest.raises(GridError, match=f"^{re.escape(message)}$"):
        parse_grid_params(structure, raw, MACHINES, POLICIES)


def test_defaults_and_what_the_summary_shows() -> None:
    central = parse_grid_params("central", {}, MACHINES)
    assert (central.scheduler, central.select) == ("easy", "bestfit-free")
    assert central.describe() == {"scheduler": "easy", "select": "bestfit-free"}
    multi = parse_grid_params("multisite", {}, MACHINES)
    assert multi.describe() == {
        "scheduler": "fcfs",
        "select": "bestfit-free",
        "min_part": "1",
        "overhead": "1",
        "p": "0",
    }
    assert (multi.min_part, multi.overhead, multi.p, multi.part_unit) == (1, 1, 0, "nodes")
    hier = parse_grid_params("hierarchical", {}, MACHINES)
    assert hier.describe() == {"select": "equalutil-max", "local": "fcfs-easy"}
    assert hier.strategy == ("equalutil", "max")
    assert parse_grid_params("decentral", {}, MACHINES).describe() == {
        "local": "fcfs-easy",
        "home": "partition",
        "migration": "1",
    }
    pool = parse_grid_params("pool", {}, MACHINES)
    assert pool.describe() == {
        "discipline": "easy",
        "push": "blocked",
        "home": "partition",
        "migration": "1",
    }
    assert (pool.migration, pool.backlog) == (1, 1)
    assert pool.raw == {}


def test_values_are_read() -> None:
    central = parse("central", scheduler="cons", select="random-max")
    assert central.describe() == {"scheduler": "cons", "select": "random-max"}
    assert central.strategy == ("random", "max")
    assert central.raw == {"scheduler": "cons", "select": "random-max"}
    for scheduler in ("fcfs", "random", "easy", "cons"):
        assert parse("central", scheduler=scheduler).scheduler == scheduler
    multi = parse("multisite", min_part="3", overhead="4", p="0.25", part_unit="mean-part")
    assert (multi.min_part, multi.overhead, multi.p) == (3, 4, Fraction(1, 4))
    assert multi.describe() == {
        "scheduler": "fcfs",
        "select": "bestfit-free",
        "min_part": "3",
        "overhead": "4",
        "p": "0.25",
        "part_unit": "mean-part",
    }
    assert parse("multisite", overhead="2", part_unit="nodes").describe()["overhead"] == "2"
    assert "part_unit" not in parse("multisite", overhead="2", part_unit="nodes").describe()
    assert parse("multisite", p="0").p == 0
    assert parse("multisite", min_part="1").min_part == 1
    assert parse("multisite", select="equalutil-free").select == "equalutil-free"
    hier = parse("hierarchical", select="bestfit-max", local="cons", **{"local.m2": "fcfs"})
    assert hier.describe() == {"select": "bestfit-max", "local": "cons"}
    assert [hier.local_policy(i) for i in range(3)] == ["cons", "cons", "fcfs"]
    assert hier.local_by_machine == {2: "fcfs"}
    dec = parse("decentral", home="weighted", migration="1.5")
    assert (dec.home, dec.migration) == ("weighted", Fraction(3, 2))
    assert dec.describe() == {"local": "fcfs-easy", "home": "weighted", "migration": "1.5"}
    pool = parse("pool", discipline="fcfs", push="overflow", backlog="0.5", home="random")
    assert pool.describe() == {
        "discipline": "fcfs",
        "push": "overflow",
        "home": "random",
        "migration": "1",
        "backlog": "0.5",
    }
    assert pool.backlog == Fraction(1, 2)
    assert parse("pool", push="all").push == "all"
    assert parse("pool", backlog="0", push="overflow").backlog == 0
    assert parse("decentral", migration="1").migration == 1


def test_policy_names_are_checked_only_when_given() -> None:
    assert parse_grid_params("hierarchical", {"local": "anything"}, MACHINES).local == "anything"


def test_unknown_structure_and_keys() -> None:
    with pytest.raises(
        GridError,
        match=re.escape(
            "unknown grid structure 'mesh'; choose one of: "
            "central, multisite, hierarchical, decentral, pool"
        )
        + "$",
    ):
        parse_grid_params("mesh", {}, MACHINES)
    refused(
        "grid central: unknown parameter 'local' (allowed: scheduler, select)",
        "central",
        local="fcfs",
    )
    refused(
        "grid central: unknown parameter 'local.m0' (allowed: scheduler, select)",
        "central",
        **{"local.m0": "fcfs"},
    )
    refused(
        "grid hierarchical: unknown parameter 'home' (allowed: select, local, local.MACHINE)",
        "hierarchical",
        home="random",
    )
    refused(
        "grid multisite: unknown parameter 'scheduler' "
        "(allowed: select, min_part, overhead, p, part_unit)",
        "multisite",
        scheduler="fcfs",
    )


def test_bad_choices() -> None:
    refused(
        "grid central: parameter scheduler='lifo': expected one of fcfs, random, easy, cons",
        "central",
        scheduler="lifo",
    )
    refused(
        "grid decentral: parameter home='near': expected one of partition, random, weighted",
        "decentral",
        home="near",
    )
    refused(
        "grid pool: parameter discipline='cons': expected one of fcfs, easy",
        "pool",
        discipline="cons",
    )
    refused(
        "grid pool: parameter push='some': expected one of blocked, all, overflow",
        "pool",
        push="some",
    )
    refused(
        "grid multisite: parameter overhead='5': expected one of 1, 2, 3, 4",
        "multisite",
        overhead="5",
    )
    refused(
        "grid multisite: parameter part_unit='cores': expected one of nodes, mean-part",
        "multisite",
        overhead="2",
        part_unit="cores",
    )


def test_bad_select() -> None:
    names = (
        "biggestfree-free, biggestfree-max, bestfit-free, bestfit-max, equalutil-free, "
        "equalutil-max, random-free, random-max, earliest"
    )
    refused(
        f"grid central: parameter select='best': expected one of {names}", "central", select="best"
    )
    frees = "biggestfree-free, bestfit-free, equalutil-free, random-free"
    for select in ("bestfit-max", "earliest"):
        refused(
            f"grid multisite: parameter select={select!r}: expected one of {frees}",
            "multisite",
            select=select,
        )
    maxes = "biggestfree-max, bestfit-max, equalutil-max, random-max"
    for select in ("bestfit-free", "earliest"):
        refused(
            f"grid hierarchical: parameter select={select!r}: expected one of {maxes}",
            "hierarchical",
            select=select,
        )
    assert parse("central", select="earliest").strategy == ("earliest", "max")


def test_bad_numbers() -> None:
    for value in ("0", "-1", "x", "1.5", ""):
        refused(
            f"grid multisite: parameter min_part={value!r}: expected an integer >= 1",
            "multisite",
            min_part=value,
        )
    for value in ("-0.1", "x", "nan", "inf", ""):
        refused(
            f"grid multisite: parameter p={value!r}: expected a decimal number >= 0",
            "multisite",
            p=value,
        )
    for value in ("0.99", "0", "y"):
        refused(
            f"grid pool: parameter migration={value!r}: expected a decimal number >= 1",
            "pool",
            migration=value,
        )
    refused(
        "grid pool: parameter backlog='-1': expected a decimal number >= 0",
        "pool",
        push="overflow",
        backlog="-1",
    )


def test_bad_local_policies() -> None:
    refused(
        "grid decentral: parameter local='lifo': unknown policy; choose one of: "
        "fcfs, fcfs-easy, cons",
        "decentral",
        local="lifo",
    )
    refused(
        "grid hierarchical: parameter local.m1='lifo': unknown policy; choose one of: "
        "fcfs, fcfs-easy, cons",
        "hierarchical",
        **{"local.m1": "lifo"},
    )
    refused(
        "grid hierarchical: parameter 'local.m9': 'm9' is not a machine (machines: m0, m1, m2)",
        "hierarchical",
        **{"local.m9": "fcfs"},
    )


def test_parameters_that_need_another_one() -> None:
    refused(
        "grid pool: parameter backlog='2' applies only with push=overflow (push is blocked)",
        "pool",
        backlog="2",
    )
    refused(
        "grid pool: parameter backlog='2' applies only with push=overflow (push is all)",
        "pool",
        push="all",
        backlog="2",
    )
    for overhead in ("1", "3"):
        refused(
            "grid multisite: parameter part_unit='nodes' applies only to overhead models 2 "
            f"and 4 (overhead is {overhead})",
            "multisite",
            overhead=overhead,
            part_unit="nodes",
        )
    refused(
        "grid multisite: parameter part_unit='nodes' applies only to overhead models 2 "
        "and 4 (overhead is 1)",
        "multisite",
        part_unit="nodes",
    )
    assert parse("multisite", overhead="4", part_unit="nodes").part_unit == "nodes"


def test_grid_param_args() -> None:
    got = parse_grid_param_args(["scheduler=easy", " select = bestfit-free ", "p=a=b", "x="])
    assert got == {"scheduler": "easy", "select": "bestfit-free", "p": "a=b", "x": ""}
    assert parse_grid_param_args([]) == {}
    for bad in ("scheduler", "=easy", " =easy"):
        with pytest.raises(GridError, match=f"^--grid-param {re.escape(repr(bad))}: "):
            parse_grid_param_args(["p=1", bad])
    with pytest.raises(GridError, match="^--grid-param 'x': expected KEY=VALUE$"):
        parse_grid_param_args(["x"])


def test_widest_job() -> None:
    assert widest_job("multisite", [4, 8, 2]) == 14
    for structure in ("central", "hierarchical", "decentral", "pool"):
        assert widest_job(structure, [4, 8, 2]) == 8
