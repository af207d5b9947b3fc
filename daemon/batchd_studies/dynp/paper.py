"""The seed's numbers (Tables 4-6, quality ARTwW, shrinking factor 1.00), from paper.json."""

from __future__ import annotations

from typing import Any

from batchd_studies.framework.paper import paper_data, section

PACKAGE = "batchd_studies.dynp"
_DATA = paper_data(PACKAGE)

# Tables 4 and 5: per job set, each metric; (simple, advanced) where the paper has both.
SEED_RUNS: dict[str, dict[str, Any]] = {
    trace: {k: tuple(v) if isinstance(v, list) else v for k, v in run.items()}
    for trace, run in section(_DATA, "runs", PACKAGE).items()
}

# Table 6, rows as batchd's CASE_GROUPS, and the printed total.
SEED_CASES: dict[str, tuple[int, ...]] = {
    trace: tuple(int(n) for n in cases) for trace, cases in section(_DATA, "cases", PACKAGE).items()
}
