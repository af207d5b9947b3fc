"""The grid structures' parameters: ``--grid-param KEY=VALUE`` and ``[grid.params]``.

Values arrive as strings; each is checked here and a bad one is refused with a
message that names the structure, the key, the value and what is allowed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from batchd.sched.grid.overhead import PART_UNITS
from batchd.sched.grid.select import parse_strategy, strategy_names

STRUCTURES = ("central", "multisite", "hierarchical", "decentral", "pool")
SCHEDULERS = ("fcfs", "random", "easy", "cons")
HOMES = ("partition", "random", "weighted")

# Which keys each structure takes ("local.MACHINE" is checked apart).
KEYS: dict[str, tuple[str, ...]] = {
    "central": ("scheduler", "select"),
    "multisite": ("select", "min_part", "overhead", "p", "part_unit"),
    "hierarchical": ("select", "local"),
    "decentral": ("local", "home", "migration"),
    "pool": ("discipline", "push", "backlog", "home", "migration"),
}
PUSHES = ("blocked", "all", "overflow")
DEFAULT_SELECT = {
    "central": "bestfit-free",
    "multisite": "bestfit-free",
    "hierarchical": "equalutil-max",
}


class GridError(ValueError):
    """An unknown grid structure or a bad grid parameter."""


@dataclass
class GridParams:
    """The checked parameters of a grid structure (those it does not take keep defaults)."""

    structure: str
    scheduler: str = "easy"
    select: str = "bestfit-free"
    min_part: int = 1
    overhead: int = 1
    p: Fraction = Fraction(0)
    p_text: str = "0"
    part_unit: str = "nodes"  # how models 2 and 4 count a part's size r_i
    local: str = "fcfs-easy"
    local_by_machine: dict[int, str] = field(default_factory=dict)
    home: str = "partition"
    migration: Fraction = Fraction(1)
    migration_text: str = "1"
    discipline: str = "easy"
    push: str = "blocked"
    backlog: Fraction = Fraction(1)  # push=overflow: machine-fulls of waiting nodes kept
    backlog_text: str = "1"
    raw: dict[str, str] = field(default_factory=dict)

    @property
    def strategy(self) -> tuple[str, str]:
        return parse_strategy(self.select)

    def local_policy(self, machine: int) -> str:
        return self.local_by_machine.get(machine, self.local)

    def describe(self) -> dict[str, str]:
        """The parameters in force, as the summary shows them."""
        out: dict[str, str] = {}
        s = self.structure
        if s == "central":
            out = {"scheduler": self.scheduler, "select": self.select}
        elif s == "multisite":
            out = {
                "scheduler": "fcfs",
                "select": self.select,
                "min_part": str(self.min_part),
                "overhead": str(self.overhead),
                "p": self.p_text,
            }
            if self.part_unit != "nodes":
                out["part_unit"] = self.part_unit
        elif s == "hierarchical":
            out = {"select": self.select, "local": self.local}
        elif s == "decentral":
            out = {"local": self.local, "home": self.home, "migration": self.migration_text}
        elif s == "pool":
            out = {
                "discipline": self.discipline,
                "push": self.push,
                "home": self.home,
                "migration": self.migration_text,
            }
            if self.push == "overflow":
                out["backlog"] = self.backlog_text
        return out


def _decimal(structure: str, key: str, value: str, least: int) -> Fraction:
    try:
        d = Decimal(value)
    except InvalidOperation:
        d = Decimal("NaN")
    if not d.is_finite() or d < least:
        raise GridError(
            f"grid {structure}: parameter {key}={value!r}: expected a decimal number >= {least}"
        )
    return Fraction(d)


def _choice(structure: str, key: str, value: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise GridError(
            f"grid {structure}: parameter {key}={value!r}: expected one of {', '.join(allowed)}"
        )
    return value


def parse_grid_params(
    structure: str,
    raw: Mapping[str, str],
    machines: Sequence[str],
    policy_names: Sequence[str] = (),
) -> GridParams:
    """Check ``raw`` for ``structure`` on a grid of ``machines`` (names, config order)."""
    if structure not in STRUCTURES:
        raise GridError(
            f"unknown grid structure {structure!r}; choose one of: {', '.join(STRUCTURES)}"
        )
    keys = KEYS[structure]
    out = GridParams(structure, raw=dict(raw))
    out.select = DEFAULT_SELECT.get(structure, out.select)
    for key, value in raw.items():
        local_machine = key.startswith("local.") and "local" in keys
        if key not in keys and not local_machine:
            allowed = ", ".join(keys) + (", local.MACHINE" if "local" in keys else "")
            raise GridError(f"grid {structure}: unknown parameter {key!r} (allowed: {allowed})")
        if key == "scheduler":
            out.scheduler = _choice(structure, key, value, SCHEDULERS)
        elif key == "select":
            try:
                name, over = parse_strategy(value)
            except ValueError as exc:
                raise GridError(f"grid {structure}: parameter select={value!r}: {exc}") from None
            if structure == "multisite" and over != "free":
                frees = [s for s in strategy_names() if s.endswith("-free")]
                raise GridError(
                    f"grid multisite: parameter select={value!r}: expected one of "
                    f"{', '.join(frees)}"
                )
            if structure == "hierarchical" and (over != "max" or name == "earliest"):
                maxes = [s for s in strategy_names() if s.endswith("-max")]
                raise GridError(
                    f"grid hierarchical: parameter select={value!r}: expected one of "
                    f"{', '.join(maxes)}"
                )
            out.select = value
        elif key == "min_part":
            if not value.isdigit() or int(value) < 1:
                raise GridError(
                    f"grid {structure}: parameter min_part={value!r}: expected an integer >= 1"
                )
            out.min_part = int(value)
        elif key == "overhead":
            out.overhead = int(_choice(structure, key, value, ("1", "2", "3", "4")))
        elif key == "p":
            out.p = _decimal(structure, key, value, 0)
            out.p_text = value
        elif key in ("local",) or local_machine:
            if policy_names and value not in policy_names:
                raise GridError(
                    f"grid {structure}: parameter {key}={value!r}: unknown policy; choose one "
                    f"of: {', '.join(policy_names)}"
                )
            if local_machine:
                name = key.removeprefix("local.")
                if name not in machines:
                    raise GridError(
                        f"grid {structure}: parameter {key!r}: {name!r} is not a machine "
                        f"(machines: {', '.join(machines)})"
                    )
                out.local_by_machine[list(machines).index(name)] = value
            else:
                out.local = value
        elif key == "home":
            out.home = _choice(structure, key, value, HOMES)
        elif key == "migration":
            out.migration = _decimal(structure, key, value, 1)
            out.migration_text = value
        elif key == "discipline":
            out.discipline = _choice(structure, key, value, ("fcfs", "easy"))
        elif key == "push":
            out.push = _choice(structure, key, value, PUSHES)
        elif key == "backlog":
            out.backlog = _decimal(structure, key, value, 0)
            out.backlog_text = value
        elif key == "part_unit":
            out.part_unit = _choice(structure, key, value, PART_UNITS)
    _check_combinations(out)
    return out


def _check_combinations(params: GridParams) -> None:
    """Parameters that only mean something beside another one's value."""
    raw, s = params.raw, params.structure
    if "backlog" in raw and params.push != "overflow":
        raise GridError(
            f"grid {s}: parameter backlog={raw['backlog']!r} applies only with push=overflow "
            f"(push is {params.push})"
        )
    if "part_unit" in raw and params.overhead not in (2, 4):
        raise GridError(
            f"grid {s}: parameter part_unit={raw['part_unit']!r} applies only to overhead "
            f"models 2 and 4 (overhead is {params.overhead})"
        )


def parse_grid_param_args(items: list[str]) -> dict[str, str]:
    """``["scheduler=easy", "select=bestfit-free"]`` -> dict; refuses items without '='."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise GridError(f"--grid-param {item!r}: expected KEY=VALUE")
        out[key.strip()] = value.strip()
    return out
