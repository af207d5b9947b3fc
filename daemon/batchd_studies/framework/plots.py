"""Matplotlib details the studies' figures share; matplotlib loads only when one is drawn."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.colors import Colormap


def plain_tick(value: float, _pos: int | None = None) -> str:
    """Plain tick labels: 1,600,000 rather than 1.6 with an offset of 1e6."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:g}"


def legend_entries(axes: Iterable[Axes]) -> tuple[list[Artist], list[str]]:
    """One legend entry per label over all subplots, in order of first appearance."""
    seen: dict[str, Artist] = {}
    for ax in axes:
        handles, labels = ax.get_legend_handles_labels()
        for handle, label in zip(handles, labels, strict=True):
            seen.setdefault(label, handle)
    return list(seen.values()), list(seen)


def colormap(name: str) -> Colormap:
    from matplotlib import colormaps

    return colormaps[name]
