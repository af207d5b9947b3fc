"""The Grafana dashboard, the Prometheus rules and docs/monitoring.md against the metric catalog."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from batchd.metrics.catalog import METRICS, all_series_names
from paths import ROOT
from promql_names import dashboard_exprs, metric_names, rule_exprs

DASHBOARD = ROOT / "conf" / "grafana" / "batchd-dashboard.json"
RULES = ROOT / "conf" / "prometheus-rules.yml"
RULES_TEST = ROOT / "tests" / "data" / "prometheus-rules-test.yml"
DOC = ROOT / "docs" / "monitoring.md"

KNOWN = all_series_names() | {"up"}  # "up" is Prometheus' own, per scrape target
DS = {"type": "prometheus", "uid": "${datasource}"}
PANEL_TYPES = {"timeseries", "stat", "state-timeline", "heatmap", "bargauge", "table", "row"}
ROWS = ("Machine", "Queue", "Scheduler", "Prime time", "Clock & process")
ALERTS = (
    "BatchdDown",
    "BatchdStateNotSaved",
    "BatchdNodesDown",
    "BatchdNodesOffline",
    "BatchdQueueHeadWaitingLong",
    "BatchdUtilizationLowWithQueuedJobs",
    "BatchdJobsKilledAtWalltime",
    "BatchdJobsOverflowing",
    "BatchdSchedulerCycleSlow",
    "BatchdDynpTuningSlow",
    "BatchdPlanStale",
)
# Metrics a dashboard need not show: the per-user ones are opt-in and unbounded by nature.
# Per-user series (opt-in) and a grid site's series (docs/grid.md, "Live") have no panel.
NOT_ON_DASHBOARD = {
    "batchd_user_jobs",
    "batchd_user_jobs_submitted_total",
    "batchd_grid_jobs_started_total",
    "batchd_build_info",  # the version: read with a query, not drawn
}


@pytest.fixture(scope="module")
def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text())


def all_panels(panels: list[dict]) -> list[dict]:
    out = []
    for p in panels:
        out.append(p)
        out.extend(all_panels(p.get("panels", [])))
    return out


def rows_with_panels(doc: dict) -> dict[str, list[dict]]:
    """Row title -> its panels: those after an open row, or those inside a collapsed one."""
    rows: dict[str, list[dict]] = {}
    current: list[dict] | None = None
    for p in doc["panels"]:
        if p["type"] == "row":
            current = rows.setdefault(p["title"], [])
            current.extend(p.get("panels", []))
        elif current is not None:
            current.append(p)
    return rows


def overlaps(a: dict, b: dict) -> bool:
    return (
        a["x"] < b["x"] + b["w"]
        and b["x"] < a["x"] + a["w"]
        and a["y"] < b["y"] + b["h"]
        and b["y"] < a["y"] + a["h"]
    )


def unknown_names(expr: str) -> set[str]:
    return metric_names(expr) - KNOWN


def promtool() -> str:
    path = shutil.which("promtool") or (
        "/usr/bin/promtool" if Path("/usr/bin/promtool").exists() else None
    )
    if path is None:
        pytest.skip("promtool not installed: apt-get install prometheus provides it")
    return path


def run_promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [promtool(), *args], capture_output=True, text=True, timeout=120, cwd=ROOT
    )


# -- metric_names -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "names"),
    [
        ("up", {"up"}),
        ('up{job="batchd"} == 0', {"up"}),
        (
            'sum by (pool, state) (batchd_nodes{instance=~"$instance", pool=~"$pool"})',
            {"batchd_nodes"},
        ),
        (
            "sum(rate(batchd_jobs_started_total[5m])) without (queue, policy)",
            {"batchd_jobs_started_total"},
        ),
        (
            "histogram_quantile(0.99, sum by (le) "
            "(rate(batchd_scheduler_cycle_seconds_bucket[$__rate_interval])))",
            {"batchd_scheduler_cycle_seconds_bucket"},
        ),
        (
            "a / on (instance) group_left () rate(b[5m:30s] offset 1h) * ignoring(x) c",
            {"a", "b", "c"},
        ),
        ("a / on(instance) group_left(pool) b", {"a", "b"}),
        ('{__name__="batchd_nodes", state="down"} > bool 0', {"batchd_nodes"}),
        ('label_replace(up, "dst", "$1", "instance", "(.*):.*")', {"up"}),
        ("batchd_clock_speed @ start() + 1e3 - 0x1F + Inf - NaN", {"batchd_clock_speed"}),
        ("time() - process_start_time_seconds", {"process_start_time_seconds"}),
        ("a and b or c unless d", {"a", "b", "c", "d"}),
        ('count_values without (instance) ("v", batchd_clock_speed)', {"batchd_clock_speed"}),
        ("x[${__range}] # a comment naming not_a_metric\n+ y", {"x", "y"}),
        ('sum(x{pool=~"$pool", a="}"}) by (pool)', {"x"}),
        ("vector(1) + scalar(time())", set()),
        ("ns:metric:rate5m{job='a'}", {"ns:metric:rate5m"}),
    ],
)
def test_metric_names(expr: str, names: set[str]) -> None:
    assert metric_names(expr) == names


def test_metric_names_reports_unknown_metrics() -> None:
    assert unknown_names("rate(batchd_jobs_submited_total[5m])") == {"batchd_jobs_submited_total"}
    assert unknown_names(
        'sum by (pool) (batchd_nodes{state="down"}) / sum by (pool) (batchd_node_count)'
    ) == {"batchd_node_count"}
    # A histogram is exported only as _bucket, _sum and _count.
    assert unknown_names("rate(batchd_job_wait_seconds[5m])") == {"batchd_job_wait_seconds"}
    # Label names and values that happen to look like metrics are not metrics.
    assert unknown_names('sum by (batchd_x) (batchd_nodes{pool="batchd_y"})') == set()


@pytest.mark.parametrize(
    "expr",
    [
        "histogram_quantil(0.9, x)",  # a misspelled function
        "sum(rate(x[5m])",
        'x{a="b"',
        "x)",
        "x; y",
    ],
)
def test_metric_names_rejects_what_is_not_promql(expr: str) -> None:
    with pytest.raises(ValueError):
        metric_names(expr)


def test_dashboard_exprs_reads_rows_variables_and_annotations() -> None:
    doc = {
        "panels": [
            {"type": "timeseries", "targets": [{"expr": "a"}, {"refId": "B"}]},
            {
                "type": "row",
                "collapsed": True,
                "panels": [{"type": "stat", "targets": [{"expr": "b"}]}],
            },
        ],
        "templating": {
            "list": [
                {"type": "datasource", "query": "prometheus"},
                {"type": "query", "query": 'label_values(c{x=~"$y"}, pool)'},
                {"type": "query", "query": {"query": "query_result(d > 0)"}},
                {"type": "query", "query": "label_values(pool)"},
                {"type": "custom", "query": "1,2,3"},
            ]
        },
        "annotations": {"list": [{"expr": "e"}, {"builtIn": 1}]},
    }
    assert dashboard_exprs(doc) == ["a", "b", "e", 'c{x=~"$y"}', "d > 0"]


def test_rule_exprs_reads_plain_quoted_and_block_scalars() -> None:
    text = """groups:
  - name: g
    rules:
      - record: r
        expr: sum(a) # why
      - alert: A
        expr: 'b{x=''y''} > 0'
        for: 5m
      - alert: B
        expr: |
          c
            / d

        labels:
          severity: info
      - expr: >-
          e > 1
        alert: C
      # expr: not_a_rule
