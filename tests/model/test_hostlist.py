"""Host lists in Slurm's compressed form, worked out by hand from Slurm's rules."""

from __future__ import annotations

import pytest

from batchd.model.hostlist import compress


@pytest.mark.parametrize(
    ("names", "text"),
    [
        ([], ""),
        (["n1"], "n1"),
        (["login"], "login"),
        # sorted and made unique first
        (["node003", "node001", "node002", "node005", "node001"], "node[001-003,005]"),
        (["node001", "node100"], "node[001,100]"),  # as wide as the padding: joins it
        (["n9", "n10"], "n[9-10]"),  # no padding: any width
        (["n01", "n1"], "n01,n1"),  # padded and unpadded stay apart
        (["a1", "a2", "a3", "b7", "a5", "a6"], "a[1-3,5-6],b7"),
        (["login1", "node01", "node02", "login"], "login,login1,node[01-02]"),
        (["x1", "x3", "x5"], "x[1,3,5]"),
    ],
)
def test_compress(names: list[str], text: str) -> None:
    assert compress(names) == text
