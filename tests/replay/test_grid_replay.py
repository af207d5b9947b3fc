"""``batchd replay --grid``: Table 1's site files, the summary's grid object, the outputs
(machine in SWF field 16, a machine column in jobs.csv, every multi-site part) and
errors that name the bad key or value."""

from __future__ import annotations

import csv
import json
import tomllib
from pathlib import Path

import pytest

from batchd.cli import main
from batchd.replay import ReplayError, ReplayOptions, run_replay
from batchd.sched.grid import GridError, parse_grid_params
from batchd.site.config import ConfigError, load_site
from paths import ROOT

# Hamscher et al.'s grid paper, Table 1, in the table's order.
TABLE1 = {
    "grid-nrw.toml": [10, 12, 16, 32, 48, 192, 512, 512],
    "grid-equal.toml": [256] * 8,
    "grid-4small-4big.toml": [32, 32, 32, 32, 256, 256, 256, 256],
    "grid-2pown.toml": [2, 4, 8, 16, 32, 64, 128, 256],
}

SITE = """
[[machine]]
name = "small"
nodes = 2
node_prefix = "s"

[[machine]]
name = "big"
nodes = 4
node_prefix = "b"
"""

# id submit wait run alloc cpu mem procs reqtime mem status user group exe queue part prec think
JOBS = [
    (1, 0, 100, 4),  # (id, submit, runtime, width)
    (2, 0, 10, 2),
    (3, 0, 10, 6),  # wider than every machine: rejected, except under multisite
    (4, 5, 10, 1),
]


def write_trace(path: Path) -> Path:
    lines = []
    for jid, submit, run, width in JOBS:
        fields = [jid, submit, -1, run, width, -1, -1, width, run, -1, 1, 1, 1, -1, 1, 1, -1, -1]
        lines.append(" ".join(map(str, fields)))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def site(tmp_path: Path) -> Path:
    path = tmp_path / "grid.toml"
    path.write_text(SITE)
    return path


@pytest.mark.parametrize("name", sorted(TABLE1))
def test_table1_site_files(name: str) -> None:
    site = load_site(ROOT / "conf" / name)
    assert [m.nodes for m in site.machine] == TABLE1[name]
    assert len({m.name for m in site.machine}) == 8
    assert site.grid_table is not None and site.grid_table.structure == "central"
    raw = tomllib.loads((ROOT / "conf" / name).read_text())
    assert len(raw["machine"]) == 8


# central easy bestfit-free on small (2) and big (4): J3 (w6) is rejected.
# t=0: J1 w4 -> big (the only one wide enough) [0,100); J2 w2 -> small [0,10).
# t=5: J4 w1: small is full, big is full -> waits; t=10: small frees: J4 -> small [10,20).
def test_central_replay_outputs(tmp_path: Path, site: Path) -> None:
    trace = write_trace(tmp_path / "t.swf")
    out_swf, out_csv, summary_json = tmp_path / "o.swf", tmp_path / "o.csv", tmp_path / "s.json"
    argv = ["replay", str(trace), "--machine", str(site), "--grid", "central"]
    argv += ["--grid-param", "scheduler=easy", "--grid-param", "select=bestfit-free"]
    argv += ["--out-swf", str(out_swf), "--out-jobs-csv", str(out_csv)]
    assert main([*argv, "--summary-json", str(summary_json)]) == 0
    summary = json.loads(summary_json.read_text())
    grid = summary["grid"]
    assert grid["structure"] == "central"
    assert grid["params"] == {"scheduler": "easy", "select": "bestfit-free"}
    assert grid["rejected"] == 1 and summary["jobs"] == 3
    # span 0..100; small: 2*10 + 1*10 = 30 node-s of 200; big: 4*100 of 400
    assert grid["machines"] == [
        {"name": "small", "nodes": 2, "jobs": 2, "utilization": 0.15},
        {"name": "big", "nodes": 4, "jobs": 1, "utilization": 1.0},
    ]
    assert grid["totals"] == {"machines": 2, "nodes": 6, "jobs": 3, "utilization": 0.716667}
    rows = [ln.split() for ln in out_swf.read_text().splitlines() if not ln.startswith(";")]
    assert [(r[0], r[1], r[2], r[15]) for r in rows] == [
        ("1", "0", "0", "2"),
        ("2", "0", "0", "1"),
        ("4", "5", "5", "1"),
    ]
    with out_csv.open(newline="") as fh:
        got = [(r["job_id"], r["starting_time"], r["machine"]) for r in csv.DictReader(fh)]
    assert got == [("1", "0", "big"), ("2", "0", "small"), ("4", "10", "small")]