"""
    assert rule_exprs(text) == ["sum(a)", "b{x='y'} > 0", "c\n/ d", "e > 1"]


# -- the dashboard ------------------------------------------------------------------


def test_dashboard_is_importable(dashboard: dict) -> None:
    assert dashboard["schemaVersion"] >= 39
    assert dashboard["uid"] == "batchd-overview"
    assert dashboard["title"] == "batchd"
    assert dashboard["tags"] == ["batchd"]
    assert "id" not in dashboard or dashboard["id"] is None
    assert "__inputs" not in dashboard  # the data source is a variable, not an import input


def test_dashboard_variables(dashboard: dict) -> None:
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    ds = variables["datasource"]
    assert (ds["type"], ds["query"]) == ("datasource", "prometheus")
    for name, metric in (("pool", "batchd_nodes"), ("queue", "batchd_jobs")):
        var = variables[name]
        assert var["type"] == "query"
        assert var["datasource"] == DS
        query = var["query"]["query"] if isinstance(var["query"], dict) else var["query"]
        assert re.fullmatch(rf"label_values\({metric}\b.*, {name}\)", query), query


def test_every_panel_and_target_uses_the_datasource_variable(dashboard: dict) -> None:
    panels = all_panels(dashboard["panels"])
    assert len(panels) > 30
    for p in panels:
        assert p["type"] in PANEL_TYPES, p["title"]
        assert p.get("datasource") == DS, p["title"]
        assert p["title"]
        for t in p.get("targets", []):
            assert t.get("datasource") == DS, p["title"]
            assert t["expr"].strip(), p["title"]
        if p["type"] != "row":
            assert p.get("targets"), f"panel {p['title']!r} has no query"
            assert p.get("description"), f"panel {p['title']!r} has no description"


def test_panel_ids_are_unique(dashboard: dict) -> None:
    ids = [p["id"] for p in all_panels(dashboard["panels"])]
    assert len(ids) == len(set(ids))


def test_rows_exist_with_panels(dashboard: dict) -> None:
    rows = rows_with_panels(dashboard)
    assert list(rows) == list(ROWS)
    for title, panels in rows.items():
        assert panels, f"row {title!r} has no panels"


def test_rows_hold_what_they_are_named_for(dashboard: dict) -> None:
    rows = rows_with_panels(dashboard)

    def names(title: str) -> set[str]:
        return {n for p in rows[title] for t in p["targets"] for n in metric_names(t["expr"])}

    assert {"batchd_nodes", "batchd_utilization_ratio", "batchd_utilization_window_ratio"} | {
        "batchd_allocated_node_seconds_total",
        "batchd_cores",
    } <= names("Machine")
    assert {
        "batchd_jobs",
        "batchd_backlog_node_seconds",
        "batchd_job_wait_seconds_bucket",
        "batchd_job_response_seconds_bucket",
        "batchd_job_slowdown_bucket",
        "batchd_jobs_submitted_total",
        "batchd_jobs_started_total",
        "batchd_jobs_completed_total",
        "batchd_queue_head_wait_seconds",
        "batchd_queue_head_planned_start_timestamp_seconds",
        "batchd_plan_makespan_seconds",
    } <= names("Queue")
    assert {
        "batchd_scheduler_policy",
        "batchd_scheduler_order",
        "batchd_policy_switches_total",
        "batchd_dynp_decider_calls_total",
        "batchd_scheduler_cycle_seconds_bucket",
        "batchd_dynp_tuning_seconds_bucket",
        "batchd_ga_search_seconds_bucket",
        "batchd_jobs_started_total",
    } <= names("Scheduler")
    assert {
        "batchd_prime_time_window",
        "batchd_prime_time_next_change_timestamp_seconds",
        "batchd_jobs_completed_total",
        "batchd_jobs_requeued_total",
    } <= names("Prime time")
    assert {
        "batchd_emulated_timestamp_seconds",
        "batchd_clock_speed",
        "process_resident_memory_bytes",
        "process_cpu_seconds_total",
    } <= names("Clock & process")
    heatmaps = [p for p in rows["Queue"] if p["type"] == "heatmap"]
    assert heatmaps and all(t["format"] == "heatmap" for p in heatmaps for t in p["targets"])
    timelines = [p for p in rows["Scheduler"] if p["type"] == "state-timeline"]
    assert len(timelines) == 2


def test_grid_positions_do_not_overlap(dashboard: dict) -> None:
    layouts = [dashboard["panels"]] + [
        p["panels"] for p in dashboard["panels"] if p["type"] == "row" and p["collapsed"]
    ]
    for panels in layouts:
        for p in panels:
            g = p["gridPos"]
            assert g["x"] >= 0 and g["w"] >= 1 and g["x"] + g["w"] <= 24, p["title"]
            assert g["y"] >= 0 and g["h"] >= 1, p["title"]
        for i, a in enumerate(panels):
            for b in panels[i + 1 :]:
                assert not overlaps(a["gridPos"], b["gridPos"]), (a["title"], b["title"])
    # An open row's panels come after it and before the next row.
    top = dashboard["panels"]
    row_ys = [p["gridPos"]["y"] for p in top if p["type"] == "row"]
    assert row_ys == sorted(row_ys)
    for p in top:
        if p["type"] == "row" and not p["collapsed"]:
            assert not p["panels"], p["title"]


def test_overlap_check_catches_overlaps() -> None:
    assert overlaps({"x": 0, "y": 0, "w": 12, "h": 8}, {"x": 11, "y": 7, "w": 4, "h": 4})
    assert not overlaps({"x": 0, "y": 0, "w": 12, "h": 8}, {"x": 12, "y": 0, "w": 12, "h": 8})
    assert not overlaps({"x": 0, "y": 0, "w": 12, "h": 8}, {"x": 0, "y": 8, "w": 24, "h": 1})


def test_dashboard_uses_only_catalog_metrics(dashboard: dict) -> None:
    exprs = dashboard_exprs(dashboard)
    assert len(exprs) > 40
    for expr in exprs:
        assert metric_names(expr), f"no metric in {expr!r}"
        assert not unknown_names(expr), (expr, unknown_names(expr))


def test_dashboard_shows_every_metric(dashboard: dict) -> None:
    used = {n for e in dashboard_exprs(dashboard) for n in metric_names(e)}
    for m in METRICS:
        if m.name in NOT_ON_DASHBOARD:
            continue
        assert any(n.startswith(m.name) for n in used), f"{m.name} is on no panel"


def test_dashboard_filters_by_the_variables(dashboard: dict) -> None:
    labels = {s: set(m.labels) for m in METRICS for s in (m.name, f"{m.name}_bucket")}
    for p in all_panels(dashboard["panels"]):
        for t in p.get("targets", []):
            expr = t["expr"]
            for name in metric_names(expr):
                if name in labels or name.startswith("batchd_"):
                    assert '$instance"' in expr, (p["title"], expr)
                if "pool" in labels.get(name, ()):
                    assert 'pool=~"$pool"' in expr, (p["title"], expr)
                if "queue" in labels.get(name, ()):
                    assert 'queue=~"$queue"' in expr, (p["title"], expr)


def substituted(expr: str) -> str:
    """A dashboard expression with Grafana's variables replaced, as Grafana sends it."""
    expr = expr.replace("$__rate_interval", "2m").replace("$__range", "6h")
    return re.sub(r"\$\{?\w+\}?", ".*", expr)


