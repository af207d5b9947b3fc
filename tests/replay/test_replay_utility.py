"""A replay of a trace with utility functions reports what they earned."""

from __future__ import annotations

from pathlib import Path

from batchd.replay import ReplayOptions, run_replay

REST = "-1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1"  # fields 6 to 18


def test_the_summary_has_a_utility_object_only_when_jobs_carry_functions(
    tmp_path: Path,
) -> None:
    # Two 1-node jobs on 1 node, FCFS: J1 runs [0, 50), J2 waits until 50 and runs
    # [50, 100): it ends 90 s after its submit at 10, on a line from 100 at 0 to 0 at
    # 180, so it earns 50. J1 earns its start value, 1000 (ends at 50, flat to 100).
    trace = tmp_path / "u.swf"
    trace.write_text(
        f"1 0 -1 50 1 {REST} utility=0:1000,100:1000,200:0\n"
        f"2 10 -1 50 1 {REST} utility=0:100,180:0\n"
    )
    result = run_replay(ReplayOptions(trace=str(trace), nodes=1, policy="fcfs"))
    utility = result.summary["utility"]
    assert (utility["jobs"], utility["aggregate"], utility["start_values"]) == (2, 1050, 1100)
    assert utility["wait"]["p100"] == 40
    plain = tmp_path / "plain.swf"
    plain.write_text(f"1 0 -1 50 1 {REST}\n")
    assert "utility" not in run_replay(ReplayOptions(str(plain), nodes=1, policy="fcfs")).summary
