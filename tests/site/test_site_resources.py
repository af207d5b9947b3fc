"""The site file's node resources: cores, memory, shared nodes, custom resources; every
error names the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from batchd.model.chunks import NodeShape
from batchd.site.config import ConfigError, load_site

BASE = '[[machine]]\nname = "m"\nnodes = 4\n'


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "site.toml"
    path.write_text(text)
    return path


def test_node_shape_from_the_site_file(tmp_path: Path) -> None:
    site = load_site(
        write(
            tmp_path,
            BASE + 'cores_per_node = 8\nmem_per_node = "16GB"\nshared = true\n'
            '[machine.resources]\nngpus = 2\nfabric = "ib"\n'
            '[[resource]]\nname = "ngpus"\ntype = "long"\nconsumable = true\n'
            '[[resource]]\nname = "fabric"\ntype = "string"\n'
            '[[resource]]\nname = "scratch"\ntype = "size"\nconsumable = true\nper = "node"\n',
        )
    )
    assert site.machine[0].shared
    assert site.node_shape(0) == NodeShape(
        ncpus=8, mem=16 << 30, amounts={"ngpus": 2, "scratch": 0}, values={"fabric": "ib"}
    )


def test_defaults_are_one_core_and_unlimited_memory(tmp_path: Path) -> None:
    site = load_site(write(tmp_path, BASE))
    assert site.node_shape(0) == NodeShape(ncpus=1, mem=None)
    assert not site.machine[0].shared


def test_the_shipped_hpcline_has_two_cores_and_512mb(tmp_path: Path) -> None:
    site = load_site(Path(__file__).resolve().parents[2] / "conf" / "hpcline96.toml")
    assert site.node_shape(0) == NodeShape(ncpus=2, mem=512 << 20)


@pytest.mark.parametrize(
    "extra,says",
    [
        ('mem_per_node = "lots"\n', "machine[0].mem_per_node: 'lots' is not a size"),
        ('shared = "yes"\n', 'machine[0].shared: expected a boolean (true or false), got the string "yes"'),
        ("[machine.resources]\nngpus = 2\n",
         "machine[0].resources.ngpus: not a per-node [[resource]] of this site (declared: none)"),
        ('[machine.resources]\nngpus = "two"\n[[resource]]\nname = "ngpus"\ntype = "long"\n',
         "machine[0].resources.ngpus: ngpus=two: expected a non-negative integer"),
        ('[[resource]]\nname = "mem"\ntype = "size"\n',
         "resource[0]: 'mem' is a built-in resource; choose another name"),
        ('[[resource]]\nname = "x"\ntype = "float"\n', "resource[0].type: Input should be"),
        ('[[resource]]\nname = "x"\ntype = "string"\nconsumable = true\n',
         "resource[0]: a consumable resource is a long or a size, not a string"),
        ('[[resource]]\nname = "x"\ntype = "long"\navailable = 4\n',
         "resource[0]: available is for consumable per-job resources"),
        ('[[resource]]\nname = "x"\ntype = "long"\n[[resource]]\nname = "x"\ntype = "size"\n',
         "resource[1].name: 'x' is defined twice"),
        ('[[resource]]\nname = "x"\ntype = "long"\nper = "job"\n[machine.resources]\nx = 1\n',
         "machine[0].resources.x: not a per-node [[resource]]"),
        ('shared = true\n[grid]\nstructure = "central"\n',
         "machine[0].shared: machine m shares its nodes; the machines of a grid ([grid]) give "
         "whole nodes"),
    ],
)  # fmt: skip
def test_errors_name_the_file_and_the_key(tmp_path: Path, extra: str, says: str) -> None:
    path = write(tmp_path, BASE + extra)
    with pytest.raises(ConfigError) as err:
        load_site(path)
    assert str(err.value).startswith(f"{path}: ") and says in str(err.value)


def test_a_shared_machine_is_its_cores_to_the_engine(tmp_path: Path) -> None:
    site = load_site(write(tmp_path, BASE + "cores_per_node = 8\nshared = true\n"))
    conf = site.machine[0]
    assert (conf.slots_per_node, conf.slots) == (8, 32)
    machine = site.grid().machines[0]
    assert (machine.nodes, machine.slots_per_node, machine.pool.per_node) == (32, 8, 8)
    assert site.grid(nodes=2).machines[0].nodes == 16  # --nodes counts nodes
    whole = load_site(write(tmp_path, BASE + "cores_per_node = 8\n")).grid().machines[0]
    assert (whole.nodes, whole.slots_per_node) == (4, 1)


def test_a_shared_machine_of_too_many_cores_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, '[[machine]]\nname = "m"\nnodes = 20\ncores_per_node = 60000\n'
                 "shared = true\n")  # fmt: skip
    with pytest.raises(ConfigError) as err:
        load_site(path)
    assert str(err.value).startswith(
        f"{path}: machine[0]: shared: 20 nodes of 60000 cores make 1,200,000 cores; a "
        "machine whose nodes are shared has at most 1,000,000"
    )
