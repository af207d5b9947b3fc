"""PNG figures of the prime-time study (Lo and Mache's prime-time paper, Figs. 1-6) and an overview heatmap.

A metric over the prime-time runtime limit (x) with one line per jobsize limit, or
a heatmap runtime x jobsize limit. A panel is (title, {(runtime limit %, jobsize
limit %): value or None}). Drawn with matplotlib's object API on the Agg canvas.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from batchd_studies.framework.plots import colormap, legend_entries, plain_tick
from batchd_studies.primetime.tables import (
    Grid,
    LimitKey,
    SweepKey,
    discipline_title,
    easy_first,
    metric_grid,
)

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
                label = f"jobsize limit {js}%"
                ax.plot(xs, ys, marker="o", markersize=3.5, linewidth=1.4, color=color, label=label)
        single = grid.get((100, 100))
        if mark_single and single is not None and (not log or single > 0):
            ax.axhline(scale * single, color="tab:red", linestyle="--", linewidth=1.0)
            ax.plot(
                [100],
                [scale * single],
                marker="*",
                markersize=14,
                color="tab:red",
                linestyle="none",
                label="single queue (100/100)",
            )
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


@dataclass(frozen=True)
class FigureOut:
    caption: str
    path: Path | None


def span_utilization(extra: Mapping[LimitKey, Any], window: str) -> dict[LimitKey, float | None]:
    """Utilization of a window over the submission span only, from the entries' extras."""
    return {k: (e or {}).get("utilization_submit_span", {}).get(window) for k, e in extra.items()}


def write_figures(
    out: Path,
    trace: str,
    sizes: Sequence[int],
    disciplines: Sequence[str],
    gridmap: Mapping[SweepKey, Grid],
    extra: Mapping[SweepKey, Mapping[LimitKey, Any]],
) -> list[FigureOut]:
    """Figs. 1-6 at the smallest size (the heaviest load); the overview at every size."""
    n = min(sizes)
    order = easy_first(disciplines)

    def panels(cls: str, metric: str, ds: Sequence[str] = order) -> list[tuple[str, LimitGrid]]:
        return [
            (
                f"{discipline_title(d)}, {n} nodes",
                metric_grid(gridmap.get((trace, n, d), {}), cls, metric),
            )
            for d in ds
        ]

    def span_panels(window: str) -> list[tuple[str, LimitGrid]]:
        return [
            (
                f"{discipline_title(d)}, {n} nodes",
                span_utilization(extra.get((trace, n, d), {}), window),
            )
            for d in order
        ]

    def lines(
        caption: str,
        data: Sequence[tuple[str, LimitGrid]],
        stem: str,
        ylabel: str,
        *,
        log: bool = False,
        percent: bool = False,
        mark_single: bool = False,
    ) -> FigureOut:
        path = out / f"{trace}_{stem}.png"
        plotted = plot_limit_lines(
            data, path, ylabel, log=log, percent=percent, mark_single=mark_single
        )
        return FigureOut(f"{trace}{caption}", plotted)

    util = "utilization [%]"
    resp = "average response time [s]"
    figs = [
        lines(
            ", Fig. 1: average response time of small jobs (prime queue) over the runtime "
            "limit, one line per jobsize limit (log scale)",
            panels("prime", "art"),
            "fig1_resptime_prime",
            resp,
            log=True,
        ),
        lines(
            ", Fig. 2: average response time of large jobs (non-prime queue)",
            panels("nonprime", "art"),
            "fig2_resptime_nonprime",
            resp,
            log=True,
        ),
        lines(
            ", Fig. 3: utilization during prime hours (whole schedule, first submission to "
            "last end)",
            panels("prime", "utilization"),
            "fig3_util_prime",
            util,
            percent=True,
        ),
        lines(
            ", Fig. 4: utilization during non-prime hours (whole schedule)",
            panels("nonprime", "utilization"),
            "fig4_util_nonprime",
            util,
            percent=True,
        ),
        lines(
            ", Fig. 3 over the submission span only (no drain): utilization during prime hours",
            span_panels("prime"),
            "fig3b_util_prime_submit_span",
            util,
            percent=True,
        ),
        lines(
            ", Fig. 4 over the submission span only (no drain): utilization during non-prime hours",
            span_panels("nonprime"),
            "fig4b_util_nonprime_submit_span",
            util,
            percent=True,
        ),
        lines(
            ", Figs. 5 and 6: average slowdown of all jobs, FCFS and EASY; the star and the "
            "dashed line are one queue (100/100)",
            panels("all", "slowdown", sorted(order)),
            "fig5_slowdown_all",
            "average slowdown",
            log=True,
            mark_single=True,
        ),
    ]
    if len(sizes) > 1:
        figs.append(_overview(out, trace, sizes, order, gridmap))
    return figs


def _overview(
    out: Path,
    trace: str,
    sizes: Sequence[int],
    order: Sequence[str],
    gridmap: Mapping[SweepKey, Grid],
) -> FigureOut:
    """Small and large jobs' response time at every machine size, as heatmaps."""
    rows = []
    for m in sizes:
        cells = []
        for d in order:
            grid = gridmap.get((trace, m, d), {})
            cells += [
                (f"{discipline_title(d)} small", metric_grid(grid, "prime", "art")),
                (f"{discipline_title(d)} large", metric_grid(grid, "nonprime", "art")),
            ]
        rows.append((f"{m} nodes", cells))
    path = out / f"{trace}_fig_overview_resptime.png"
    return FigureOut(
        f"{trace}: average response time [s] of small and large jobs at every machine size "
        "(x: runtime limit, y: jobsize limit, log colour scale)",
        plot_limit_heatmaps(rows, path, "average response time [s]"),
    )
