"""PNG figures of the utility study: grouped bars of aggregate utility (``charts``).

Drawn with matplotlib's object API on the Agg canvas (no display, no pyplot state).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from batchd_studies.framework.plots import colormap, plain_tick
from batchd_studies.utility.charts import Chart


def draw(chart: Chart, out: Path) -> Path | None:
    """Draw ``chart`` into ``out``; None (and no file) when it has no value."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    if not chart.has_data():
        return None
    fig = Figure(figsize=(8.0, 4.6), layout="constrained")
    ax = fig.subplots()
    colors = colormap("tab10")
    width = 0.8 / max(1, len(chart.series))
    for si, (label, values) in enumerate(chart.series):
        offset = (si - (len(chart.series) - 1) / 2) * width
        xs = [gi + offset for gi, v in enumerate(values) if v is not None]
        ys = [v for v in values if v is not None]
        ax.bar(xs, ys, width=width, color=colors(si % 10), label=label)
    ax.set_xticks(range(len(chart.groups)))
    ax.set_xticklabels(chart.groups)
    ax.set_xlabel(chart.xlabel)
    ax.set_ylabel("aggregate utility (mean of the trials)")
    ax.yaxis.set_major_formatter(FuncFormatter(plain_tick))
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8, ncols=min(3, len(chart.series)))
    path = out / chart.filename
    fig.savefig(path, dpi=100)
    return path


def write_figures(charts: Sequence[Chart], out: Path) -> list[tuple[str, Path | None]]:
    """(caption, PNG or None) of every chart."""
    return [(chart.caption, draw(chart, out)) for chart in charts]
