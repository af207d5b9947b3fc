"""The experiment file: axes, defaults, and errors that name the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from batchd.sweep import SweepError
from batchd.sweep.experiment import load_experiment
from sweep_files import write_experiment


def test_one_value_stands_for_a_list_and_defaults_fill_the_rest(tmp_path: Path) -> None:
    path = write_experiment(tmp_path / "e.toml", 'traces = "t.swf"\npolicies = "fcfs-easy"\n')
    table, base = load_experiment(path)
    assert table.traces == ["t.swf"] and table.policies == ["fcfs-easy"]
    assert table.perfect_estimates == [False] and table.seed_values() == [0]
    assert table.kill is True and base == tmp_path


def test_repeats_are_seeds_from_zero(tmp_path: Path) -> None:
    path = write_experiment(tmp_path / "e.toml", 'traces = "t"\npolicies = "fcfs"\nrepeats = 3\n')
    assert load_experiment(path)[0].seed_values() == [0, 1, 2]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('traces = "t"\npolicies = "fcfs"\nnode = 4\n', "sweep.node: unknown key"),
        ('traces = "t"\npolicies = "fcfs"\nnodes = [0]\n', "sweep.nodes[0]: Input should be"),
        ('traces = "t"\n', "sweep.policies: Field required"),
        ('traces = "t"\npolicies = "fcfs"\nshrink = 0.5\nload = 2.0\n', "shrink or load, not both"),
        ('traces = "t"\npolicies = "fcfs"\nnodes = 4\nmachines = "m.toml"\n', "nodes or machines"),
        ('traces = "t"\npolicies = "fcfs"\nseeds = [1, 1]\n', "seeds: a value is given twice"),
        (
            'traces = "t"\npolicies = "a"\n[sweep.params.dynp]\nquality = "ms"\n',
            "params.dynp: not one",
        ),
        ('traces = "t"\npolicies = "grid-central"\n', "a grid structure needs machines"),
        ('traces = "t"\npolicies = "fcfs"\nshrink = 0\n', "sweep.shrink[0]: Input should be"),
        ("traces = [", "not valid TOML"),
    ],
)
def test_bad_files_name_the_file_and_the_key(tmp_path: Path, body: str, message: str) -> None:
    path = write_experiment(tmp_path / "e.toml", body)
    with pytest.raises(SweepError, match=r"^\S*e\.toml: .*") as err:
        load_experiment(path)
    assert message in str(err.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(SweepError, match="no such experiment file"):
        load_experiment(tmp_path / "none.toml")
