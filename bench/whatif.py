"""Time one what-if simulation (``batchd.sched.core.whatif``): EASY and conservative.

A searching policy scores thousands of candidate orders per scheduling step, so
one simulation must be cheap. The scenario: a machine of 1,152 nodes with 100
running jobs and a queue of 50, 200 or 1,000 waiting jobs, every job present
(no later arrivals). Job shapes (width, estimate) are drawn from the CTC-SP2
trace (``--source ctc``, the default), from KTH-SP2, or from a seeded synthetic
mix when no trace is at hand. The running jobs are a draw whose widths fit the
machine (if the source's jobs are too wide for that, a draw among its narrower
jobs), each with a uniform part of its estimate left; the queue is another
draw.

Each figure is the time of one call, in microseconds: the best and the median
of ``--repeat`` samples, each sample the mean of as many back-to-back calls as
fill about 1 ms (short samples: on a shared machine some of them see no other
load). The headline scenario is seed ``--seed``; ``--draws`` - 1 more seeded
scenarios show how much the figure depends on the draw. All calls of one size
are timed in turn, so a burst of load hits them alike. Compilation is excluded:
every function is called once before anything is timed (numba keeps the
compiled loops on disk, so only the very first run compiles), and that first
call's time is printed on its own.

Python-call overhead, for the 200-job queue: the compiled kernel called
directly, the API with int64 arrays (the fast path), the API with Python lists
(converted on every call), ``inputs_from`` on a view and Job objects, and a
compiled no-op taking the same seven arguments (the floor of any numba call).

    .venv/bin/python bench/whatif.py
    .venv/bin/python bench/whatif.py --source synthetic --sizes 50,200,1000,5000
    .venv/bin/python bench/whatif.py --check        # exit status 1 if EASY-200 misses 50 us
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

from batchd.argtypes import positive_ints
from batchd.model.job import Job
from batchd.sched.core.plans import running_arrays_of
from batchd.sched.core.whatif import conservative_starts, easy_starts, inputs_from
from batchd.sched.kernels import whatif as whatif_kernels
from batchd.workload import load_swf

Ints = npt.NDArray[np.int64]

DEFAULT_TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
TRACES = {"ctc": "CTC-SP2-1996-3.1-cln.swf.gz", "kth": "KTH-SP2-1996-2.1-cln.swf.gz"}
NOW = 1_000_000
TARGET_US = 50.0  # one EASY simulation of 200 waiting jobs


class Scenario:
    """A machine at NOW with its running jobs, and a queue in candidate order."""

    def __init__(
        self, capacity: int, ends: Ints, rwidths: Ints, widths: Ints, estimates: Ints
    ) -> None:
        self.capacity = capacity
        self.ends = ends
        self.rwidths = rwidths
        self.widths = widths
        self.estimates = estimates
        self.submits = np.full(len(widths), NOW - 60, dtype=np.int64)

    def args(self) -> tuple[int, int, Ints, Ints, Ints, Ints, Ints]:
        return (
            NOW,
            self.capacity,
            self.ends,
            self.rwidths,
            self.widths,
            self.estimates,
            self.submits,
        )

    # The MachineView protocol, for inputs_from.
    @property
    def now(self) -> int:
        return NOW

    @property
    def free(self) -> int:
        return self.capacity - int(self.rwidths.sum())

    @property
    def overrun(self) -> bool:
        return False

    def running_ends(self) -> list[int]:
        return list(self.ends.tolist())

    def running_widths(self) -> list[int]:
        return list(self.rwidths.tolist())

    def running_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return running_arrays_of(self)

    def reservations(self) -> list[tuple[int, int, int]]:
        return []

    def jobs(self) -> list[Job]:
        return [
            Job(id=i + 1, submit=NOW - 60, width=int(w), estimate=int(e), runtime=int(e))
            for i, (w, e) in enumerate(zip(self.widths, self.estimates, strict=True))
        ]


def shape_pool(source: str, capacity: int, traces: Path) -> tuple[Ints, Ints]:
    """(widths, estimates) to draw jobs from."""
    if source == "synthetic":
        rng = np.random.default_rng(12345)
        count = 50_000
        # Log-uniform widths 1..128 (small jobs most common), estimates 60 s..36 h.
        widths = np.ceil(2.0 ** rng.uniform(0, 7, count)).astype(np.int64)
        estimates = np.exp(rng.uniform(np.log(60), np.log(36 * 3600), count)).astype(np.int64)
        return np.minimum(widths, capacity), estimates
    jobs = load_swf(traces / TRACES[source], nodes=capacity).jobs
    widths = np.array([j.width for j in jobs], dtype=np.int64)
    estimates = np.array([j.estimate for j in jobs], dtype=np.int64)
    return widths, estimates


def scenario(
    pool: tuple[Ints, Ints], capacity: int, running: int, waiting: int, seed: int
) -> Scenario:
    widths, estimates = pool
    rng = np.random.default_rng(seed)
    # Running jobs: a draw from the whole pool whose widths fit the machine (CTC-SP2's
    # mean width of 11 nodes gives one at once); for a pool of wider jobs, a draw
    # among the jobs at most twice the mean share of a running job wide.
    small = np.flatnonzero(widths <= max(1, 2 * capacity // max(running, 1)))
    for attempt in range(2_000):
        among = small if attempt >= 1_000 else None
        pick = (
            rng.integers(0, len(widths), running)
            if among is None
            else among[rng.integers(0, len(among), running)]
        )
        if widths[pick].sum() <= capacity:
            break
    else:
        raise SystemExit(f"no {running} jobs of this source fit {capacity} nodes")
    left = np.maximum(1, (rng.random(running) * estimates[pick]).astype(np.int64))
    order = np.argsort(left, kind="stable")
    ends = (NOW + left[order]).astype(np.int64)
    rwidths = widths[pick][order].astype(np.int64)
    queue = rng.integers(0, len(widths), waiting)
    return Scenario(
        capacity,
        np.ascontiguousarray(ends),
        np.ascontiguousarray(rwidths),
        np.ascontiguousarray(widths[queue], dtype=np.int64),
        np.ascontiguousarray(estimates[queue], dtype=np.int64),
    )


def _inner(fn: Callable[[], object]) -> int:
    """Calls per sample: as many as fill about 1 ms."""
    began = time.perf_counter()
    fn()
    once = max(time.perf_counter() - began, 1e-7)
    return max(1, min(10_000, int(0.001 / once)))


def samples(fn: Callable[[], object], repeat: int) -> list[float]:
    """Microseconds per call: ``repeat`` samples, each a mean over about 1 ms of calls."""
    return interleaved({"": fn}, repeat)[""]


def interleaved(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, list[float]]:
    """``samples`` of several calls taken in turn, so a burst of load hits them alike."""
    inner = {name: _inner(fn) for name, fn in fns.items()}
    out: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            k = inner[name]
            began = time.perf_counter()
            for _ in range(k):
                fn()
            out[name].append((time.perf_counter() - began) / k * 1e6)
    return out


def summary(values: list[float]) -> dict[str, float]:
    return {"best": min(values), "median": statistics.median(values)}


@njit(cache=True, nogil=True)
def _noop(
    now: int, capacity: int, a: Ints, b: Ints, c: Ints, d: Ints, e: Ints
) -> int:  # pragma: no cover - timing floor
    return now + capacity + len(a) + len(b) + len(c) + len(d) + len(e)


def machine() -> dict[str, Any]:
    import numba

    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": model or platform.processor(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "load_average": os.getloadavg(),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    pool = shape_pool(args.source, args.nodes, args.traces)
    first: dict[str, float] = {}
    probe = scenario(pool, args.nodes, args.running, 10, args.seed)
    for name, fn in (
        ("easy", easy_starts),
        ("conservative", conservative_starts),
    ):
        began = time.perf_counter()
        fn(*probe.args())
        first[name] = time.perf_counter() - began
    _noop(*probe.args())

    sizes: list[dict[str, Any]] = []
    for n in args.sizes:
        # Draw 0 is the scenario of the headline figures; the others show how much the
        # figure depends on the draw. All are timed in turn, so load hits them alike.
        calls: dict[str, Callable[[], object]] = {}
        for d in range(args.draws):
            a = scenario(pool, args.nodes, args.running, n, args.seed + d).args()
            calls[f"easy {d}"] = partial(easy_starts, *a)
            calls[f"conservative {d}"] = partial(conservative_starts, *a)
        times = interleaved(calls, args.repeat)
        row: dict[str, Any] = {"waiting": n}
        for name in ("easy", "conservative"):
            row[f"{name}_us"] = summary(times[f"{name} 0"])
            row[f"{name}_draws_best_us"] = [min(times[f"{name} {d}"]) for d in range(args.draws)]
        sizes.append(row)

    sc = scenario(pool, args.nodes, args.running, 200, args.seed)
    a = sc.args()
    lists = (NOW, sc.capacity, *(x.tolist() for x in a[2:]))
    jobs = sc.jobs()
    overhead_calls: dict[str, Callable[[], object]] = {
        "numba no-op, same 7 arguments": lambda: _noop(*a),
        "kernel whatif_kernels.easy, arrays": lambda: whatif_kernels.easy(*a),
        "easy_starts, int64 arrays": lambda: easy_starts(*a),
        "easy_starts, Python lists": lambda: easy_starts(*lists),
        "inputs_from(view, 200 Jobs) alone": lambda: inputs_from(sc, jobs),
        "easy_starts(*inputs_from(view, 200 Jobs))": lambda: easy_starts(*inputs_from(sc, jobs)),
    }
    overhead = {k: summary(v) for k, v in interleaved(overhead_calls, args.repeat).items()}
    return {
        "machine": machine(),
        "args": {k: str(v) for k, v in vars(args).items()},
        "running_width": int(sc.rwidths.sum()),
        "first_call_s": first,
        "sizes": sizes,
        "overhead_200": overhead,
    }


def report(res: dict[str, Any], args: argparse.Namespace) -> str:
    m = res["machine"]
    load = ", ".join(f"{x:.2f}" for x in m["load_average"])
    out = [
        f"{m['cpu']}, {m['cores']} cores; Python {m['python']}, numpy {m['numpy']}, "
        f"numba {m['numba']}; load average at start {load}",
        f"{args.nodes} nodes, {args.running} running jobs ({res['running_width']} nodes busy "
        f"in draw 0), shapes from {args.source}; {args.repeat} samples of about 1 ms each",
        "first calls (compile or load from numba's cache): "
        + ", ".join(f"{k} {v:.2f} s" for k, v in res["first_call_s"].items()),
        "",
        "| waiting | EASY best us | EASY median us | conservative best us | conservative median us |",
        "|--:|--:|--:|--:|--:|",
    ]
    for row in res["sizes"]:
        e, c = row["easy_us"], row["conservative_us"]
        out.append(
            f"| {row['waiting']} | {e['best']:.1f} | {e['median']:.1f} "
            f"| {c['best']:.1f} | {c['median']:.1f} |"
        )
    out += [
        "",
        f"The same over {args.draws} seeded scenarios (best of each; median and range, us):",
        "",
        "| waiting | EASY median | EASY range | conservative median | conservative range |",
        "|--:|--:|--:|--:|--:|",
    ]
    for row in res["sizes"]:
        e, c = row["easy_draws_best_us"], row["conservative_draws_best_us"]
        out.append(
            f"| {row['waiting']} | {statistics.median(e):.1f} | {min(e):.1f}-{max(e):.1f} "
            f"| {statistics.median(c):.1f} | {min(c):.1f}-{max(c):.1f} |"
        )
    out += ["", "Call overhead, 200 waiting jobs (us per call):", ""]
    out += ["| call | best | median |", "|---|--:|--:|"]
    for name, v in res["overhead_200"].items():
        out.append(f"| {name} | {v['best']:.2f} | {v['median']:.2f} |")
    verdict = target(res)
    if verdict is not None:
        out += ["", verdict]
    return "\n".join(out)


def target(res: dict[str, Any]) -> str | None:
    for row in res["sizes"]:
        if row["waiting"] == 200:
            med = row["easy_us"]["median"]
            ok = "PASS" if med <= TARGET_US else "FAIL"
            return f"target: one EASY simulation of 200 waiting jobs <= {TARGET_US:.0f} us (median {med:.1f} us): {ok}"
    return None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    assert __doc__ is not None
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", choices=("ctc", "kth", "synthetic"), default="ctc")
    ap.add_argument("--nodes", type=int, default=1152)
    ap.add_argument("--running", type=int, default=100)
    ap.add_argument("--sizes", type=positive_ints, default=[50, 200, 1000], help="queue lengths")
    ap.add_argument("--draws", type=int, default=10, help="seeded scenarios per size")
    ap.add_argument("--repeat", type=int, default=100, help="samples of each call")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--traces", type=Path, default=DEFAULT_TRACES)
    ap.add_argument("--json", type=Path, help="save the figures here")
    ap.add_argument("--check", action="store_true", help="exit status 1 if the target is missed")
    args = ap.parse_args(argv)
    if args.draws < 1 or args.repeat < 1 or args.nodes < 1 or args.running < 0:
        ap.error("--draws, --repeat and --nodes must be at least 1, --running at least 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.source != "synthetic" and not (args.traces / TRACES[args.source]).is_file():
        print(
            f"bench/whatif.py: {args.traces / TRACES[args.source]}: no such trace "
            "(--source synthetic needs none)",
            file=sys.stderr,
        )
        return 2
    res = run(args)
    print(report(res, args))
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))
    if args.check:
        for row in res["sizes"]:
            if row["waiting"] == 200 and row["easy_us"]["median"] > TARGET_US:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
