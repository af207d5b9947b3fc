"""A chunk's non-consumable resources against the nodes' values, and how values are shown."""

from __future__ import annotations

import pytest

from batchd.model.chunks import Chunk, ChunkError, NodeShape, check_chunk, show_value

SHAPE = NodeShape(
    ncpus=4,
    amounts={"ngpus": 2},
    values={"fast": True, "arch": "x86", "scratch": 4 << 30, "flag": False, "ncount": True},
)


def test_values_are_shown_as_pbs_prints_them() -> None:
    assert (show_value(True), show_value(False)) == ("True", "False")
    assert show_value(4 << 30) == str(4 << 30)  # an integer is a size only when said
    assert show_value(4 << 30, size=True) == "4gb"
    assert show_value("x86", size=True) == "x86"
    assert show_value(False, size=True) == "False"


def test_matching_values_and_large_enough_numbers_fit() -> None:
    chunk = Chunk(ncpus=2, custom=(("arch", "x86"), ("fast", True), ("scratch", 4 << 30)))
    assert check_chunk(chunk, 1, SHAPE, frozenset({"scratch"})) is None  # no ChunkError
    # A consumable amount first does not stop the values after it from being checked.
    assert check_chunk(Chunk(custom=(("ngpus", 2), ("flag", False))), 1, SHAPE) is None


@pytest.mark.parametrize(
    ("custom", "says"),
    [
        (
            (("ngpus", 1), ("arch", "arm")),
            "select: chunk 2 asks for arch=arm; the nodes have arch=x86 (resources_available.arch)",
        ),
        (
            (("fast", False),),
            "select: chunk 2 asks for fast=False; the nodes have fast=True "
            "(resources_available.fast)",
        ),
        (
            (("scratch", (4 << 30) + 1),),
            "select: chunk 2 asks for scratch=4294967297b; the nodes have scratch=4gb "
            "(resources_available.scratch)",
        ),
        (
            (("ncount", 1),),  # a number against a node's True: no count to compare
            "select: chunk 2 asks for ncount=1; the nodes have ncount=True "
            "(resources_available.ncount)",
        ),
        ((("colour", "red"),), "select: chunk 2 asks for colour=red; no node has colour"),
    ],
)
def test_a_value_the_nodes_do_not_have_is_named(
    custom: tuple[tuple[str, bool | int | str], ...], says: str
) -> None:
    with pytest.raises(ChunkError) as refused:
        check_chunk(Chunk(custom=custom), 2, SHAPE, frozenset({"scratch"}))
    assert str(refused.value) == says
