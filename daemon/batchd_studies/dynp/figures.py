"""PNG figures of the dynP study (Streit's dynP paper, Figs. 2-5 and 8): a metric over the shrink factor.

One subplot per trace, one line per configuration, every point one replay. The
x-axis runs from the largest shrink factor on the left to the smallest on the
right, as in the paper (more load to the right). Figures are drawn with
matplotlib's object API on the Agg canvas, so no display and no pyplot state.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from batchd_studies.dynp.configs import (
    ADVANCED_ARTWW,
    AS_QUEUED,
    AS_QUEUED_SJF,
    BASIC_DYNP,
    CANDIDATES,
    COMPARISON_CONFIGS,
    DECIDERS,
    EXTRA_QUALITIES,
    PAPER_QUALITIES,
    config_title,
    dynp_label,
)
from batchd_studies.dynp.tables import Result, index_results, shrinks_of, traces_of
from batchd_studies.framework.plots import legend_entries, plain_tick

if TYPE_CHECKING:
    from matplotlib.axes import Axes


@dataclass(frozen=True)
class FigureSpec:
    """One figure: file name, metric key of the summary, axis label, caption, lines."""

    filename: str
    metric: str
    ylabel: str
    caption: str
    configs: tuple[str, ...]
    percent: bool = False


def series(
    results: Sequence[Result], trace: str, config: str, metric: str
) -> tuple[list[float], list[float]]:
    """(shrink factors, values) of one configuration on one trace, largest shrink first."""
    index = index_results(results)
    xs: list[float] = []
    ys: list[float] = []
    for shrink in shrinks_of(results, trace):
        summary = index.get((trace, shrink, config))
        if summary is not None and summary.get(metric) is not None:
            xs.append(shrink)
            ys.append(float(summary[metric]))
    return xs, ys


def plot_metric(
    results: Sequence[Result],
    spec: FigureSpec,
    out_dir: str | Path,
    traces: Sequence[str] | None = None,
) -> Path | None:
    """Draw ``spec`` into ``out_dir``; None (and no file) when no line has a point."""
    from matplotlib.figure import Figure

    traces = list(traces) if traces is not None else traces_of(results)
    lines = {(t, c): series(results, t, c, spec.metric) for t in traces for c in spec.configs}
    if not traces or not any(xs for xs, _ in lines.values()):
        return None
    ncols = min(len(traces), 2)
    nrows = math.ceil(len(traces) / ncols)
    fig = Figure(figsize=(6.0 * ncols, 4.2 * nrows + 0.8), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    scale = 100.0 if spec.percent else 1.0
    for ax, trace in zip(axes, traces, strict=False):
        for config in spec.configs:
            xs, ys = lines[(trace, config)]
            if xs:
                ys = [y * scale for y in ys]
                ax.plot(xs, ys, label=config_title(config), **line_style(config))
        _style_axes(ax, trace, spec.ylabel, shrinks_of(results, trace))
    for ax in axes[len(traces) :]:
        ax.set_visible(False)
    handles, labels = legend_entries(axes)
    fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 4))
    path = Path(out_dir) / spec.filename
    fig.savefig(path, dpi=110)
    return path


# (colour, marker, line style) of the comparison lines; basic dynP is dashed because it
# often coincides with one single policy.
_FIXED = {
    "fcfs-cons": ("tab:blue", "o", "-"),
    "sjf-cons": ("tab:green", "^", "-"),
    "ljf-cons": ("tab:red", "v", "-"),
    BASIC_DYNP: ("tab:gray", "D", "--"),
}
# ARTwW, ART, MS, SLDwW, AWT; dynP advanced ARTwW is black in every figure.
_QUALITY_COLORS = ("black", "tab:orange", "tab:purple", "tab:brown", "tab:pink")
# The other FCFS candidates of dynP with quality ARTwW (sorted is black, above).
_CANDIDATE_COLORS = {AS_QUEUED: "tab:olive", AS_QUEUED_SJF: "tab:cyan"}


def line_style(config: str) -> dict[str, object]:
    """Matplotlib style of a configuration's line, the same in every figure.

    In Figs. 2/3 colour is the quality metric and the simple decider is dashed.
    """
    style: dict[str, object] = {"marker": "o", "markersize": 4, "linewidth": 1.5}
    qualities = (*PAPER_QUALITIES, *EXTRA_QUALITIES)
    for i, quality in enumerate(qualities):
        for decider in DECIDERS:
            if config == dynp_label(decider, quality):
                style["color"] = _QUALITY_COLORS[i % len(_QUALITY_COLORS)]
                style["linestyle"] = "--" if decider == "simple" else "-"
                style["marker"] = "s" if decider == "simple" else "o"
    for candidate, color in _CANDIDATE_COLORS.items():
        for decider in DECIDERS:
            if config == dynp_label(decider, "artww", candidate):
                style["color"] = color
                style["linestyle"] = "--" if decider == "simple" else "-"
                style["marker"] = "s" if decider == "simple" else "o"
    if config in _FIXED:
        style["color"], style["marker"], style["linestyle"] = _FIXED[config]
    if config == ADVANCED_ARTWW:
        style["linewidth"] = 2.2
    return style


def _style_axes(ax: Axes, trace: str, ylabel: str, shrinks: Sequence[float]) -> None:
    ax.set_title(trace)
    if 0 < len(shrinks) <= 16:
        ax.set_xticks(list(shrinks))
    ax.set_xlabel("shrinking factor")
    ax.set_ylabel(ylabel)
    if not ax.xaxis_inverted():
        ax.invert_xaxis()
    from matplotlib.ticker import FuncFormatter

    ax.yaxis.set_major_formatter(FuncFormatter(plain_tick))
    ax.grid(True, alpha=0.3)


def dynp_configs(results: Sequence[Result]) -> tuple[str, ...]:
    """Self-tuning dynP configurations present, in the paper's order (decider x quality)."""
    present = {r["config"] for r in results}
    qualities = (*PAPER_QUALITIES, *EXTRA_QUALITIES)
    order = [dynp_label(d, q) for q in qualities for d in DECIDERS]
    return tuple(c for c in order if c in present)


