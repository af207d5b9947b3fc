"""PNG figures of the moldable study: turnaround by effective load (lines) and by job
size (grouped bars), drawn with matplotlib's object API on the Agg canvas."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from batchd.metrics.moldable import CATEGORIES
from batchd_studies.framework.plots import colormap, plain_tick
from batchd_studies.moldable.index import Index
from batchd_studies.moldable.plan import Scheduler
from batchd_studies.moldable.tables import A_TITLES


@dataclass(frozen=True)
class Figure:
    filename: str
    caption: str
    a: str
    scheds: tuple[Scheduler, ...]
    load: float | None = None  # a category figure's load; None: a figure over the loads


def _lines(
    fig_spec: Figure,
    index: Index,
    loads: Sequence[float],
    effective: Mapping[float, float],
    out: Path,
) -> Path | None:
    from matplotlib.figure import Figure as MplFigure
    from matplotlib.ticker import FuncFormatter

    fig = MplFigure(figsize=(7.5, 4.4), layout="constrained")
    ax = fig.subplots()
    colors = colormap("tab10")
    drawn = False
    for si, s in enumerate(fig_spec.scheds):
        points = [
            (effective[load], index.turnaround(fig_spec.a, load, s.key))
            for load in loads
            if load in effective
        ]
        xs = [x for x, y in points if y is not None]
        ys = [y / 3600 for _, y in points if y is not None]
        if xs:
            style = "-" if s.fairshare else "--"
            ax.plot(xs, ys, style, marker="o", color=colors(si % 10), label=s.label)
            drawn = True
    if not drawn:
        return None
    ax.set_xlabel("effective load")
    ax.set_ylabel("average turnaround (hours)")
    ax.yaxis.set_major_formatter(FuncFormatter(plain_tick))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(A_TITLES[fig_spec.a], fontsize=10)
    path = out / fig_spec.filename
    fig.savefig(path, dpi=100)
    return path


def _bars(fig_spec: Figure, index: Index, out: Path) -> Path | None:
    from matplotlib.figure import Figure as MplFigure
    from matplotlib.ticker import FuncFormatter

    assert fig_spec.load is not None
    names = [name for name, _ in CATEGORIES]
    fig = MplFigure(figsize=(8.0, 4.4), layout="constrained")
    ax = fig.subplots()
    colors = colormap("tab10")
    width = 0.8 / max(1, len(fig_spec.scheds))
    drawn = False
    for si, s in enumerate(fig_spec.scheds):
        offset = (si - (len(fig_spec.scheds) - 1) / 2) * width
        values = [index.turnaround(fig_spec.a, fig_spec.load, s.key, name) for name in names]
        xs = [gi + offset for gi, v in enumerate(values) if v is not None]
        ys = [v / 3600 for v in values if v is not None]
        if xs:
            ax.bar(xs, ys, width=width, color=colors(si % 10), label=s.label)
            drawn = True
    if not drawn:
        return None
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names)
    ax.set_xlabel("job size (processor-seconds on the requested width)")
    ax.set_ylabel("average turnaround (hours, log scale)")
    ax.yaxis.set_major_formatter(FuncFormatter(plain_tick))
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8, ncols=2)
    ax.set_title(f"{A_TITLES[fig_spec.a]}, offered load {fig_spec.load:g}", fontsize=10)
    path = out / fig_spec.filename
    fig.savefig(path, dpi=100)
    return path


def draw(
    figures: Sequence[Figure],
    index: Index,
    loads: Sequence[float],
    effective: Mapping[str, Mapping[float, float]],
    out: Path,
) -> list[tuple[str, Path | None]]:
    """(caption, PNG or None) of every figure; None when it has no value to draw."""
    drawn: list[tuple[str, Path | None]] = []
    for spec in figures:
        if spec.load is None:
            drawn.append((spec.caption, _lines(spec, index, loads, effective[spec.a], out)))
        else:
            drawn.append((spec.caption, _bars(spec, index, out)))
    return drawn
