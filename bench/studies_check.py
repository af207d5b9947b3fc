"""Replay runs of the committed studies again and compare their summaries, field for field.

A change to the core must leave every schedule as it was: this re-runs every K-th run
of ``docs/primetime-study/**/results.json`` and of ``docs/dynp-study/results.json``
(its synthetic job sets generated again from the traces, checked by digest) and
compares each summary with the committed one. Only wall times differ by nature and
are left out (``wall_seconds``, dynP's ``tuning_seconds_*``).

    .venv/bin/python bench/studies_check.py                 # every 10th run
    .venv/bin/python bench/studies_check.py --every 1       # all of them (hours)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from batchd.argtypes import positive_int

ROOT = Path(__file__).resolve().parent.parent
PRIMETIME = sorted((ROOT / "docs" / "primetime-study").rglob("results.json"))
DYNP = ROOT / "docs" / "dynp-study" / "results.json"
# The logs the dynP study's job sets were generated from (docs/dynp-study/report.md).
DYNP_SOURCES = {
    "KTH_syn": "KTH-SP2-1996-2.1-cln.swf.gz",
    "CTC_syn": "CTC-SP2-1996-3.1-cln.swf.gz",
    "SDSC_syn": "SDSC-SP2-1998-4.2-cln.swf.gz",
}
WALL = ("wall_seconds", "tuning_seconds_mean", "tuning_seconds_max")


def comparable(value: Any) -> Any:
    """A summary without its wall times, as JSON gives it back."""
    value = json.loads(json.dumps(value))
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if k not in WALL}
    return value


def check_primetime(path: Path, every: int) -> tuple[int, list[str]]:
    from batchd_studies.primetime.replays import replay

    entries = json.loads(path.read_text())
    bad = []
    runs = entries[::every]
    for e in runs:
        trace = str((ROOT / e["trace_file"]).resolve())
        summary, extra = replay(trace, e["params"], nodes=e["nodes"], first=e["first"])
        same = comparable(summary) == comparable(e["summary"])
        same = same and comparable(extra) == comparable(e["extra"])
        if not same:
            bad.append(f"{path.parent.name} {e['params']} nodes {e['nodes']}")
        print(f"primetime {path.parent.name:24} {e['params']}: {'same' if same else 'differs'}")
    return len(runs), bad


def check_dynp(path: Path, every: int) -> tuple[int, list[str]]:
    from batchd_studies.dynp.jobsets import prepare_trace
    from batchd_studies.dynp.replays import replay_summary

    entries = json.loads(path.read_text())
    runs = entries[::every]
    bad: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        jobsets: dict[str, str] = {}
        for e in runs:
            name = e["trace"]
            if name not in jobsets:
                source = ROOT.parent / "shared" / "traces" / DYNP_SOURCES[name]
                spec = prepare_trace(
                    f"synthetic-from:{source}", Path(tmp), jobs=10_000, seed=1, nodes_for={}
                )
                if spec.digest != e["jobset_sha256"]:
                    bad.append(f"{name}: the job set came out different ({spec.digest})")
                jobsets[name] = str(spec.jobset)
            summary = replay_summary(
                jobsets[name],
                e["policy"],
                e["params"],
                nodes=e["nodes"],
                shrink=e["shrink"],
                perfect_estimates=e["perfect_estimates"],
            )
            same = comparable(summary) == comparable(e["summary"])
            if not same:
                bad.append(f"{name} shrink {e['shrink']} {e['config']}")
            verdict = "same" if same else "differs"
            print(f"dynp {name:10} shrink {e['shrink']:.2f} {e['config']:22}: {verdict}")
    return len(runs), bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=positive_int, default=10, help="re-run every K-th run")
    ap.add_argument("--only", choices=("primetime", "dynp"), help="one study only")
    args = ap.parse_args()
    total, bad = 0, []
    if args.only != "dynp":
        for path in PRIMETIME:
            n, b = check_primetime(path, args.every)
            total, bad = total + n, bad + b
    if args.only != "primetime":
        n, b = check_dynp(DYNP, args.every)
        total, bad = total + n, bad + b
    print(f"{total} runs replayed, {len(bad)} differ")
    for line in bad:
        print(f"  {line}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