# multisite, p = 0.1, model 3: J1 w4 -> big [0,100); J2 w2 -> small [0,10); J3 w6
# waits (free 0); J4 waits behind it (FCFS). t=10: small free 2, big 0: J3 cannot.
# t=100: J3 split big 4 + small 2, factor (1.1) * 2 = 2.2 -> 22 s [100,122);
# J4 w1 waits (free 0) until 122 -> small (bestfit: left 1 vs big 3) [122,132).
def test_multisite_lists_every_part(tmp_path: Path, site: Path) -> None:
    trace = write_trace(tmp_path / "t.swf")
    out_csv = tmp_path / "o.csv"
    opts = ReplayOptions(
        trace=str(trace),
        machine=str(site),
        grid="multisite",
        grid_params={"overhead": "3", "p": "0.1"},
    )
    result = run_replay(opts)
    assert [(j.id, j.start, j.end, j.width) for j in result.jobs] == [
        (1, 0, 100, 4),
        (2, 0, 10, 2),
        (3, 100, 122, 6),
        (4, 122, 132, 1),
    ]
    assert [(j.id, j.machine, j.width) for j in result.runs] == [
        (1, 1, 4),
        (2, 0, 2),
        (3, 0, 2),
        (3, 1, 4),
        (4, 0, 1),
    ]
    grid = result.summary["grid"]
    assert grid["multisite_jobs"] == 1 and grid["rejected"] == 0
    assert grid["multisite_added_node_seconds"] == 6 * 12
    argv = ["replay", str(trace), "--machine", str(site), "--grid", "multisite"]
    assert main([*argv, "--out-jobs-csv", str(out_csv)]) == 0
    with out_csv.open(newline="") as fh:
        ids = [(r["job_id"], r["machine"]) for r in csv.DictReader(fh)]
    assert ids.count(("3", "small")) == 1 and ids.count(("3", "big")) == 1


# multisite, min_part 3: J3 (6 nodes) is wider than both machines and no split has
# two parts of 3 or more (small has 2): it could never run, so it is rejected at load
# (it used to wait for ever, and the replay failed). J1 on big [0,100), J2 on small
# [0,10); J4 arrives at 5 with both full and starts at 10 on small.
def test_multisite_rejects_a_job_no_split_can_run(tmp_path: Path, site: Path) -> None:
    trace = write_trace(tmp_path / "t.swf")
    opts = ReplayOptions(
        trace=str(trace), machine=str(site), grid="multisite", grid_params={"min_part": "3"}
    )
    result = run_replay(opts)
    assert [(j.id, j.start, j.end) for j in result.jobs] == [(1, 0, 100), (2, 0, 10), (4, 10, 20)]
    assert result.summary["grid"]["rejected"] == 1


def test_site_grid_table_and_override(tmp_path: Path, site: Path) -> None:
    trace = write_trace(tmp_path / "t.swf")
    path = tmp_path / "g.toml"
    path.write_text(SITE + '\n[grid]\nstructure = "hierarchical"\n[grid.params]\nlocal = "fcfs"\n')
    result = run_replay(ReplayOptions(trace=str(trace), machine=str(path)))
    assert result.summary["grid"]["params"] == {"select": "equalutil-max", "local": "fcfs"}
    other = run_replay(ReplayOptions(trace=str(trace), machine=str(path), grid="central"))
    assert other.summary["grid"]["structure"] == "central"