def test_dashboard_exprs_are_valid_promql(dashboard: dict, tmp_path: Path) -> None:
    promtool()
    lines = ["groups:", "  - name: dashboard", "    rules:"]
    for i, expr in enumerate(dashboard_exprs(dashboard)):
        lines.append(f"      - record: dashboard_expr_{i}")
        lines.append("        expr: |")
        lines.extend(f"          {line}" for line in substituted(expr).splitlines())
    path = tmp_path / "dashboard-rules.yml"
    path.write_text("\n".join(lines) + "\n")
    result = run_promtool("check", "rules", str(path))
    assert result.returncode == 0, result.stdout + result.stderr


# -- the rules ----------------------------------------------------------------------


def rule_blocks(text: str) -> dict[str, str]:
    """Alert name -> the lines of its rule."""
    parts = re.split(r"^\s*- (?=alert:|record:)", text, flags=re.MULTILINE)
    blocks = {}
    for part in parts[1:]:
        m = re.match(r"alert:\s*(\S+)", part)
        if m:
            blocks[m.group(1)] = part
    return blocks


def test_rules_use_only_catalog_metrics() -> None:
    text = RULES.read_text()
    exprs = rule_exprs(text)
    assert len(exprs) == len(re.findall(r"^\s*expr:", text, flags=re.MULTILINE))
    assert len(exprs) >= len(ALERTS)
    for expr in exprs:
        assert metric_names(expr), f"no metric in {expr!r}"
        assert not unknown_names(expr), (expr, unknown_names(expr))


