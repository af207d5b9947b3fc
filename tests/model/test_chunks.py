"""PBS sizes, and chunks placed on identical nodes by arrangement, computed by hand."""

from __future__ import annotations

import pytest

from batchd.model.chunks import Chunk, ChunkError, NodeShape, nodes_needed, pack_chunks, parse_place
from batchd.model.sizes import SizeError, format_size, parse_size

GB = 1 << 30
NODE = NodeShape(ncpus=4, mem=8 * GB, amounts={"ngpus": 2}, values={"cpu_type": "x86"})


@pytest.mark.parametrize(
    "text,value",
    [("4gb", 4 * GB), ("4GB", 4 * GB), ("954MB", 954 << 20), ("100", 100), ("100b", 100),
     ("2kw", 2048 * 8), ("1w", 8), ("3g", 3 * GB), ("1tb", 1 << 40), ("1PB", 1 << 50)],
)  # fmt: skip
def test_parse_size(text: str, value: int) -> None:
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["", "gb", "4 gb", "-1gb", "4xb", "1.5gb", "99999999pb"])
def test_parse_size_refuses(text: str) -> None:
    with pytest.raises(SizeError):
        parse_size(text)


@pytest.mark.parametrize(
    "value,text",
    [(4 * GB, "4gb"), (1536 << 20, "1536mb"), (100, "100b"), (0, "0b"), (1024, "1kb")],
)
def test_format_size(value: int, text: str) -> None:
    assert format_size(value) == text
    assert parse_size(text) == value  # round trip


def test_scatter_gives_each_chunk_a_node() -> None:
    chunks = [Chunk(2, ncpus=1), Chunk(1, ncpus=4)]
    assert pack_chunks(chunks, "scatter", NODE) == [[0], [0], [1]]
    assert pack_chunks(chunks, "vscatter", NODE) == [[0], [0], [1]]


def test_free_is_first_fit_in_the_order_asked() -> None:
    # 3 CPUs, 2, 1, 2 on 4-CPU nodes: node 1 takes 3 then 1; node 2 takes 2 and 2.
    chunks = [Chunk(1, ncpus=3), Chunk(1, ncpus=2), Chunk(1, ncpus=1), Chunk(1, ncpus=2)]
    assert pack_chunks(chunks, "free", NODE) == [[0, 2], [1, 3]]
    # Memory counts as much as CPUs: two 5gb chunks do not share an 8gb node.
    assert nodes_needed([Chunk(2, ncpus=1, mem=5 * GB)], "free", NODE) == 2
    # So do consumable custom resources: one GPU left on a node after a 1-GPU chunk.
    gpus = [Chunk(3, ncpus=1, custom=(("ngpus", 1),))]
    assert pack_chunks(gpus, "free", NODE) == [[0, 0], [0]]
    # A node without memory limits packs by CPUs alone.
    assert nodes_needed([Chunk(4, ncpus=2, mem=100 * GB)], "free", NodeShape(ncpus=4)) == 2


def test_pack_puts_everything_on_one_node_or_names_the_limit() -> None:
    assert pack_chunks([Chunk(2, ncpus=2)], "pack", NODE) == [[0, 0]]
    with pytest.raises(ChunkError, match=r"place=pack: the chunks ask for mem=9gb in all; "
                       r"a node has 8gb \(resources_available.mem\)"):  # fmt: skip
        pack_chunks([Chunk(3, ncpus=1, mem=3 * GB)], "pack", NODE)


@pytest.mark.parametrize(
    "chunk,says",
    [
        (Chunk(ncpus=5), "chunk 1 asks for ncpus=5; a node has 4 (resources_available.ncpus)"),
        (Chunk(mem=9 * GB), "chunk 1 asks for mem=9gb; a node has 8gb"),
        (Chunk(custom=(("ngpus", 3),)), "chunk 1 asks for ngpus=3; a node has 2"),
        (
            Chunk(custom=(("cpu_type", "arm"),)),
            "asks for cpu_type=arm; the nodes have cpu_type=x86",
        ),
        (Chunk(custom=(("fast", True),)), "asks for fast=True; no node has fast"),
    ],
)
def test_a_chunk_larger_than_a_node_names_the_limit(chunk: Chunk, says: str) -> None:
    for arrangement in ("free", "pack", "scatter"):
        with pytest.raises(ChunkError, match=says.replace("(", r"\(").replace(")", r"\)")):
            pack_chunks([chunk], arrangement, NODE)


def test_parse_place() -> None:
    place = parse_place("excl:scatter:group=switch")
    assert (place.arrangement, place.sharing, place.group) == ("scatter", "excl", "switch")
    assert place.text("free") == "scatter:excl:group=switch"
    assert parse_place("shared").text("free") == "free:shared"
    for bad in ("spread", "pack:free", "excl:shared", "group="):
        with pytest.raises(ChunkError, match="is not allowed here"):
            parse_place(bad)


def test_chunk_text() -> None:
    chunk = Chunk(2, ncpus=2, mem=4 * GB, mpiprocs=2, custom=(("scratch", GB), ("x", True)))
    assert chunk.text(frozenset({"scratch"})) == "2:ncpus=2:mem=4gb:mpiprocs=2:scratch=1gb:x=True"


SCRATCH = NodeShape(ncpus=4, mem=8 * GB, amounts={"scratch": GB})
SIZES = frozenset({"scratch"})


def test_a_group_needs_a_resource_of_any_length() -> None:
    assert parse_place("group=x").group == "x"


def test_a_place_refusal_says_what_a_place_may_hold() -> None:
    with pytest.raises(ChunkError) as refused:
        parse_place("spread")
    assert str(refused.value) == (
        "place=spread: 'spread' is not allowed here: give at most one arrangement "
        "(free, pack, scatter, vscatter), one sharing (excl, shared, exclhost) and one "
        "group=RESOURCE, joined by ':'"
    )


def test_sizes_are_named_with_their_unit_in_refusals() -> None:
    with pytest.raises(ChunkError) as refused:
        pack_chunks([Chunk(custom=(("scratch", 2 * GB),))], "free", SCRATCH, SIZES)
    assert str(refused.value) == (
        "select: chunk 1 asks for scratch=2gb; a node has 1gb (resources_available.scratch)"
    )
    with pytest.raises(ChunkError) as packed:
        pack_chunks([Chunk(2, custom=(("scratch", 600 << 20),))], "pack", SCRATCH, SIZES)
    assert str(packed.value) == (
        "place=pack: the chunks ask for scratch=1200mb in all; a node has 1gb "
        "(resources_available.scratch)"
    )


def test_pack_names_the_resource_that_is_over_not_one_just_full() -> None:
    # Four CPUs in all fill a node exactly; the memory is what does not fit.
    with pytest.raises(ChunkError, match=r"ask for mem=10gb in all; a node has 8gb"):
        pack_chunks([Chunk(2, ncpus=2, mem=5 * GB)], "pack", NODE)
    with pytest.raises(ChunkError) as refused:
        pack_chunks([Chunk(3, ncpus=2)], "pack", NODE)
    assert str(refused.value) == (
        "place=pack: the chunks ask for ncpus=6 in all; a node has 4 (resources_available.ncpus)"
    )
