"""Is every survivor of the last mutation runs named on its group's results page?

    python bench/mutation_pages.py --record   # the runs in .mutate/ -> docs/mutation/runs.json
    python bench/mutation_pages.py            # check docs/mutation/runs.json against the pages

A survivor of a run must be killed by a test or named on ``docs/mutation/GROUP.md`` with
the reason it changes nothing. ``--record`` keeps each group's last run (``.mutate/GROUP/
summary.json``: date, tool version, seconds, counts, the survivors' names) in
``docs/mutation/runs.json``, committed with the pages, so the check needs no run.

The pages name mutants as mutmut shows them, from the module on
(``core.xǁEngineǁ_start__mutmut_73`` for ``batchd.engine.core.xǁEngineǁ_start__mutmut_73``),
and shorten a list of the same function's mutants to their numbers
(``x_classify__mutmut_8``, ``_15``, ``_22``), of the same class's methods to the method
(``ǁwithdraw__mutmut_8``), within one name (``steps__mutmut_4, _7``), or write a range (``is_open__mutmut_19`` to ``_24``). Prints
the survivors not named; exits 1 if there is one.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from mutate import KILLED, ROOT, STAGE, by_module  # bench/mutate.py, beside this script

PAGES = ROOT / "docs" / "mutation"
RUNS = PAGES / "runs.json"
# A name as the pages write it: an optional module and class, a function, a number; or
# the number alone (``_15``), which belongs to the last name before it.
NAME = re.compile(r"`([^`\s]*?)__mutmut_(\d+)((?:, _\d+)*)`|`_(\d+)((?:, _\d+)*)`")


def run_of(group: str) -> dict[str, Any]:
    """What is kept of a group's last run in .mutate/."""
    summary = json.loads((STAGE / group / "summary.json").read_text())
    statuses: dict[str, str] = summary["statuses"]
    alive = sorted(m for m, status in statuses.items() if status not in KILLED)
    modules = {
        module.removeprefix("batchd.").replace(".", "/") + ".py": [entry["killed"], entry["total"]]
        for module, entry in by_module(statuses).items()
    }
    return {
        "date": summary["date"],
        "mutmut": summary["mutmut"],
        "seconds": summary["seconds"],
        "mutants": len(statuses),
        "killed": len(statuses) - len(alive),
        "survivors": alive,
        "modules": dict(sorted(modules.items())),  # path: [killed, mutants]
    }


def named(page: str) -> set[tuple[str, str, int]]:
    """(module, function, number) of every mutant the page names: the module's last part
    ("" where the page leaves it out), the function without its class or mutmut's
    ``x_`` and ``xǁClassǁ`` prefixes."""
    found: set[tuple[str, str, int]] = set()
    for paragraph in re.split(r"\n\s*\n|\n(?=\|)|\n(?=- )", page):
        module = function = ""
        number, end = 0, 0
        for match in NAME.finditer(paragraph):
            if match[1] is not None:
                written = match[1]
                if "." in written and not written.startswith("ǁ"):
                    module = written.split(".", 1)[0]
                function = _function(written)
                numbers = [int(match[2])] + [int(n) for n in re.findall(r"\d+", match[3])]
                found.update((module, function, n) for n in numbers)
                number = numbers[-1]
            elif function:
                # ``_19` to `_24``: the numbers between too
                ranged = paragraph[end : match.start()].split() == ["to"]
                numbers = [int(match[4])] + [int(n) for n in re.findall(r"\d+", match[5])]
                first = number + 1 if ranged else numbers[0]
                found.update((module, function, n) for n in range(first, numbers[0] + 1))
                found.update((module, function, n) for n in numbers)
                number = numbers[-1]
            end = match.end()
    return found


def _function(written: str) -> str:
    """``core.Engine._start`` -> ``_start``; ``gate.xǁWindowGateǁjob_ended`` ->
    ``job_ended``; ``ǁwithdraw`` -> ``withdraw``; ``x_classify`` -> ``classify``."""
    tail = written.rsplit("ǁ", 1)[-1]
    if "ǁ" not in written:
        tail = tail.rsplit(".", 1)[-1]
        tail = tail[2:] if tail.startswith("x_") else tail
    return tail


def _module(mutant: str) -> str:
    """The last part of a mutant's module: ``batchd.engine.core.xǁEngineǁ_start`` -> core."""
    parts = mutant.split(".")
    at = next(i for i, part in enumerate(parts) if part.startswith(("x_", "xǁ")))
    return parts[at - 1]


def unnamed(survivors: list[str], page: str) -> list[str]:
    """The survivors the page does not name."""
    names = named(page)
    missing = []
    for mutant in survivors:
        function, _, number = mutant.rpartition("__mutmut_")
        key = (_function(function), int(number))
        if (_module(mutant), *key) not in names and ("", *key) not in names:
            missing.append(mutant)
    return missing


def record(groups: list[str]) -> None:
    runs = json.loads(RUNS.read_text()) if RUNS.exists() else {}
    for group in groups:
        if not (STAGE / group / "summary.json").exists():
            raise SystemExit(f"mutation_pages: no run of {group} in .mutate/{group}/")
        runs[group] = run_of(group)
    RUNS.write_text(json.dumps(runs, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("groups", nargs="*", help="groups (default: all)")
    parser.add_argument(
        "--record", action="store_true", help="keep the runs in .mutate/ in runs.json first"
    )
    args = parser.parse_args()
    if args.record:
        found = sorted(p.parent.name for p in STAGE.glob("*/summary.json"))
        record(args.groups or found)
    runs: dict[str, dict[str, Any]] = json.loads(RUNS.read_text())
    missing = 0
    for group in args.groups or sorted(runs):
        survivors = runs[group]["survivors"]
        left = unnamed(survivors, (PAGES / f"{group}.md").read_text())
        missing += len(left)
        print(f"{group}: {len(survivors)} survivors, {len(survivors) - len(left)} named")
        for mutant in left:
            print(f"    not named on docs/mutation/{group}.md: {mutant}")
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