def candidate_configs(results: Sequence[Result]) -> tuple[str, ...]:
    """FCFS and SJF cons. and dynP (quality ARTwW, both deciders) per FCFS candidate, when
    a candidate other than the default was run; else none."""
    present = {r["config"] for r in results}
    dynp = [dynp_label(d, "artww", c) for c in CANDIDATES for d in DECIDERS]
    if present.isdisjoint(c for c in dynp if c not in (ADVANCED_ARTWW, SIMPLE_ARTWW)):
        return ()
    return tuple(c for c in ("fcfs-cons", "sjf-cons", *dynp) if c in present)


SIMPLE_ARTWW = dynp_label("simple", "artww")


def figure_specs(results: Sequence[Result]) -> list[FigureSpec]:
    """The study's figures: Fig. 2/3 over the dynP variants, Figs. 4/5/8 over the comparison,
    and with another FCFS candidate, the deciders' ARTwW per candidate."""
    variants = dynp_configs(results)
    candidates = candidate_configs(results)
    extra = [
        FigureSpec(
            "fig_candidates_artww.png",
            "artww",
            "ARTwW [s]",
            "ARTwW of self-tuning dynP (quality ARTwW), simple (dashed) and advanced decider "
            "per FCFS candidate, with FCFS and SJF cons. (smaller is better)",
            candidates,
        )
    ]
    return [
        FigureSpec(
            "fig2_artww_quality.png",
            "artww",
            "ARTwW [s]",
            "Fig. 2: ARTwW of self-tuning dynP, simple vs advanced decider per quality metric "
            "(smaller is better)",
            variants,
        ),
        FigureSpec(
            "fig3_sldww60_quality.png",
            "sldww60",
            "SLDwW60",
            "Fig. 3: SLDwW60 of self-tuning dynP, simple vs advanced decider per quality metric "
            "(smaller is better)",
            variants,
        ),
        FigureSpec(
            "fig4_artww.png",
            "artww",
            "ARTwW [s]",
            "Fig. 4: ARTwW of FCFS/SJF/LJF with conservative backfilling, basic dynP "
            "(7200 s / 9000 s) and dynP advanced ARTwW (smaller is better)",
            COMPARISON_CONFIGS,
        ),
        FigureSpec(
            "fig5_sldww60.png",
            "sldww60",
            "SLDwW60",
            "Fig. 5: SLDwW60, same configurations as Fig. 4 (smaller is better)",
            COMPARISON_CONFIGS,
        ),
        FigureSpec(
            "fig8_utilization.png",
            "utilization",
            "utilization [%]",
            "Fig. 8: utilization, same configurations as Fig. 4 (higher is better)",
            COMPARISON_CONFIGS,
            percent=True,
        ),
        *(extra if candidates else []),
    ]


def write_figures(
    results: Sequence[Result], out_dir: str | Path, traces: Sequence[str] | None = None
) -> list[tuple[FigureSpec, Path | None]]:
    """Draw every figure; a figure without any data point is skipped (path None)."""
    return [
        (spec, plot_metric(results, spec, out_dir, traces) if spec.configs else None)
        for spec in figure_specs(results)
    ]