@pytest.mark.parametrize(
    ("structure", "params", "message"),
    [
        ("ring", {}, "unknown grid structure 'ring'; choose one of: central, multisite"),
        ("central", {"sched": "easy"}, "unknown parameter 'sched' (allowed: scheduler, select)"),
        ("central", {"scheduler": "sjf"}, "scheduler='sjf': expected one of fcfs, random"),
        ("central", {"select": "bestfit"}, "select='bestfit': expected one of biggestfree-free"),
        ("hierarchical", {"select": "bestfit-free"}, "select='bestfit-free': expected one of"),
        ("multisite", {"select": "bestfit-max"}, "select='bestfit-max': expected one of"),
        ("multisite", {"p": "-1"}, "p='-1': expected a decimal number >= 0"),
        ("multisite", {"min_part": "0"}, "min_part='0': expected an integer >= 1"),
        ("multisite", {"overhead": "5"}, "overhead='5': expected one of 1, 2, 3, 4"),
        ("decentral", {"migration": "0.5"}, "migration='0.5': expected a decimal number >= 1"),
        ("decentral", {"local": "nope"}, "local='nope': unknown policy"),
        ("decentral", {"local.huge": "fcfs"}, "'huge' is not a machine (machines: small, big)"),
        ("pool", {"push": "some"}, "push='some': expected one of blocked, all, overflow"),
        ("pool", {"backlog": "-1", "push": "overflow"}, "backlog='-1': expected a decimal"),
        ("pool", {"backlog": "2"}, "backlog='2' applies only with push=overflow (push is"),
        ("multisite", {"part_unit": "cm"}, "part_unit='cm': expected one of nodes, mean-part"),
        (
            "multisite",
            {"part_unit": "mean-part", "overhead": "3"},
            "part_unit='mean-part' applies only to overhead models 2 and 4 (overhead is 3)",
        ),
        ("pool", {"local": "fcfs"}, "unknown parameter 'local' (allowed: discipline, push"),
    ],
)
def test_bad_params(structure: str, params: dict[str, str], message: str) -> None:
    with pytest.raises(GridError, match="^") as err:
        parse_grid_params(structure, params, ["small", "big"], ["fcfs", "fcfs-easy"])
    assert message in str(err.value)


def test_cli_errors(tmp_path: Path, site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = str(write_trace(tmp_path / "t.swf"))
    cases = [
        (["--grid", "central"], "--grid needs --machine"),
        (["--machine", str(site), "--grid", "central", "--grid-param", "x"], "expected KEY=VALUE"),
        (["--machine", str(site), "--grid-param", "scheduler=easy"], "--grid-param needs --grid"),
        (["--machine", str(site), "--grid", "central", "--policy", "fcfs"], "--policy does not"),
        (
            ["--machine", str(site), "--grid", "central", "--grid-param", "scheduler=x"],
            "grid central: parameter scheduler='x'",
        ),
    ]
    for extra, message in cases:
        assert main(["replay", trace, *extra]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err


def test_site_file_bad_grid_names_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(SITE + '\n[grid]\nstructure = "central"\n[grid.params]\nselect = "worst"\n')
    with pytest.raises(ConfigError, match=r"bad.toml: grid.params: grid central: parameter sel"):
        load_site(path)
    path.write_text(SITE + '\n[grid]\nstructure = "mesh"\n')
    with pytest.raises(ConfigError, match=r"bad.toml: grid.structure: unknown grid structure"):
        load_site(path)


def test_wider_than_grid_is_an_error_only_for_options(tmp_path: Path, site: Path) -> None:
    with pytest.raises(ReplayError, match="--nodes does not apply"):
        run_replay(
            ReplayOptions(
                trace=str(write_trace(tmp_path / "t.swf")),
                machine=str(site),
                grid="central",
                nodes=4,
            )
        )


@pytest.mark.parametrize("structure", ["central", "multisite", "hierarchical", "decentral", "pool"])
def test_nrw_synthetic(structure: str) -> None:
    opts = ReplayOptions(
        trace="synthetic:400", machine=str(ROOT / "conf" / "grid-nrw.toml"), grid=structure
    )
    result = run_replay(opts)
    grid = result.summary["grid"]
    assert grid["totals"]["jobs"] == result.summary["jobs"] == 400 - grid["rejected"]
    assert sum(m["jobs"] for m in grid["machines"]) == len(result.runs)


@pytest.mark.parametrize(
    ("table", "says"),
    [
        (
            '[grid]\nstructure = "central"\n[[queue]]\nname = "night"\nwindow = "prime"\n',
            "queue[0].window: queue night has a window",
        ),
        (
            '[grid]\nstructure = "multisite"\n[[queue]]\nname = "night"\nwindow = "prime"\n',
            "queue[0].window: queue night has a window",
        ),
    ],
)
def test_daemon_refuses_what_it_cannot_serve_of_a_grid(
    tmp_path: Path, table: str, says: str
) -> None:
    """Grids behind queue windows (multisite too): refused in one line naming the file and
    the key, before the state file is touched."""
    import subprocess
    import sys

    conf = tmp_path / "g.toml"
    conf.write_text(
        '[[machine]]\nname = "a"\nnodes = 4\nnode_prefix = "a"\n'
        '[[machine]]\nname = "b"\nnodes = 8\nnode_prefix = "b"\n' + table
    )
    argv = [sys.executable, "-m", "batchd.cli", "serve", "--config", str(conf)]
    argv += ["--socket", str(tmp_path / "s.sock"), "--state", str(tmp_path / "state.db")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert f"{conf}: {says}" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "state.db").exists()
