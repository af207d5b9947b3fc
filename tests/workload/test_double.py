"""Doubling a workload and sizing a generated set to a system (Hamscher et al.'s grid paper, sec. 5.1)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from batchd.cli import main
from batchd.model.job import Job, TraceLine
from batchd.workload.double import double_jobs
from batchd.workload.generate import double_generated, generate_jobs, write_generated_swf
from batchd.workload.model_fit import analyze_trace
from batchd.workload.source import load_trace


def test_double_jobs_by_hand() -> None:
    rec = tuple([7, 30, -1, 5, 2, -1, -1, 2, 9, -1, 1, 3, -1, -1, 1, 2, -1, -1])
    jobs = [
        Job(7, 30, 2, 9, 5, "3", "1", trace=TraceLine(rec, ("site=north",))),
        Job(4, 10, 1, 60, 50),
        Job(5, 10, 3, 20, 20),  # same second as job 4, after it in the given order
    ]
    out = double_jobs(jobs)
    assert [(j.id, j.submit, j.width, j.estimate, j.runtime) for j in out] == [
        (1, 10, 1, 60, 50),
        (2, 10, 1, 60, 50),
        (3, 10, 3, 20, 20),
        (4, 10, 3, 20, 20),
        (5, 30, 2, 9, 5),
        (6, 30, 2, 9, 5),
    ]
    assert out[4].user == out[5].user == "3" and out[4].queue == "1"
    assert out[4].trace == ((5, *rec[1:]), ("site=north",))
    assert out[5].trace == ((6, *rec[1:]), ("site=north",))
    assert out[0] is not out[1] and out[0].trace is None
    assert [j.id for j in jobs] == [7, 4, 5]  # the input is left alone


def test_load_trace_doubles_after_first_and_shrink(tmp_path: Path) -> None:
    swf = tmp_path / "t.swf"
    swf.write_text(
        "1 0 -1 100 2 -1 -1 2 200 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
        "2 10 -1 50 1 -1 -1 1 60 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
        "3 20 -1 50 9 -1 -1 9 60 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
        "4 30 -1 50 1 -1 -1 1 60 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
    )
    wl = load_trace(str(swf), 2, shrink=0.5, first=3, double=True)
    assert [(j.id, j.submit) for j in wl.jobs] == [(1, 0), (2, 0), (3, 5), (4, 5)]
    assert wl.skipped["wider_than_machine"] == 2  # job 3, twice
    assert [j.trace.fields[0] for j in wl.jobs if j.trace] == [1, 2, 3, 4]


def test_replay_double_schedule_by_hand(tmp_path: Path) -> None:
    """FCFS on 2 nodes: A (2 nodes, 100 s) twice at 0, B (1 node, 50 s) twice at 10."""
    swf = tmp_path / "t.swf"
    swf.write_text(
        "1 0 -1 100 2 -1 -1 2 200 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
        "2 10 -1 50 1 -1 -1 1 60 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
    )
    out = tmp_path / "o.swf"
    argv = ["replay", str(swf), "--nodes", "2", "--policy", "fcfs", "--double"]
    assert main([*argv, "--out-swf", str(out)]) == 0
    rows = [line.split() for line in out.read_text().splitlines() if not line.startswith(";")]
    # id, submit, wait, runtime: the copies of A one after the other, both Bs together.
    assert [r[:4] for r in rows] == [
        ["1", "0", "0", "100"],
        ["2", "0", "100", "100"],
        ["3", "10", "190", "50"],
        ["4", "10", "190", "50"],
    ]


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(3)
    path = tmp_path_factory.mktemp("m") / "TOY-1.swf"
    lines = ["; MaxNodes: 64", "; MaxProcs: 64"]
    submit = 0
    for i in range(400):
        submit += int(rng.exponential(300))
        w = int(2 ** rng.integers(0, 6))
        r = int(rng.integers(60, 5000))
        lines.append(f"{i + 1} {submit} -1 {r} {w} -1 -1 {w} {2 * r} -1 1" + " -1" * 7)
    path.write_text("\n".join(lines) + "\n")
    return analyze_trace(path)


def test_scale_to_nodes_multiplies_the_gaps(model) -> None:  # type: ignore[no-untyped-def]
    base = generate_jobs(model, 300, seed=5)
    for target, shrink in ((256, 1.0), (16, 1.0), (256, 0.5)):
        scaled = generate_jobs(model, 300, seed=5, scale_to_nodes=target, shrink=shrink)
        # Same shapes, the same draw of gaps: submits scale by 64 / target (x shrink),
        # up to the rounding of each submit to a second.
        assert [(j.width, j.estimate, j.runtime) for j in scaled] == [
            (j.width, j.estimate, j.runtime) for j in base
        ]
        factor = 64 / target * shrink
        # The gaps are drawn and scaled in operational time, as --shrink does, so the
        # weekly pattern stays on the clock: exactly a shrink by the factor.
        assert scaled == generate_jobs(model, 300, seed=5, shrink=factor)
        span = scaled[-1].submit / base[-1].submit
        assert factor * 0.8 < span < factor * 1.25
    same = generate_jobs(model, 300, seed=5, scale_to_nodes=64)
    assert same == base  # the model's own size changes nothing


def test_generate_double_and_same_bytes(model, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    plain = generate_jobs(model, 50, seed=9, scale_to_nodes=128)
    doubled = generate_jobs(model, 50, seed=9, scale_to_nodes=128, double=True)
    assert doubled == double_generated(plain)
    assert len(doubled) == 100 and [j.id for j in doubled] == list(range(1, 101))
    for i, job in enumerate(plain):
        a, b = doubled[2 * i], doubled[2 * i + 1]
        assert (a.submit, a.width, a.runtime) == (b.submit, b.width, b.runtime)
        assert (a.submit, a.width, a.estimate, a.runtime) == (
            job.submit,
            job.width,
            job.estimate,
            job.runtime,
        )
    files = []
    for name in ("a.swf", "b.swf"):
        jobs = generate_jobs(model, 50, seed=9, scale_to_nodes=128, double=True)
        write_generated_swf(tmp_path / name, jobs, model, 9, scale_to_nodes=128, double=True)
        files.append((tmp_path / name).read_bytes())
    assert files[0] == files[1]
    text = files[0].decode()
    assert "; MaxNodes: 128\n" in text and "inter-arrival times multiplied by 64/128" in text
    assert "; Note: doubled: every job twice" in text


def test_generate_command_options(model, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "model.json"
    model.save(path)
    out = tmp_path / "o.swf"
    argv = ["generate", str(path), "-n", "20", "--seed", "2", "-o", str(out)]
    assert main([*argv, "--scale-to-nodes", "640", "--double"]) == 0
    assert "40 jobs written" in capsys.readouterr().out
    jobs = [line.split() for line in out.read_text().splitlines() if not line.startswith(";")]
    assert len(jobs) == 40 and jobs[0][1] == jobs[1][1] == "0"
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--scale-to-nodes", "0"])
    assert exc.value.code == 2
    assert "--scale-to-nodes" in capsys.readouterr().err
