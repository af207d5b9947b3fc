"""The runs of Table 2: each a grid structure with its parameters, named for the tables.

Per job set and configuration (Table 2's "all" configurations):

* central single-site: scheduler FCFS, Random, Backfill (EASY) x strategy
  BestFit_Free, BiggestFree, Random_Free; and EASY with ``earliest`` (the
  machine with the earliest planned start, as Slurm picks) for comparison;
* multi-site (FCFS, BestFit_Free): overhead models 1-4 x p in ``P_VALUES``
  with min_part 1, and model 1 at p = 0.01 with larger ``MIN_PARTS``;
* hierarchical: local FCFS or EASY x BestFit_Max, EqualUtil_Max, Random_Max;
* decentral (direct communication): local FCFS or EASY x migration factor
  1 (none) or ``MIGRATION`` x home machine drawn uniformly or by size;
* job pool: FCFS or EASY x push blocked jobs or every job x migration 1 or
  ``MIGRATION``.

On the doubled job set (``DOUBLED``): central FCFS and EASY with BestFit_Free and
the four pool variants without overhead, to test the claims that need backlog.
"""

from __future__ import annotations

from dataclasses import dataclass

P_VALUES = ("0", "0.01", "0.05", "0.1")
MIN_PARTS = (8, 32, 128)
MIN_PART_AT = ("1", "0.01")  # model and p of the min_part series
MIGRATION = "1.1"
SCHEDULERS = ("fcfs", "random", "easy")
FREE_STRATEGIES = ("bestfit-free", "biggestfree-free", "random-free")
MAX_STRATEGIES = ("bestfit-max", "equalutil-max", "random-max")
LOCALS = ("fcfs", "fcfs-easy")
HOMES = ("random", "weighted")
DISCIPLINES = ("fcfs", "easy")
PUSHES = ("blocked", "all")

# How a structure's rows are named in tables and figures.
SCHEDULER_NAMES = {"fcfs": "FCFS", "random": "Random", "easy": "Backfill", "fcfs-easy": "Backfill"}
STRATEGY_NAMES = {
    "bestfit-free": "BestFit_Free",
    "biggestfree-free": "BiggestFree",
    "random-free": "Random_Free",
    "earliest": "Earliest",
    "bestfit-max": "BestFit_Max",
    "equalutil-max": "EqualUtil_Max",
    "random-max": "Random_Max",
}


@dataclass(frozen=True)
class Variant:
    """One structure with its parameters; ``key`` names it in results and tables."""

    key: str
    structure: str
    params: tuple[tuple[str, str], ...]
    doubled: bool = False  # run on the doubled job set
    cost: float = 1.0  # rough relative replay time, to start the longest first

    @property
    def param_dict(self) -> dict[str, str]:
        return dict(self.params)


def _v(key: str, structure: str, cost: float = 1.0, **params: str) -> Variant:
    return Variant(key, structure, tuple(sorted(params.items())), cost=cost)


def central(scheduler: str, select: str) -> Variant:
    cost = {"fcfs": 0.5, "random": 1.5, "easy": 2.0}[scheduler]
    return _v(f"central/{scheduler}/{select}", "central", cost, scheduler=scheduler, select=select)


def multisite(overhead: str, p: str, min_part: int = 1) -> Variant:
    return _v(
        f"multisite/m{overhead}/p{p}/min{min_part}",
        "multisite",
        0.6,
        overhead=overhead,
        p=p,
        min_part=str(min_part),
        select="bestfit-free",
    )


def hierarchical(local: str, select: str) -> Variant:
    return _v(f"hierarchical/{local}/{select}", "hierarchical", 1.0, local=local, select=select)


def decentral(local: str, migration: str, home: str) -> Variant:
    return _v(
        f"decentral/{local}/mig{migration}/{home}",
        "decentral",
        1.2,
        local=local,
        migration=migration,
        home=home,
    )


def pool(discipline: str, push: str, migration: str) -> Variant:
    return _v(
        f"pool/{discipline}/{push}/mig{migration}",
        "pool",
        2.0 if discipline == "easy" else 1.0,
        discipline=discipline,
        push=push,
        migration=migration,
        home="random",
    )


def doubled(variant: Variant) -> Variant:
    return Variant(variant.key + "/x2", variant.structure, variant.params, True, variant.cost * 6.0)


def table2() -> list[Variant]:
    """Every run on the plain job set, in the order of the tables."""
    out = [central(s, sel) for s in SCHEDULERS for sel in FREE_STRATEGIES]
    out.append(central("easy", "earliest"))
    out += [multisite(m, p) for m in ("1", "2", "3", "4") for p in P_VALUES]
    out += [multisite(*MIN_PART_AT, min_part=k) for k in MIN_PARTS]
    out += [hierarchical(loc, sel) for loc in LOCALS for sel in MAX_STRATEGIES]
    out += [decentral(loc, mig, h) for loc in LOCALS for mig in ("1", MIGRATION) for h in HOMES]
    out += [pool(d, push, mig) for d in DISCIPLINES for push in PUSHES for mig in ("1", MIGRATION)]
    return out


DOUBLED = (
    central("fcfs", "bestfit-free"),
    central("easy", "bestfit-free"),
    *(pool(d, push, "1") for d in DISCIPLINES for push in PUSHES),
)


def all_variants() -> list[Variant]:
    return [*table2(), *(doubled(v) for v in DOUBLED)]
