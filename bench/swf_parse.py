"""Time reading SWF traces into jobs: ``batchd.workload.load_swf``, best of N.

Usage: python bench/swf_parse.py [TRACE ...] [--repeat N] [--reference] [--traces DIR]

Without TRACE, times KTH-SP2 and CTC-SP2 from ../shared/traces (or ``--traces DIR``);
a TRACE is a path or a file name in that folder. Each trace is loaded for a machine as
large as its header says (MaxNodes, else MaxProcs), as ``batchd replay`` does without
``--nodes``. ``--reference`` also times the exact line-by-line reader that ``load_swf``
falls back to (``iter_swf``), the table reader switched off, and prints the ratio. Runs
of the two readers alternate, so both see the same machine. With an older tree on
``PYTHONPATH`` (one without ``batchd.workload.swf_table``) the script times that tree's
``load_swf`` and ``--reference`` is not available.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

from batchd.workload import load_swf, read_header

try:
    from batchd.workload import loader as _loader
    from batchd.workload.swf_table import read_swf_table
except ImportError:  # a tree from before the table reader
    read_swf_table = None

TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
DEFAULT = ["KTH-SP2-1996-2.1-cln.swf.gz", "CTC-SP2-1996-3.1-cln.swf.gz"]


@contextmanager
def exact_reader() -> Any:
    """load_swf with the table reader switched off: the line-by-line reader only."""
    with mock.patch.object(_loader, "read_swf_table", return_value=None):
        yield


def machine_size(path: Path) -> int:
    header = read_header(path)
    return header.max_nodes or header.max_procs or 1 << 30


def time_once(load: Callable[[], Any]) -> float:
    gc.collect()
    start = time.perf_counter()
    workload = load()
    elapsed = time.perf_counter() - start
    del workload
    return elapsed


def bench(path: Path, repeat: int, reference: bool) -> dict[str, Any]:
    nodes = machine_size(path)
    workload = load_swf(path, nodes=nodes)  # also warms the file cache
    row: dict[str, Any] = {"trace": path.name, "nodes": nodes, "jobs": len(workload.jobs)}
    if read_swf_table is not None:
        row["table"] = read_swf_table(path) is not None
    del workload

    def fast() -> Any:
        return load_swf(path, nodes=nodes)

    def exact() -> Any:
        with exact_reader():
            return load_swf(path, nodes=nodes)

    runs: dict[str, list[float]] = {"load_swf": []}
    if reference:
        runs["reference"] = []
    for _ in range(repeat):
        runs["load_swf"].append(time_once(fast))
        if reference:
            runs["reference"].append(time_once(exact))
    for name, times in runs.items():
        row[f"{name}_best_ms"] = round(min(times) * 1000, 1)
        row[f"{name}_median_ms"] = round(statistics.median(times) * 1000, 1)
    if reference:
        row["speedup"] = round(row["reference_best_ms"] / row["load_swf_best_ms"], 2)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("traces", nargs="*", help="paths, or names in --traces")
    parser.add_argument("--traces", dest="folder", type=Path, default=TRACES)
    parser.add_argument("--repeat", type=int, default=5, help="runs per reader (best is kept)")
    parser.add_argument("--reference", action="store_true", help="also time the exact reader")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    args = parser.parse_args(argv)
    if args.reference and read_swf_table is None:
        parser.error("--reference needs a tree with batchd.workload.swf_table")
    paths = [Path(t) if Path(t).exists() else args.folder / t for t in args.traces or DEFAULT]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        parser.error(f"no such trace: {', '.join(missing)}")

    print(f"python {platform.python_version()}, best of {args.repeat}")
    rows = []
    for path in paths:
        row = bench(path, args.repeat, args.reference)
        rows.append(row)
        line = (
            f"{row['trace']:32s} {row['jobs']:>7,} jobs  load_swf {row['load_swf_best_ms']:8.1f} ms"
            f" (median {row['load_swf_median_ms']:.1f})"
        )
        if "table" in row and not row["table"]:
            line += "  [line by line]"
        if args.reference:
            line += (
                f"  reference {row['reference_best_ms']:8.1f} ms"
                f" (median {row['reference_median_ms']:.1f})  x{row['speedup']:.2f}"
            )
        print(line, flush=True)
    if args.json:
        args.json.write_text(json.dumps({"python": sys.version, "runs": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
