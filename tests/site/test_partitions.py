"""``[[partition]]`` tables: Slurm's keys for queues, read into the queues they mean."""

from __future__ import annotations

from pathlib import Path

import pytest

from batchd.site.config import ConfigError, load_site

BASE = '[[machine]]\nname = "m"\nnodes = 8\n'


def site(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "site.toml"
    path.write_text(BASE + text)
    return path


def test_partitions_become_queues(tmp_path: Path) -> None:
    text = """
[[queue]]
name = "workq"

[[partition]]
PartitionName = "debug"
DefaultTime = "10"
MaxTime = "1-00:00:00"
MaxNodes = 2
Default = "YES"

[[partition]]
PartitionName = "long"
MaxTime = "2-12"
State = "DRAIN"

[[partition]]
PartitionName = "any"
DefaultTime = 90
MaxTime = "UNLIMITED"
MaxNodes = "INFINITE"
State = "DOWN"
"""
    loaded = load_site(site(tmp_path, text))
    got = {
        q.name: (q.default_walltime, q.max_walltime, q.max_nodes, q.enabled, q.started)
        for q in loaded.queues()
    }
    assert got == {
        "workq": (3600, None, None, True, True),
        "debug": (600, 86400, 2, True, True),
        "long": (216000, 216000, None, False, True),  # without DefaultTime: MaxTime
        "any": (5400, None, None, True, False),  # a TOML integer counts minutes
    }
    assert loaded.default_queue == "debug"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('[[partition]]\nPartitionName = "p"\nMaxTime = "soon"\n',
         "partition[0].MaxTime: 'soon' is not a Slurm time (MINUTES"),
        ('[[partition]]\nPartitionName = "p"\nDefaultTime = "0"\n',
         "partition[0].DefaultTime: '0' must be more than 0"),
        ('[[partition]]\nPartitionName = "p"\nMaxNodes = "lots"\n',
         "partition[0].MaxNodes: give a number of nodes or UNLIMITED"),
        ('[[partition]]\nPartitionName = "p"\nDefault = "yes please"\n', "partition[0].Default"),
        ('[[partition]]\nPartitionName = "p"\nState = "UPP"\n', "partition[0].State"),
        ('[[partition]]\nPartitionName = "p"\nMaxCPUs = 4\n', "partition[0].MaxCPUs"),
        ('[[partition]]\nPartitionName = "a"\nDefault = "YES"\n'
         '[[partition]]\nPartitionName = "b"\nDefault = "YES"\n',
         "partition[1].Default: only one partition may be the default (partition a is)"),
        ('[server]\ndefault_queue = "a"\n[[partition]]\nPartitionName = "a"\nDefault = "YES"\n',
         "partition[0].Default: server.default_queue names the default queue already"),
        ('[[queue]]\nname = "a"\n[[partition]]\nPartitionName = "a"\n',
         "queue[1].name: 'a' is the name of an earlier queue"),
    ],
)  # fmt: skip
def test_bad_partitions_are_refused_by_key(tmp_path: Path, text: str, says: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_site(site(tmp_path, text))
    assert says in str(err.value)
