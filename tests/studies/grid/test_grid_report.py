"""The grid study (batchd report grid): a tiny study end to end, its numbers the replays'."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from batchd.cli import main
from batchd.replay import ReplayOptions, run_replay
from batchd_studies.grid.claims import CLAIMS, claims_table
from batchd_studies.grid.tables import fmt_art, index_results
from batchd_studies.grid.variants import (
    DOUBLED,
    EXTRA_DOUBLED,
    all_variants,
    central,
    extra_plain,
    table2,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _site(path: Path, sizes: list[int]) -> Path:
    lines = [f'description = "test grid {sizes}"']
    for i, n in enumerate(sizes, start=1):
        lines += ["", "[[machine]]", f'name = "m{i}"', f"nodes = {n}", f'node_prefix = "m{i}n"']
    path.write_text("\n".join(lines) + "\n")
    return path


def _toy_trace(path: Path, count: int = 300, nodes: int = 16) -> Path:
    rng = np.random.default_rng(11)
    submit = np.cumsum(rng.exponential(300.0, count)).astype(int)
    width = np.minimum(2 ** rng.integers(0, 5, count), nodes)
    runtime = np.maximum(1, rng.lognormal(7.0, 1.2, count)).astype(int)
    lines = ["; Version: 2.2", "; Computer: toy", f"; MaxNodes: {nodes}", f"; MaxProcs: {nodes}"]
    for i in range(count):
        fields = [i + 1, submit[i], -1, runtime[i], width[i], -1, -1, width[i], 2 * runtime[i]]
        fields += [-1, 1] + [-1] * 7
        lines.append(" ".join(str(int(f)) for f in fields))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_variants_cover_table2() -> None:
    keys = [v.key for v in all_variants()]
    extra = len(extra_plain()) + len(EXTRA_DOUBLED)
    assert len(keys) == len(set(keys)) == 51 + len(DOUBLED) + extra
    structures = {v.structure for v in table2()}
    assert structures == {"central", "multisite", "hierarchical", "decentral", "pool"}
    assert all(v.doubled for v in all_variants()[51 : 51 + len(DOUBLED)])
    # Beyond Table 2: the paper's pool (4, and 2 x 3 backlogs doubled), models 2 and 4
    # normalized (8),
    # and three more min_part series at min_part 8, 32, 128 (Table 2 has their min_part 1).
    assert (len(extra_plain()), len(EXTRA_DOUBLED)) == (4 + 8 + 9, 6)
    assert all(v.doubled for v in all_variants()[-6:])
    assert {v.param_dict.get("push") for v in EXTRA_DOUBLED} == {"overflow"}


def test_tiny_study_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _toy_trace(tmp_path / "TOY-1.swf")
    conf = tmp_path / "conf"
    conf.mkdir()
    configs = [_site(conf / "grid-equal.toml", [16, 16]), _site(conf / "grid-mixed.toml", [4, 16])]
    out = tmp_path / "study"
    argv = ["report", "grid", "--trace", str(trace), "--jobs-per-node", "2", "--workers", "1"]
    argv += [a for c in configs for a in ("--config", str(c))] + ["--out", str(out)]
    began = time.perf_counter()
    assert main(argv) == 0
    assert time.perf_counter() - began < 40
    per_set = len(all_variants())
    assert f"{2 * per_set} runs ({2 * per_set} new, 0 reused, 0 failed), 4 figures" in (
        capsys.readouterr().out
    )
    report = (out / "report.md").read_text()
    assert report.startswith("# Grid scheduling structures")
    assert "- Command: `batchd report grid --trace " in report
    for name in ("fig_art.png", "fig_makespan.png", "fig_utilization.png", "fig_overhead.png"):
        assert (out / name).read_bytes().startswith(PNG_MAGIC)
        assert f"]({name})" in report
    # Job sets: 2 jobs per node of each grid, the doubled one as many jobs.
    assert (
        "| TOY-prob | equal | no | 64 |" in report and "| TOY-prob | mixed | yes | 40 |" in report
    )
    jobset = (out / "jobsets" / "TOY-prob_mixed_x2.swf").read_text()
    assert "; MaxNodes: 20\n" in jobset and "; Note: doubled" in jobset

    # The numbers are the replays': an entry against a replay of its own job set.
    results = json.loads((out / "results.json").read_text())
    assert len(results) == 2 * per_set
    key = central("easy", "bestfit-free").key
    entry = next(r for r in results if r["variant"] == key and r["config"] == "mixed")
    summary = run_replay(
        ReplayOptions(
            trace=entry["jobset"],
            machine=str(configs[1]),
            grid="central",
            grid_params={"scheduler": "easy", "select": "bestfit-free"},
            seed=1,
        )
    ).summary
    assert entry["summary"]["art"] == pytest.approx(summary["art"])
    assert entry["summary"]["makespan"] == summary["makespan"]
    assert entry["summary"]["jobs"] == summary["jobs"] == 40
    row = next(line for line in report.splitlines() if line.startswith("| Backfill BestFit_Free |"))
    assert f"| {fmt_art(summary['art'])} |" in row
    index = index_results(results)
    table = claims_table(index, "TOY-prob", ["equal", "mixed"])
    assert table in report
    assert all(f"| {c.key} |" in table for c in CLAIMS)

    # --report-only writes the same tables from results.json without replaying.
    before = (out / "results.json").read_text()
    (out / "discussion.md").write_text("Backfill wins on TOY.\n")
    assert main([*argv, "--report-only"]) == 0
    assert f"{2 * per_set} runs (0 new, {2 * per_set} reused" in capsys.readouterr().out
    assert (out / "results.json").read_text() == before
    again = (out / "report.md").read_text()
    assert "## Discussion\n\n_Written by hand" in again and "Backfill wins on TOY." in again
    assert table in again
    assert "- Report written again from results.json (no replays) by `batchd report grid" in again
    assert (out / "study.json").is_file()


def test_study_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _toy_trace(tmp_path / "TOY-1.swf", count=50)
    argv = ["report", "grid", "--trace", str(trace), "--out", str(tmp_path / "o")]
    assert main([*argv, "--config", str(tmp_path / "nope.toml")]) == 2
    assert "no such site file" in capsys.readouterr().err
    assert main(["report", "grid", "--trace", str(tmp_path / "nope.swf")]) == 2
    assert "no such trace file" in capsys.readouterr().err
    one = _site(tmp_path / "one.toml", [8])
    assert main([*argv, "--config", str(one)]) == 2
    assert "two machines or more" in capsys.readouterr().err
