"""The dynP study report (batchd_studies.dynp): tables, figures and the command end to end."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from batchd.cli import main
from batchd.sched.registry import policy_names
from batchd_studies.cli import add_report_command
from batchd_studies.dynp import report as R
from batchd_studies.dynp import seed as S
from batchd_studies.dynp import tables as T
from batchd_studies.dynp.configs import (
    BASIC_DYNP,
    Config,
    check_policies,
    config_set,
    config_title,
)
from batchd_studies.dynp.figures import figure_specs, plot_metric, write_figures
from batchd_studies.dynp.jobsets import TraceSpec, machine_width
from batchd_studies.dynp.options import parse_nodes_for, parse_shrinks
from batchd_studies.dynp.runs import plan_tasks
from batchd_studies.framework import StudyError
from batchd_studies.framework.traces import trace_base_name

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# Paper Table 6, CTC_syn column, with the grouped rows split into single cases and
# case 10b set to 0: the paper's column sums to 16,983, its total 16,946 leaves out
# the 37 of case 10b.
CTC_CASES = {
    "1": 2549, "2": 1000, "7": 324, "3": 600, "9": 92, "4b": 0, "5": 1298,
    "4a": 5, "4c": 4, "6a": 81, "6b": 10669, "6c": 100, "8a": 224, "8b": 0,
    "8c": 0, "10a": 0, "10b": 0, "10c": 0,
}  # fmt: skip


# --------------------------------------------------------------------------- fabricated results


def _summary(util: float, artww: float, sldww60: float = 10.0, dynp: Any = None) -> dict:
    summary = {
        "jobs": 100,
        "utilization": util,
        "artww": artww,
        "art": 14105.0,
        "awt": 3178.0,
        "sldww60": sldww60,
    }
    if dynp is not None:
        summary["dynp"] = dynp
    return summary


def _dynp_block(cases: dict[str, int] | None = None) -> dict:
    calls = 16946
    return {
        "jobs_started": {"SJF": 6115, "FCFS": 1296, "LJF": 2586},
        "decider_calls": calls,
        "switches": {"SJF": 761, "FCFS": 778, "LJF": 100},
        "kept_share": 0.9032,
        "avg_backlog": 22.05,
        "cases": cases or CTC_CASES,
        "tuning_seconds_mean": 0.05,
        "tuning_seconds_max": 0.2,
    }


def _entry(trace: str, shrink: float, config: str, summary: dict, seconds: float = 1.0) -> dict:
    policy = "dynp" if config.startswith("dynp-") and config != BASIC_DYNP else config
    return {
        "trace": trace,
        "shrink": shrink,
        "config": config,
        "policy": policy,
        "params": {},
        "summary": summary,
        "seconds": seconds,
    }


@pytest.fixture
def results() -> list[dict]:
    out = []
    for trace in ("CTC_syn", "KTH_syn"):
        for shrink, load in ((1.0, 0.0), (0.8, 0.1)):
            for i, config in enumerate(T.COMPARISON_CONFIGS[:4]):
                out.append(_entry(trace, shrink, config, _summary(0.70 + load, 20000.0 + i)))
            for q in T.PAPER_QUALITIES:
                for d in T.DECIDERS:
                    util = 0.7536 if (d, q) == ("advanced", "artww") else 0.74 + load
                    summary = _summary(util, 21912.0, dynp=_dynp_block())
                    out.append(_entry(trace, shrink, T.dynp_label(d, q), summary))
    return out


# --------------------------------------------------------------------------- tables


def test_loc_is_one_minus_utilization() -> None:
    assert T.loc(0.7570) == pytest.approx(0.2430)
    assert T.loc(1.0) == 0.0


def test_table4_rows_and_loc(results: list[dict]) -> None:
    text = T.table4(results, "CTC_syn", 1.0)
    lines = text.splitlines()
    assert lines[0].startswith("|  | ARTwW simple | ARTwW advanced | ART simple")
    util = next(line for line in lines if line.startswith("| UTIL "))
    loc = next(line for line in lines if line.startswith("| LOC (1 - UTIL) "))
    # column "ARTwW advanced" is the second value cell
    assert util.split(" | ")[2] == "75.36 %"
    assert loc.split(" | ")[2] == "0.24640"
    assert "| jobs started with SJF | 6,115 |" in text
    assert "| ARTwW | 21,912 s |" in text


def test_table4_missing_runs_print_dashes(results: list[dict]) -> None:
    only_cons = [r for r in results if r["policy"] != "dynp"]
    text = T.table4(only_cons, "CTC_syn", 1.0)
    assert "| ARTwW | - | - | - | - | - | - |" in text


def test_table6_total_and_shares() -> None:
    rows = dict(T.case_rows(CTC_CASES))
    assert rows["total"] == "16,946"
    assert rows["cases: 2 & 7"] == "1,324"
    assert rows["cases: 3 & 9"] == "692"
    assert rows["cases: 4b & 5"] == "1,298"
    # the paper's 13 218 (= 78.00 %); 2549 + 1298 + 81 + 10669 + 224 = 14 821
    assert rows["differences to the simple decider (1+6b+8c+10c)"] == "13,218 (= 78.00 %)"
    assert rows["taking the current policy (1+5+6a+6b+8a+8c+10b+10c)"] == "14,821 (= 87.46 %)"


def test_table6_markdown(results: list[dict]) -> None:
    text = T.table6(results, ["CTC_syn", "KTH_syn", "PC2_syn"], 1.0)
    assert text.splitlines()[0] == "|  | CTC_syn | KTH_syn | PC2_syn |"
    assert "| total | 16,946 | 16,946 | - |" in text
    assert "| case: 6b | 10,669 | 10,669 | - |" in text


def test_table6_empty_cases_do_not_divide_by_zero() -> None:
    rows = dict(T.case_rows({}))
    assert rows["total"] == "0"
    assert rows["differences to the simple decider (1+6b+8c+10c)"] == "0 (= 0.00 %)"


def test_table5_column(results: list[dict]) -> None:
    text = T.table5(results, ["CTC_syn"], 1.0)
    assert "| average actual runtime (ART - AWT) | 10,927 s |" in text
    assert "| average wait time | 3,178 s |" in text
    assert "| LOC (1 - UTIL) | 0.24640 |" in text
    assert "| total tries of switches (decider calls) | 16,946 |" in text
    assert "| switches to SJF | 4.49 % |" in text  # 761 / 16946
    assert "| switches to FCFS | 4.59 % |" in text
    assert "| same policy | 90.32 % |" in text
    assert "| average backlog at start of self-tuning | 22.05 |" in text


def test_shrink_table_and_reference_shrink(results: list[dict]) -> None:
    text = T.shrink_table(results, "KTH_syn")
    lines = text.splitlines()
    assert lines[0] == "| metric | configuration | shrink 1.00 | shrink 0.80 |"
    assert "| UTIL | dynP advanced ARTwW | 75.36 % | 75.36 % |" in text
    assert "| ARTwW | FCFS cons. | 20,000 s | 20,000 s |" in text
    assert T.reference_shrink(results) == 1.0
    assert T.reference_shrink([r for r in results if r["shrink"] != 1.0]) == 0.8
    assert T.reference_shrink([]) is None


def _as_queued(results: list[dict]) -> list[dict]:
    """The fixture with dynP (quality ARTwW) run again with the as-queued FCFS candidate."""
    extra = []
    for trace in ("CTC_syn", "KTH_syn"):
        for shrink in (1.0, 0.8):
            for decider, artww in (("simple", 30000.0), ("advanced", 24000.0)):
                label = T.dynp_label(decider, "artww", "as-queued")
                summary = _summary(0.75, artww, dynp=_dynp_block({"6b": 900, "2": 100}))
                extra.append(_entry(trace, shrink, label, summary))
    return results + extra


def test_decider_table_per_fcfs_candidate(results: list[dict]) -> None:
    text = T.decider_table(_as_queued(results), "KTH_syn")
    assert text.splitlines()[0] == "| FCFS candidate |  | shrink 1.00 | shrink 0.80 |"
    assert "| sorted | advanced / simple | 1.000 | 1.000 |" in text
    assert "| as-queued | ARTwW simple | 30,000 s | 30,000 s |" in text
    assert "| as-queued | advanced / simple | 0.800 | 0.800 |" in text
    assert "as-queued-sjf" not in text  # not run
    assert "| - | SJF cons. / FCFS cons. | 1.000 | 1.000 |" in text  # 20,001 / 20,000


def test_tables_with_another_candidate_and_beside_the_seed(results: list[dict]) -> None:
    runs = _as_queued(results)
    cases = S.seed_case_table(runs, "CTC_syn", 1.0)
    assert cases.splitlines()[0] == "|  | sorted | as-queued | seed |"
    # The fixture's sorted column is the seed's own Table 6 (case 10b left out).
    assert "| case: 6b | 10,669 (= 62.96 %) | 900 (= 90.00 %) | 10,669 (= 62.96 %) |" in cases
    assert "| total | 16,946 | 1,000 | 16,946 |" in cases
    summary = S.seed_summary_table(runs, "CTC_syn", 1.0)
    assert "| ARTwW advanced | 21,912 s | 24,000 s | 21,912 s |" in summary
    assert "| advanced / simple | 1.000 | 0.800 | 0.843 |" in summary  # seed: 21,912 / 25,980
    assert "| switches to SJF | 4.49 % | 4.49 % | 4.49 % |" in summary
    assert S.seed_traces(["SDSC_syn", "KTH_syn", "CTC_syn"]) == ["KTH_syn", "CTC_syn"]
    text = "\n".join(R._tables_section(runs, ["CTC_syn", "KTH_syn"]))
    assert "## Tables 4-6 with fcfs_candidate=as-queued (shrinking factor 1.00)" in text
    assert "as-queued-sjf" not in text
    assert "## Beside the seed" in text and "### KTH_syn" in text
    assert "## Beside the seed" not in "\n".join(R._tables_section(results, ["TOY_syn"]))


def test_runtime_table(results: list[dict]) -> None:
    text = T.runtime_table(results)
    assert text.splitlines()[0].startswith("| configuration | CTC_syn 1.00 | CTC_syn 0.80 |")
    assert "| fcfs-cons | 1.00 | 1.00 | 1.00 | 1.00 | 4.00 |" in text


# --------------------------------------------------------------------------- plots


def test_plots_write_png_files(results: list[dict], tmp_path: Path) -> None:
    written = write_figures(results, tmp_path)
    names = {spec.filename for spec, path in written if path is not None}
    assert {
        "fig2_artww_quality.png",
        "fig4_artww.png",
        "fig5_sldww60.png",
        "fig8_utilization.png",
    } <= names
    for _, path in written:
        assert path is not None
        data = path.read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 5000


def test_candidate_figure_only_with_another_candidate(results: list[dict]) -> None:
    assert "fig_candidates_artww.png" not in {s.filename for s in figure_specs(results)}
    spec = next(s for s in figure_specs(_as_queued(results)) if s.filename.startswith("fig_cand"))
    assert spec.configs == (
        "fcfs-cons", "sjf-cons", "dynp-simple-artww", "dynp-advanced-artww",
        "dynp-simple-artww-as-queued", "dynp-advanced-artww-as-queued",
    )  # fmt: skip


def test_plot_without_data_is_skipped(tmp_path: Path) -> None:
    cons = [_entry("X", 1.0, "fcfs-cons", _summary(0.5, 100.0))]
    fig2 = figure_specs(cons)[0]
    assert fig2.configs == ()
    fig4 = next(s for s in figure_specs(cons) if s.filename == "fig4_artww.png")
    assert plot_metric([], fig4, tmp_path) is None
    assert plot_metric(cons, fig4, tmp_path) == tmp_path / "fig4_artww.png"


# --------------------------------------------------------------------------- options


def test_option_parsing() -> None:
    assert parse_shrinks("1.0,0.9,0.8,0.9") == [1.0, 0.9, 0.8]
    with pytest.raises(StudyError):
        parse_shrinks("1.0,-1")
    with pytest.raises(StudyError):
        parse_shrinks("1.0,x")
    assert parse_nodes_for(["ctc=430", "KTH=64"]) == {"CTC": 430, "KTH": 64}
    with pytest.raises(StudyError):
        parse_nodes_for(["CTC"])
    assert trace_base_name("/x/CTC-SP2-1996-3.1-cln.swf.gz") == "CTC"
    assert trace_base_name("toy.swf") == "toy"
    assert machine_width("CTC", {}, 338) == 430
    assert machine_width("CTC", {"CTC": 512}, 338) == 512
    assert machine_width("SDSC", {}, None) == 128
    assert machine_width("LANL", {}, 1024) == 1024


def test_config_sets_and_order() -> None:
    assert [c.name for c in config_set("basic")] == ["fcfs-cons", "sjf-cons", "ljf-cons"]
    default = config_set("default")
    assert len(default) == 10
    basic = next(c for c in default if c.name == "dynp-basic")
    assert basic.param_dict == {"lower": "7200", "upper": "9000"}
    advanced = next(c for c in default if c.name == "dynp-advanced-artww")
    assert (advanced.policy, advanced.param_dict) == (
        "dynp",
        {"decider": "advanced", "quality": "artww"},
    )
    assert len(config_set("all")) == 14
    as_queued = {c.name: c for c in config_set("as-queued")}
    assert len(as_queued) == 18  # the paper's 10, 6 as-queued, 2 as-queued-sjf (ARTwW)
    assert as_queued["dynp-advanced-artww"].param_dict == advanced.param_dict
    assert as_queued["dynp-simple-ms-as-queued"].param_dict == {
        "decider": "simple", "quality": "ms", "fcfs_candidate": "as-queued",
    }  # fmt: skip
    assert "dynp-simple-ms-as-queued-sjf" not in as_queued
    check_policies(as_queued.values())  # every parameter set builds
    assert (
        config_title("dynp-advanced-artww-as-queued-sjf") == "dynP advanced ARTwW (as-queued-sjf)"
    )
    with pytest.raises(StudyError, match="as-queued, got 'sorted'"):
        config_set("sorted")
    spec = TraceSpec("A", "a.swf", "a.swf", 64, "0", work=100.0)
    tasks = plan_tasks([spec], [1.0, 0.8], default)
    assert tasks[0].config.policy == "dynp" and tasks[0].shrink == 0.8
    assert tasks[-1].config.policy.endswith("-cons") and tasks[-1].shrink == 1.0


def test_unknown_policy_fails_before_any_run() -> None:
    with pytest.raises(StudyError, match="nope"):
        check_policies([Config("x", "nope")])


def test_add_report_command_registers_dynp() -> None:
    parser = argparse.ArgumentParser(prog="batchd")
    add_report_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["report", "dynp", "--trace", "t.swf", "--shrink", "1.0,0.8"])
    assert callable(args.func)
    assert (args.jobs, args.configs, args.workers, args.resume) == (10_000, "default", None, False)
    assert args.trace == ["t.swf"] and args.shrink == "1.0,0.8"


# --------------------------------------------------------------------------- end to end


def _write_toy_swf(path: Path, count: int = 300, nodes: int = 32) -> Path:
    rng = np.random.default_rng(7)
    submit = np.cumsum(rng.exponential(400.0, count)).astype(int)
    width = np.minimum(2 ** rng.integers(0, 6, count), nodes)
    runtime = np.maximum(1, rng.lognormal(7.0, 1.4, count)).astype(int)
    estimate = np.where(rng.random(count) < 0.9, runtime * 2, runtime // 2 + 1)
    lines = ["; Version: 2.2", "; Computer: toy", f"; MaxNodes: {nodes}", f"; MaxProcs: {nodes}"]
    for i in range(count):
        fields = [i + 1, submit[i], -1, runtime[i], width[i], -1, -1, width[i], estimate[i]]
        fields += [-1, 1] + [-1] * 7
        lines.append(" ".join(str(int(f)) for f in fields))
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(tmp_path: Path, configs: str, *extra: str) -> tuple[int, Path]:
    swf = _write_toy_swf(tmp_path / "TOY-cluster-2024.swf")
    out = tmp_path / "study"
    argv = ["report", "dynp", "--trace", f"synthetic-from:{swf}", "--jobs", "200",
            "--shrink", "1.0,0.8", "--workers", "2", "--configs", configs, "--out", str(out),
            *extra]  # fmt: skip
    return main(argv), out


def test_study_end_to_end_basic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _run(tmp_path, "basic")
    assert rc == 0
    report = (out / "report.md").read_text()
    assert report.startswith("# dynP study")
    assert "- Command: `batchd report dynp --trace synthetic-from:" in report
    assert "## Discussion\n\n(to be written from the results above)" in report
    assert "### TOY_syn" in report and "| TOY_syn |" in report
    for name in ("fig4_artww.png", "fig5_sldww60.png", "fig8_utilization.png"):
        assert (out / name).read_bytes().startswith(PNG_MAGIC)
        assert f"]({name})" in report
    assert not (out / "fig2_artww_quality.png").exists()
    jobset = (out / "jobsets" / "TOY_syn.swf").read_text()
    assert "; MaxNodes: 32" in jobset
    results = json.loads((out / "results.json").read_text())
    assert len(results) == 6
    assert {(r["config"], r["shrink"]) for r in results} == {
        (c, s) for c in ("fcfs-cons", "sjf-cons", "ljf-cons") for s in (1.0, 0.8)
    }
    assert all(r["summary"]["jobs"] == 200 and r["nodes"] == 32 for r in results)
    assert set(results[0]) >= {"trace", "shrink", "config", "params", "summary"}
    capsys.readouterr()

    rc, _ = _run(tmp_path, "basic", "--resume")
    assert rc == 0
    assert "6 runs (0 new, 6 reused, 0 failed)" in capsys.readouterr().out

    # --report-only replays nothing, and a person's discussion.md replaces the placeholder.
    before = (out / "results.json").read_text()
    (out / "discussion.md").write_text("SJF wins on TOY_syn.\n")
    rc, _ = _run(tmp_path, "basic", "--report-only")
    assert rc == 0
    assert "6 runs (0 new, 6 reused, 0 failed)" in capsys.readouterr().out
    assert (out / "results.json").read_text() == before
    report = (out / "report.md").read_text()
    assert report.endswith("## Discussion\n\nSJF wins on TOY_syn.\n")
    assert "--configs basic --report-only`" in report
    rc, _ = _run(tmp_path, "all", "--report-only")
    assert rc == 2
    assert "--report-only: " in capsys.readouterr().err
    assert (out / "results.json").read_text() == before


def test_study_missing_trace_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["report", "dynp", "--trace", str(tmp_path / "nope.swf"), "--configs", "basic",
            "--out", str(tmp_path / "o")]  # fmt: skip
    assert main(argv) == 2
    assert "no such trace file" in capsys.readouterr().err


@pytest.mark.skipif("dynp" not in policy_names(), reason="dynp policy not registered")
def test_study_end_to_end_default(tmp_path: Path) -> None:
    rc, out = _run(tmp_path, "default")
    assert rc == 0
    results = json.loads((out / "results.json").read_text())
    assert len(results) == 20
    report = (out / "report.md").read_text()
    for heading in ("## Table 4", "## Table 5", "## Table 6", "## Performance at different"):
        assert heading in report
    assert (out / "fig2_artww_quality.png").read_bytes().startswith(PNG_MAGIC)
    advanced = next(
        r for r in results if r["config"] == "dynp-advanced-artww" and r["shrink"] == 1.0
    )
    dynp = advanced["summary"]["dynp"]
    assert sum(dynp["jobs_started"].values()) == 200
    assert f"| total | {sum(dynp['cases'].values()):,} |" in report
    basic = next(r for r in results if r["config"] == "dynp-basic")
    assert basic["params"] == {"lower": "7200", "upper": "9000"}
