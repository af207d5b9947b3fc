"""PNG figures of the grid study: ART, makespan and utilization by structure, strategy and grid.

One figure per metric, one subplot per job set; along the x-axis the structures
and strategies (a representative selection of Table 2's runs), one bar per grid
configuration. ART and makespan are drawn on a log scale (overhead models 2 and 4
stretch multi-site jobs by orders of magnitude; the figures show model 1 and 3).
A fourth figure draws ART against p for every overhead model, the normalized
readings of models 2 and 4 included, one subplot per job set and grid.
Drawn with matplotlib's object API on the Agg canvas.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from batchd_studies.framework.plots import colormap, legend_entries
from batchd_studies.grid.tables import Entry, index_results, metric, traces_of
from batchd_studies.grid.variants import (
    FREE_STRATEGIES,
    MEAN_PART,
    NORMALIZED_MODELS,
    OVERFLOW,
    P_VALUES,
    SCHEDULER_NAMES,
    SCHEDULERS,
    STRATEGY_NAMES,
    central,
    decentral,
    hierarchical,
    multisite,
    pool,
)

FIGURES = (
    (
        "fig_art.png",
        "art",
        "ART [s] (log scale)",
        "ART by structure, strategy and grid (smaller is better)",
    ),
    (
        "fig_makespan.png",
        "makespan",
        "makespan [s] (log scale)",
        "Makespan by structure, strategy and grid (smaller is better)",
    ),
    (
        "fig_utilization.png",
        "utilization",
        "utilization [%]",
        "Utilization by structure, strategy and grid (higher is better)",
    ),
)


def figure_variants() -> list[tuple[str, str]]:
    """(short label, variant key) along the x-axis."""
    out = [
        (f"C {SCHEDULER_NAMES[s]}\n{STRATEGY_NAMES[sel]}", central(s, sel).key)
        for s in SCHEDULERS
        for sel in FREE_STRATEGIES
    ]
    out += [
        ("MS m1\np=0.01", multisite("1", "0.01").key),
        ("MS m3\np=0.01", multisite("3", "0.01").key),
    ]
    out += [
        ("H FCFS\nEqualUtil", hierarchical("fcfs", "equalutil-max").key),
        ("H Backfill\nEqualUtil", hierarchical("fcfs-easy", "equalutil-max").key),
        ("H Backfill\nRandom_Max", hierarchical("fcfs-easy", "random-max").key),
        ("D FCFS", decentral("fcfs", "1", "random").key),
        ("D Backfill", decentral("fcfs-easy", "1", "random").key),
        ("P FCFS\nblocked", pool("fcfs", "blocked", "1").key),
        ("P Backfill\nblocked", pool("easy", "blocked", "1").key),
        ("P FCFS\nall", pool("fcfs", "all", "1").key),
        ("P Backfill\nall", pool("easy", "all", "1").key),
        ("P FCFS\noverflow", pool("fcfs", OVERFLOW, "1").key),
        ("P Backfill\noverflow", pool("easy", OVERFLOW, "1").key),
    ]
    return out


OVERHEAD_FIGURE = (
    "fig_overhead.png",
    "ART of multi-site scheduling against p, by overhead model (log scale; 2n and 4n: "
    "models 2 and 4 with r_i in mean parts)",
)


def overhead_series() -> list[tuple[str, list[str]]]:
    """(label, variant keys along P_VALUES) of every overhead model drawn."""
    out = [(f"model {m}", [multisite(m, p).key for p in P_VALUES]) for m in "1234"]
    out += [
        (f"model {m}n", [multisite(m, p, 1, MEAN_PART).key for p in P_VALUES])
        for m in NORMALIZED_MODELS
    ]
    return out


def plot_overhead(results: Sequence[Entry], configs: Sequence[str], path: Path) -> Path | None:
    """ART against p, one line per model, one subplot per job set and grid."""
    from matplotlib.figure import Figure

    index = index_results(results)
    traces = traces_of(results)
    if not traces or not configs:
        return None
    fig = Figure(figsize=(3.4 * len(configs), 2.8 * len(traces) + 0.8), layout="constrained")
    axes = fig.subplots(len(traces), len(configs), squeeze=False)
    colors = colormap("tab10")
    xs = list(range(len(P_VALUES)))  # evenly spaced: 0 and 0.01 apart
    drawn = False
    for ti, trace in enumerate(traces):
        for ci, config in enumerate(configs):
            ax = axes[ti][ci]
            for si, (label, keys) in enumerate(overhead_series()):
                ys = [metric(index, trace, config, k, "art") for k in keys]
                if any(y is None or y <= 0 for y in ys):
                    continue
                drawn = True
                style = "--" if label.endswith("n") else "-"
                ax.plot(xs, ys, style, marker="o", color=colors(si % 10), label=label)
            ax.set_title(f"{trace}, {config}", fontsize=9)
            ax.set_yscale("log")
            ax.set_xticks(xs)
            ax.set_xticklabels(P_VALUES)
            ax.set_xlabel("p")
            if ci == 0:
                ax.set_ylabel("ART [s]")
            ax.grid(True, alpha=0.3)
    if not drawn:
        return None
    handles, labels = legend_entries(axes.ravel())
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
    fig.savefig(path, dpi=100)
    return path


def plot(
    results: Sequence[Entry],
    configs: Sequence[str],
    key: str,
    ylabel: str,
    path: Path,
) -> Path | None:
    """Draw one metric; None (and no file) when no bar has a value."""
    from matplotlib.figure import Figure

    index = index_results(results)
    traces = traces_of(results)
    variants = figure_variants()
    if not traces:
        return None
    fig = Figure(figsize=(15.0, 3.6 * len(traces) + 0.8), layout="constrained")
    axes = fig.subplots(len(traces), 1, squeeze=False).ravel()
    colors = colormap("tab10")
    width = 0.8 / max(1, len(configs))
    drawn = False
    for ax, trace in zip(axes, traces, strict=True):
        for ci, config in enumerate(configs):
            xs, ys = [], []
            for vi, (_, vkey) in enumerate(variants):
                value = metric(index, trace, config, vkey, key)
                if value is not None and value > 0:
                    xs.append(vi + (ci - (len(configs) - 1) / 2) * width)
                    ys.append(100.0 * value if key == "utilization" else value)
            if xs:
                drawn = True
                ax.bar(xs, ys, width=width, color=colors(ci % 10), label=config)
        ax.set_title(trace)
        ax.set_xticks(range(len(variants)))
        ax.set_xticklabels([label for label, _ in variants], fontsize=7)
        ax.set_ylabel(ylabel)
        if key != "utilization":
            ax.set_yscale("log")
        ax.grid(True, axis="y", alpha=0.3)
    if not drawn:
        return None
    handles, labels = legend_entries(axes)
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
    fig.savefig(path, dpi=100)
    return path


def write_figures(
    results: Sequence[Entry], configs: Sequence[str], out: Path
) -> list[tuple[str, Path | None]]:
    """(caption, PNG or None) of every figure."""
    figures = [
        (caption, plot(results, configs, key, ylabel, out / name))
        for name, key, ylabel, caption in FIGURES
    ]
    name, caption = OVERHEAD_FIGURE
    return [*figures, (caption, plot_overhead(results, configs, out / name))]
