"""make_grid: the layer of each structure, its seed, and the local policies it builds."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from batchd.sched.core.policy import BuildContext
from batchd.sched.grid import GridError, make_grid
from batchd.sched.grid.local import LocalGrid
from batchd.sched.registry import policy_names

MACHINES = [("m0", 4), ("m1", 8)]


def local_names(structure: str, **raw: str) -> list[str]:
    layer = make_grid(structure, raw, MACHINES)
    assert isinstance(layer, LocalGrid)
    assert [p.machine for p in layer.local] == [0, 1]
    return [p.name for p in layer.local]


def test_local_policies_of_each_structure() -> None:
    assert local_names("pool", discipline="fcfs") == ["fcfs", "fcfs"]
    assert local_names("pool", discipline="easy") == ["fcfs-easy", "fcfs-easy"]
    assert local_names("pool") == ["fcfs-easy", "fcfs-easy"]
    assert local_names("decentral", local="fcfs-cons") == ["fcfs-cons", "fcfs-cons"]
    assert local_names("hierarchical", **{"local.m0": "fcfs"}) == ["fcfs", "fcfs-easy"]


def test_the_layer_is_seeded() -> None:
    for structure in ("central", "multisite", "hierarchical", "decentral", "pool"):
        layer = make_grid(structure, {}, MACHINES, seed=7)
        assert layer.rng.random() == random.Random(7).random()
        layer = make_grid(structure, {}, MACHINES)  # seed 0 unless told
        assert layer.rng.random() == random.Random(0).random()


def test_given_contexts_build_the_local_policies() -> None:
    contexts = [BuildContext(machine=i, nodes=n) for i, (_, n) in enumerate(MACHINES)]
    layer = make_grid("decentral", {}, MACHINES, contexts)
    assert isinstance(layer, LocalGrid)
    assert [p.machine for p in layer.local] == [0, 1]


def test_local_policies_are_checked() -> None:
    message = "grid decentral: parameter local='lifo': unknown policy; choose one of: " + ", ".join(
        policy_names()
    )
    with pytest.raises(GridError, match=f"^{re.escape(message)}$"):
        make_grid("decentral", {"local": "lifo"}, MACHINES)
    message = (
        "grid hierarchical: machine m1: policy primetime keeps time windows of its own, "
        "which a grid's local policy cannot (choose another local policy)"
    )
    with pytest.raises(GridError, match=f"^{re.escape(message)}$"):
        make_grid("hierarchical", {"local.m1": "primetime"}, MACHINES)


def test_local_policies_are_built_for_their_machine_and_seed() -> None:
    layer = make_grid("decentral", {"local": "moldable-fairshare"}, MACHINES)
    assert isinstance(layer, LocalGrid)
    assert [p.nodes for p in layer.local] == [4, 8]  # type: ignore[attr-defined]
    # the GA seeds its generator from the context's: the grid's seed
    layer = make_grid("decentral", {"local": "ga"}, MACHINES, seed=7)
    assert isinstance(layer, LocalGrid)
    expected = np.random.default_rng(random.Random(7).getrandbits(64)).bit_generator.state
    for policy in layer.local:
        assert policy.rng.bit_generator.state == expected  # type: ignore[attr-defined]