def test_alerts_are_complete() -> None:
    blocks = rule_blocks(RULES.read_text())
    assert tuple(blocks) == ALERTS
    for name, block in blocks.items():
        assert re.search(r"^\s+for: \d+[smh]$", block, re.MULTILINE), name
        assert re.search(r"^\s+severity: (critical|warning|info)$", block, re.MULTILINE), name
        assert re.search(r"^\s+summary: \S", block, re.MULTILINE), name
        assert re.search(r"^\s+description: \S", block, re.MULTILINE), name
    assert 'up{job="batchd"} == 0' in blocks["BatchdDown"]
    assert "batchd_plan_age_seconds > 60" in blocks["BatchdPlanStale"]


def test_promtool_check_rules() -> None:
    result = run_promtool("check", "rules", str(RULES))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(rule_exprs(RULES.read_text()))} rules found" in result.stdout


def test_promtool_test_rules() -> None:
    result = run_promtool("test", "rules", str(RULES_TEST))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_rules_test_covers_firing_and_silence() -> None:
    text = RULES_TEST.read_text()
    cases = re.findall(
        r"alertname: (\w+)\n\s+exp_alerts:( \[\])?", text
    )  # (name, "" if it expects alerts, " []" if it expects none)
    firing = {name for name, empty in cases if not empty}
    silent = {name for name, empty in cases if empty}
    assert len(firing & silent) >= 3, (firing, silent)
    assert firing <= set(ALERTS) and silent <= set(ALERTS)


def test_rules_test_fails_when_a_rule_is_wrong(tmp_path: Path) -> None:
    """The unit tests notice a wrong threshold: they are not vacuous."""
    promtool()
    broken = RULES.read_text().replace(
        "batchd_plan_age_seconds > 60", "batchd_plan_age_seconds > 600"
    )
    assert broken != RULES.read_text()
    (tmp_path / "rules.yml").write_text(broken)
    test = RULES_TEST.read_text().replace("../../conf/prometheus-rules.yml", "rules.yml")
    (tmp_path / "test.yml").write_text(test)
    result = run_promtool("test", "rules", str(tmp_path / "test.yml"))
    assert result.returncode != 0
    assert "BatchdPlanStale" in result.stdout + result.stderr


# -- the documentation --------------------------------------------------------------


def test_doc_lists_every_metric_and_alert(dashboard: dict) -> None:
    doc = DOC.read_text()
    for m in METRICS:
        assert re.search(rf"^\| `{m.name}` \| {m.kind} \|", doc, re.MULTILINE), m.name
    for name in ALERTS:
        assert f"`{name}`" in doc, name
    for p in all_panels(dashboard["panels"]):
        assert p["title"] in doc, f"panel {p['title']!r} is not described"
