"""Every label value a metric can carry is named in its HELP text, and the daemon says
which version it is (batchd_build_info)."""

from __future__ import annotations

import platform
import re
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from api_helpers import serve
from batchd import __version__
from batchd.metrics.catalog import BY_NAME, OUTCOMES, REQUEUE_REASONS
from paths import ROOT

DAEMON = ROOT / "daemon" / "batchd"
# Where the daemon's code names an outcome or a requeue reason as a literal.
OUTCOME_SITES = (
    r'\.outcome = "([a-z_]+)"',
    r'outcome="([a-z_]+)"',
    r'\b(?:terminate|cancel|exited|job_left_unrun|_?finish_unrun|end_all)\([^()]*?, "([a-z_]+)"',
    r'^\s+return "([a-z_]+)", ',
)
REQUEUE_SITES = (
    r'\brequeued\([^,()]+, "([a-z_]+)"',
    r'\bRequeue\("([a-z_]+)"',
    r'back = \("([a-z_]+)"',
    r'requeue_why = \("([a-z_]+)"',
)


def emitted(patterns: tuple[str, ...]) -> set[str]:
    found: set[str] = set()
    for path in DAEMON.rglob("*.py"):
        text = path.read_text()
        for pattern in patterns:
            found.update(re.findall(pattern, text, re.M))
    return found


def test_the_code_emits_only_the_values_the_catalog_names() -> None:
    outcomes = emitted(OUTCOME_SITES)
    reasons = emitted(REQUEUE_SITES)
    # the scan finds the sites (it is not vacuous) ...
    assert {"ok", "walltime", "signal", "resv_end", "failed", "dependency"} <= outcomes
    assert {"node_fail", "overflow", "rerun", "restart"} <= reasons
    # ... and each value they emit is one the catalog exports and explains
    assert outcomes <= set(OUTCOMES)
    assert reasons <= set(REQUEUE_REASONS)


def test_help_texts_name_every_label_value() -> None:
    completed = BY_NAME["batchd_jobs_completed_total"].help
    requeued = BY_NAME["batchd_jobs_requeued_total"].help
    assert [o for o in OUTCOMES if not re.search(rf"\b{o} \(", completed)] == []
    assert [r for r in REQUEUE_REASONS if not re.search(rf"\b{r} \(", requeued)] == []


async def test_scrape_carries_the_help_texts_and_the_build(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        status, text = await api.raw(None, "GET", "/metrics")
    assert status == 200
    families = {f.name: f for f in text_string_to_metric_families(text)}
    completed = families["batchd_jobs_completed"]
    assert completed.documentation == BY_NAME["batchd_jobs_completed_total"].help
    assert "signal (" in completed.documentation and "resv_end (" in completed.documentation
    assert "rerun (" in families["batchd_jobs_requeued"].documentation
    [build] = families["batchd_build_info"].samples
    assert build.labels == {"version": __version__, "python": platform.python_version()}
    assert build.value == 1
    assert "batchd_emulated_timestamp_seconds" in families
    times = [n for n in families if n.startswith("batchd_") and "timestamp" in n]
    assert sorted(times) == [
        "batchd_emulated_timestamp_seconds",
        "batchd_prime_time_next_change_timestamp_seconds",
        "batchd_queue_head_planned_start_timestamp_seconds",
    ]
