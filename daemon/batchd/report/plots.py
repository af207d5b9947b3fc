"""PNG figures of ``batchd report primetime`` (seed 001, Figs. 1-6).

A metric over the prime-time runtime limit (x) with one line per jobsize limit,
or a heatmap runtime x jobsize limit. A panel is (title, {(runtime limit %,
jobsize limit %): value or None}). Drawn with matplotlib's object API on the Agg
canvas, so no display and no pyplot state.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from batchd.report.framework.plots import colormap, legend_entries, plain_tick

LimitGrid = dict[tuple[int, int], float | None]


def _limits(grid: LimitGrid) -> tuple[list[int], list[int]]:
    runtimes = sorted({rt for rt, _ in grid})
    jobsizes = sorted({js for _, js in grid})
    return runtimes, jobsizes


def plot_limit_lines(
    panels: Sequence[tuple[str, LimitGrid]],
    path: str | Path,
    ylabel: str,
    *,
    log: bool = False,
    percent: bool = False,
    mark_single: bool = False,
    title: str | None = None,
) -> Path | None:
    """One subplot per panel: x = runtime limit, one line per jobsize limit.

    ``mark_single`` marks the single-queue case (100/100) with a star and a dashed
    line across the panel. None (and no file) when no panel has a value.
    """
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    if not any(v is not None for _, grid in panels for v in grid.values()):
        return None
    scale = 100.0 if percent else 1.0
    fig = Figure(figsize=(6.0 * len(panels), 4.8), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False).ravel()
    cmap = colormap("viridis")
    for ax, (name, grid) in zip(axes, panels, strict=True):
        runtimes, jobsizes = _limits(grid)
        for i, js in enumerate(jobsizes):
            points = [(rt, grid.get((rt, js))) for rt in runtimes]
            xs = [rt for rt, v in points if v is not None and (not log or v > 0)]
            ys = [scale * float(v) for _, v in points if v is not None and (not log or v > 0)]
            if xs:
                color = cmap(i / max(1, len(jobsizes) - 1))
                ax.plot(xs, ys, marker="o", markersize=3.5, linewidth=1.4, color=color,
                        label=f"jobsize limit {js}%")  # fmt: skip
        single = grid.get((100, 100))
        if mark_single and single is not None and (not log or single > 0):
            ax.axhline(scale * single, color="tab:red", linestyle="--", linewidth=1.0)
            ax.plot([100], [scale * single], marker="*", markersize=14, color="tab:red",
                    linestyle="none", label="single queue (100/100)")  # fmt: skip
        ax.set_title(name)
        ax.set_xlabel("prime-time runtime limit [% of the prime slot]")
        ax.set_ylabel(ylabel)
        if runtimes:
            ax.set_xticks(runtimes)
        if log:
            ax.set_yscale("log")
        else:
            ax.yaxis.set_major_formatter(FuncFormatter(plain_tick))
        ax.grid(True, alpha=0.3, which="both" if log else "major")
    handles, labels = legend_entries(axes)
    fig.legend(handles, labels, loc="outside right center", fontsize="small")
    if title:
        fig.suptitle(title)
    out = Path(path)
    fig.savefig(out, dpi=80)
    return out


def plot_limit_heatmaps(
    rows: Sequence[tuple[str, Sequence[tuple[str, LimitGrid]]]],
    path: str | Path,
    label: str,
    *,
    log: bool = True,
    title: str | None = None,
) -> Path | None:
    """A grid of heatmaps, rows x panels: runtime limit (x) by jobsize limit (y).

    Every heatmap has its own colour bar (a log scale when ``log``); cells without a
    value stay blank.
    """
    import numpy as np
    from matplotlib.colors import LogNorm, Normalize
    from matplotlib.figure import Figure

    cells = [v for _, panels in rows for _, g in panels for v in g.values() if v is not None]
    if not rows or not cells:
        return None
    ncols = max(len(panels) for _, panels in rows)
    fig = Figure(figsize=(3.9 * ncols, 3.5 * len(rows) + 0.6), layout="constrained")
    axes = fig.subplots(len(rows), ncols, squeeze=False)
    for r, (row_name, panels) in enumerate(rows):
        for c in range(ncols):
            ax = axes[r][c]
            if c >= len(panels):
                ax.set_visible(False)
                continue
            name, grid = panels[c]
            runtimes, jobsizes = _limits(grid)
            data = np.full((len(jobsizes), len(runtimes)), np.nan)
            for (rt, js), v in grid.items():
                if v is not None and (not log or v > 0):
                    data[jobsizes.index(js), runtimes.index(rt)] = float(v)
            finite = data[np.isfinite(data)]
            if finite.size == 0:
                ax.set_visible(False)
                continue
            lo, hi = float(finite.min()), float(finite.max())
            norm = LogNorm(lo, max(hi, lo * 1.0001)) if log else Normalize(lo, max(hi, lo + 1e-9))
            image = ax.imshow(data, origin="lower", cmap="viridis", norm=norm, aspect="auto")
            fig.colorbar(image, ax=ax, shrink=0.85)
            ax.set_xticks(range(len(runtimes)), [str(x) for x in runtimes], fontsize=7)
            ax.set_yticks(range(len(jobsizes)), [str(y) for y in jobsizes], fontsize=7)
            ax.set_xlabel("runtime limit [%]", fontsize=8)
            ax.set_ylabel("jobsize limit [%]", fontsize=8)
            ax.set_title(f"{row_name}: {name}", fontsize=9)
    fig.suptitle(title or label)
    out = Path(path)
    fig.savefig(out, dpi=80)
    return out
