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

Added to Table 2's runs (``extra_plain``, ``EXTRA_DOUBLED``): the paper's job pool
(``push=overflow``: local backlogs of ``BACKLOG`` machine-fulls, the rest to the
pool) x FCFS or EASY x migration 1 or ``MIGRATION``, also on the doubled set (there
with ``BACKLOG_SENSITIVITY`` too); the
normalized reading of overhead models 2 and 4 (``part_unit=mean-part``) x p; and
the min_part series again under model 3 and at a larger p (``MIN_PART_SERIES``).
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
OVERFLOW = "overflow"  # the paper's pool: local backlogs, the overflow to the pool
BACKLOG = "1"
BACKLOG_SENSITIVITY = ("0.25", "4")  # the paper's pool on the doubled set: less, more at home
MEAN_PART = "mean-part"
NORMALIZED_MODELS = ("2", "4")
MIN_PART_SERIES = (MIN_PART_AT, ("1", "0.1"), ("3", "0.01"), ("3", "0.1"))

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


def multisite(overhead: str, p: str, min_part: int = 1, part_unit: str = "nodes") -> Variant:
    extra = {} if part_unit == "nodes" else {"part_unit": part_unit}
    return _v(
        f"multisite/m{overhead}/p{p}/min{min_part}" + ("" if not extra else f"/{part_unit}"),
        "multisite",
        0.6,
        overhead=overhead,
        p=p,
        min_part=str(min_part),
        select="bestfit-free",
        **extra,
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


def pool(discipline: str, push: str, migration: str, backlog: str = BACKLOG) -> Variant:
    extra = {"backlog": backlog} if push == OVERFLOW else {}
    return _v(
        f"pool/{discipline}/{push}/mig{migration}"
        + ("" if backlog == BACKLOG else f"/backlog{backlog}"),
        "pool",
        2.0 if discipline == "easy" else 1.0,
        discipline=discipline,
        push=push,
        migration=migration,
        home="random",
        **extra,
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


def min_part_series() -> list[Variant]:
    """Every (model, p) of ``MIN_PART_SERIES`` with min_part 1 and ``MIN_PARTS``."""
    return [multisite(m, p, k) for m, p in MIN_PART_SERIES for k in (1, *MIN_PARTS)]


def extra_plain() -> list[Variant]:
    """The runs beyond Table 2 on the plain job sets (Table 2's own left out)."""
    known = {v.key for v in table2()}
    out = [pool(d, OVERFLOW, mig) for d in DISCIPLINES for mig in ("1", MIGRATION)]
    out += [multisite(m, p, part_unit=MEAN_PART) for m in NORMALIZED_MODELS for p in P_VALUES]
    out += [v for v in min_part_series() if v.key not in known]
    return out


EXTRA_DOUBLED = tuple(
    pool(d, OVERFLOW, "1", b) for d in DISCIPLINES for b in (BACKLOG, *BACKLOG_SENSITIVITY)
)


def all_variants() -> list[Variant]:
    return [
        *table2(),
        *(doubled(v) for v in DOUBLED),
        *extra_plain(),
        *(doubled(v) for v in EXTRA_DOUBLED),
    ]
