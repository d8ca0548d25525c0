"""Figures of the Alternative scorers chapter: one panel per task and sigma sweep, every scorer in
its book colour (:func:`ssa.plotting.scorer_color`), one legend per figure."""

from __future__ import annotations

import numpy as np

from ssa.alternatives.comparison import panel_label
from ssa.icl import figures as icl_figures
from ssa.icl import verdicts
from ssa.plotting import scorer_color, scorer_label
from ssa.scoring import scorer_names

SIGMA_LABEL = r"$\sigma$ of the shifted quantity (training: 1)"


def shared_legend(fig, scorers, extra_handles=()) -> None:
    """One legend for the whole figure, below the panels, one entry per scorer."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=scorer_color(s), marker="o", markersize=4, label=scorer_label(s)) for s in scorers]
    fig.legend(handles=handles + list(extra_handles), loc="upper center", ncol=min(6, len(handles) + len(extra_handles)),
               fontsize=8, frameon=False, bbox_to_anchor=(0.5, 0.0))  # below the panels; call after tight_layout


def _panel_axes(axes, panels):
    flat = np.ravel(axes)
    for ax in flat[len(panels):]:
        ax.set_visible(False)
    return zip(flat, panels)


def plot_errors(fig, axes, runs: dict, panels) -> None:
    """Error against sigma, every scorer with its 95% band over seeds, the baselines in grey
    (the ICL chapters' :func:`ssa.icl.figures.plot_shift`, one shared legend)."""
    baselines = {}
    for ax, (task, shift) in _panel_axes(axes, panels):
        icl_figures.plot_shift(ax, runs[task], task, shift, title=panel_label(task, shift))
        scorers = {scorer_label(s) for s in runs[task]}
        baselines.update({label: handle for handle, label in zip(*ax.get_legend_handles_labels()) if label not in scorers})
        ax.get_legend().remove()
    shared_legend(fig, list(next(iter(runs.values()))), list(baselines.values()))

def plot_ranks(fig, axes, ranked, panels) -> None:
    """Rank of each scorer's mean error (1 = lowest) at every sigma of every panel."""
    for ax, (task, shift) in _panel_axes(axes, panels):
        rows = ranked[(ranked["task"] == task) & (ranked["shift"] == shift)]
        for scorer, group in rows.groupby("scorer", sort=False):
            ax.plot(group["sigma"], group["rank"], color=scorer_color(scorer), marker="o", markersize=3, linewidth=1.2)
        ax.set(title=panel_label(task, shift), xlabel=SIGMA_LABEL, ylabel="rank (1 = lowest error)")
        ax.set_yticks(range(1, rows["scorer"].nunique() + 1))
        ax.invert_yaxis()
    shared_legend(fig, list(ranked["scorer"].unique()))


def plot_entropy(fig, axes, runs: dict, panels) -> None:
    """Normalised attention entropy (mean over layers and heads; 1 = uniform, 0 = one key)
    against sigma, every scorer with its band over seeds."""
    for ax, (task, shift) in _panel_axes(axes, panels):
        for scorer, seeds in runs[task].items():
            sigmas = seeds[0]["concentration"][shift]["sigmas"]
            icl_figures._band(ax, sigmas, verdicts.head_mean(seeds, shift, "entropy"), color=scorer_color(scorer), label=scorer_label(scorer))
        ax.set(title=panel_label(task, shift), xlabel=SIGMA_LABEL, ylabel="attention entropy (normalised)")
    shared_legend(fig, list(next(iter(runs.values()))))


def plot_mechanism(fig, axes, mechanism, correlations: dict, panels) -> None:
    """Per panel, one point per scorer: how much its attention entropy drops from the smallest
    to the largest sigma against how much its error grows (hollow: did not learn the task); the
    title gives the rank correlation (:func:`ssa.alternatives.comparison.mechanism_correlation`)."""
    for ax, (task, shift) in _panel_axes(axes, panels):
        rows = mechanism[(mechanism["task"] == task) & (mechanism["shift"] == shift)]
        for _, row in rows.iterrows():
            color = scorer_color(row["scorer"])  # hollow: the scorer did not learn the task in distribution
            ax.scatter(row["entropy_drop"], row["error_growth"], s=30, edgecolors=color, facecolors=color if row["learned"] else "none")
        ax.axhline(0, color="grey", linewidth=0.6)
        ax.axvline(0, color="grey", linewidth=0.6)
        correlation = correlations.get((task, shift))
        spearman = "too few scorers for a correlation" if correlation is None else f"Spearman {correlation:+.2f}"
        ax.set(title=f"{panel_label(task, shift)}: {spearman}",
               xlabel="entropy drop (smallest to largest σ)", ylabel="error growth (smallest to largest σ)")
    shared_legend(fig, list(mechanism["scorer"].unique()))


def plot_cost(ax, cost: dict) -> None:
    """Time per training step and peak memory of each scorer, as multiples of softmax's."""
    scorers = [s for s in scorer_names() if s in cost["scorers"]]  # registry order, as everywhere in the book
    positions = np.arange(len(scorers))
    time_ratio = [cost["scorers"][s]["time_ratio"] for s in scorers]
    memory_ratio = [cost["scorers"][s]["memory_ratio"] or 0.0 for s in scorers]
    ax.bar(positions - 0.2, time_ratio, width=0.4, color=[scorer_color(s) for s in scorers], label="time per step")
    ax.bar(positions + 0.2, memory_ratio, width=0.4, color=[scorer_color(s) for s in scorers], alpha=0.45, hatch="//", label="peak memory")
    ax.axhline(1, color="black", linewidth=0.8)
    ax.set_xticks(positions, [scorer_label(s) for s in scorers], rotation=45, ha="right")
    ax.set(ylabel="multiple of softmax's", title=f"one training step, batch {cost['batch_size']}, {cost['points']} points")
    ax.legend(fontsize=8)


def plot_paired_differences(fig, axes, comparison, panels, threshold: float) -> None:
    """Per panel, one row per scorer: each seed's paired difference, softmax's error minus the
    scorer's over the shifted sigmas (positive: the scorer is better; one dot per seed), the mean
    (a bar) and its 95% interval (a line; off the axis when it is infinite), the band within
    ``threshold`` of zero shaded; the outcome of the rule at the right
    (:func:`ssa.alternatives.comparison.versus_softmax`)."""
    for ax, (task, shift) in _panel_axes(axes, panels):
        rows = comparison[(comparison["task"] == task) & (comparison["shift"] == shift)]
        rows = rows.set_index("scorer").reindex([s for s in scorer_names() if s in set(rows["scorer"])])
        spread = [abs(d) for row in rows["differences"] for d in row] + [threshold]
        limit = 1.15 * max(spread)
        ax.axvspan(-threshold, threshold, color="0.92", zorder=0)
        ax.axvline(0, color="grey", linewidth=0.8)
        for position, (scorer, row) in enumerate(rows.iterrows()):
            color = scorer_color(scorer)
            ax.scatter(row["differences"], [position] * len(row["differences"]), s=16, color=color, alpha=0.8, zorder=3)
            if row["differences"]:
                low, high = (np.clip(row[k], -limit, limit) for k in ("low", "high"))
                ax.plot([low, high], [position, position], color=color, linewidth=1.2, zorder=2)
                ax.plot([row["effect"]] * 2, [position - 0.3, position + 0.3], color=color, linewidth=2, zorder=2)
            ax.annotate(row["outcome"], (1.01, position), xycoords=("axes fraction", "data"), fontsize=7, va="center")
        ax.set_yticks(range(len(rows)), [scorer_label(s) for s in rows.index], fontsize=8)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlim(-limit, limit)
        ax.set(title=panel_label(task, shift), xlabel="softmax's error − the scorer's (> 0: scorer better)")
