"""Figures of the Alternative scorers chapter: one panel per task and sigma sweep, every scorer in
its book colour (:func:`ssa_book.plotting.scorer_color`), one legend per figure."""

from __future__ import annotations

import numpy as np

from ssa_book.alternatives.comparison import panel_label
from ssa_book.icl import figures as icl_figures
from ssa_book.icl import verdicts
from ssa_book.plotting import (
    OTHER_SCORERS_COLOR,
    OTHER_SCORERS_LABEL,
    overlay_color,
    overlay_order,
    scorer_color,
    scorer_label,
)
from ssa.scoring import scorer_names

SIGMA_LABEL = r"$\sigma$ of the shifted quantity (training: 1)"


def shared_legend(fig, scorers, extra_handles=()) -> None:
    """One legend for the whole figure, below the panels: one entry per scorer drawn in its own
    colour, and one for the scorers drawn in grey (:func:`ssa_book.plotting.overlay_color`)."""
    from matplotlib.lines import Line2D

    scorers = list(scorers)
    coloured = [s for s in scorers if overlay_color(s, scorers) != OTHER_SCORERS_COLOR]
    handles = [Line2D([], [], color=scorer_color(s), marker="o", markersize=4, label=scorer_label(s)) for s in coloured]
    if len(coloured) < len(scorers):
        handles.append(
            Line2D(
                [],
                [],
                color=OTHER_SCORERS_COLOR,
                marker="o",
                markersize=4,
                label=f"{OTHER_SCORERS_LABEL} ({len(scorers) - len(coloured)})",
            )
        )
    fig.legend(
        handles=handles + list(extra_handles),
        loc="upper center",
        ncol=min(6, len(handles) + len(extra_handles)),
        fontsize=8,
        frameon=False,
        bbox_to_anchor=(0.5, 0.0),
    )  # below the panels; call after tight_layout


def _panel_axes(axes, panels):
    flat = np.ravel(axes)
    for ax in flat[len(panels) :]:
        ax.set_visible(False)
    return zip(flat, panels)


def plot_errors(fig, axes, runs: dict, panels) -> None:
    """Error against sigma, every scorer's mean with its 95% band and each seed as a thin line, the baselines in grey
    (the ICL chapters' :func:`ssa_book.icl.figures.plot_shift`, one shared legend)."""
    baselines = {}
    for ax, (task, shift) in _panel_axes(axes, panels):
        icl_figures.plot_shift(ax, runs[task], task, shift, title=panel_label(task, shift))
        scorers = {scorer_label(s) for s in runs[task]}
        baselines.update(
            {label: handle for handle, label in zip(*ax.get_legend_handles_labels()) if label not in scorers}
        )
        ax.get_legend().remove()
    shared_legend(fig, list(next(iter(runs.values()))), list(baselines.values()))


def seed_ranks(runs_by_scorer: dict, task: str, shift: str) -> dict[str, np.ndarray]:
    """Each seed's own ranking: ``{scorer: array (seeds, sigmas)}``, rank 1 = the lowest error
    among the scorers of that seed at that sigma (ties share the average rank). Seeds are paired
    across scorers (same batches, same prompts), so seed ``i`` ranks the models of seed ``i``."""
    from scipy.stats import rankdata

    curves = {scorer: verdicts.error_curve(seeds, task, shift) for scorer, seeds in runs_by_scorer.items()}
    count = min(len(curve) for curve in curves.values())
    stacked = np.stack([curve[:count] for curve in curves.values()])  # (scorers, seeds, sigmas)
    ranks = rankdata(stacked, axis=0, method="average")
    return dict(zip(curves, ranks))


def plot_ranks(fig, axes, ranked, panels, runs: dict | None = None) -> None:
    """Rank of each scorer's mean error (1 = lowest) at every sigma of every panel; with ``runs``,
    each seed's own rank (:func:`seed_ranks`) as a small dot beside the line."""
    for ax, (task, shift) in _panel_axes(axes, panels):
        rows = ranked[(ranked["task"] == task) & (ranked["shift"] == shift)]
        per_seed = seed_ranks(runs[task], task, shift) if runs is not None else {}
        scorers = list(dict.fromkeys(rows["scorer"]))
        groups = dict(list(rows.groupby("scorer", sort=False)))
        for index, scorer in enumerate(overlay_order(scorers)):
            group, color = groups[scorer], overlay_color(scorer, scorers)
            ax.plot(group["sigma"], group["rank"], color=color, marker="o", markersize=3, linewidth=1.2, zorder=2)
            if scorer in per_seed:
                # a small horizontal shift per scorer, so that seeds of different scorers at one rank stay apart
                shift_x = 1 + 0.012 * (index - (len(scorers) - 1) / 2)
                for seed_rank in per_seed[scorer]:
                    ax.scatter(
                        np.asarray(group["sigma"]) * shift_x,
                        seed_rank,
                        color=color,
                        zorder=1,
                        s=8,
                        alpha=0.45,
                        linewidths=0,
                    )
        ax.set(title=panel_label(task, shift), xlabel=SIGMA_LABEL, ylabel="rank (1 = lowest error)")
        ax.set_yticks(range(1, rows["scorer"].nunique() + 1))
        ax.invert_yaxis()
    shared_legend(fig, list(ranked["scorer"].unique()))


def plot_entropy(fig, axes, runs: dict, panels) -> None:
    """Normalised attention entropy (mean over layers and heads; 1 = uniform, 0 = one key)
    against sigma, every scorer's mean with its band and each seed as a thin line."""
    for ax, (task, shift) in _panel_axes(axes, panels):
        for scorer in overlay_order(runs[task]):
            seeds = runs[task][scorer]
            sigmas = seeds[0].concentration[shift].sigmas
            icl_figures._band(
                ax,
                sigmas,
                verdicts.head_mean(seeds, shift, "entropy"),
                color=overlay_color(scorer, runs[task]),
                label=scorer_label(scorer),
            )
        ax.set(title=panel_label(task, shift), xlabel=SIGMA_LABEL, ylabel="attention entropy (normalised)")
    shared_legend(fig, list(next(iter(runs.values()))))


def seed_mechanism(seeds: list, task: str, shift: str) -> tuple[np.ndarray, np.ndarray]:
    """Each seed's own entropy drop and error growth from the smallest to the largest sigma (the
    quantities :func:`ssa_book.alternatives.comparison.mechanism_table` takes of the means)."""
    entropy = verdicts.head_mean(seeds, shift, "entropy")
    error = verdicts.error_curve(seeds, task, shift)
    return entropy[:, 0] - entropy[:, -1], error[:, -1] - error[:, 0]


def plot_mechanism(fig, axes, mechanism, correlations: dict, panels, runs: dict | None = None) -> None:
    """Per panel, one point per scorer: how much its attention entropy drops from the smallest
    to the largest sigma against how much its error grows (hollow: did not learn the task); with
    ``runs``, each seed's own point, small, joined to the scorer's mean by a thin line. The title
    gives the rank correlation (:func:`ssa_book.alternatives.comparison.mechanism_correlation`)."""
    for ax, (task, shift) in _panel_axes(axes, panels):
        rows = mechanism[(mechanism["task"] == task) & (mechanism["shift"] == shift)]
        for _, row in rows.iterrows():
            color = scorer_color(row["scorer"])  # hollow: the scorer did not learn the task in distribution
            ax.scatter(
                row["entropy_drop"],
                row["error_growth"],
                s=30,
                edgecolors=color,
                facecolors=color if row["learned"] else "none",
                zorder=3,
            )
            if runs is not None and row["scorer"] in runs.get(task, {}):
                drops, growths = seed_mechanism(runs[task][row["scorer"]], task, shift)
                for drop, growth in zip(drops, growths):
                    ax.plot(
                        [row["entropy_drop"], drop],
                        [row["error_growth"], growth],
                        color=color,
                        linewidth=0.5,
                        alpha=0.35,
                        zorder=1,
                    )
                ax.scatter(drops, growths, s=8, color=color, alpha=0.5, linewidths=0, zorder=2)
        ax.axhline(0, color="grey", linewidth=0.6)
        ax.axvline(0, color="grey", linewidth=0.6)
        correlation = correlations.get((task, shift))
        spearman = "too few scorers for a correlation" if correlation is None else f"Spearman {correlation:+.2f}"
        ax.set(
            title=f"{panel_label(task, shift)}: {spearman}",
            xlabel="entropy drop (smallest to largest σ)",
            ylabel="error growth (smallest to largest σ)",
        )
    shared_legend(fig, list(mechanism["scorer"].unique()))


def plot_cost(ax, cost: dict) -> None:
    """Time per training step and peak memory of each scorer, as multiples of softmax's."""
    scorers = [s for s in scorer_names() if s in cost["scorers"]]  # registry order, as everywhere in the book
    positions = np.arange(len(scorers))
    time_ratio = [cost["scorers"][s]["time_ratio"] for s in scorers]
    memory_ratio = [cost["scorers"][s]["memory_ratio"] or 0.0 for s in scorers]
    ax.bar(positions - 0.2, time_ratio, width=0.4, color=[scorer_color(s) for s in scorers], label="time per step")
    ax.bar(
        positions + 0.2,
        memory_ratio,
        width=0.4,
        color=[scorer_color(s) for s in scorers],
        alpha=0.45,
        hatch="//",
        label="peak memory",
    )
    ax.axhline(1, color="black", linewidth=0.8)
    ax.set_xticks(positions, [scorer_label(s) for s in scorers], rotation=45, ha="right")
    ax.set(
        ylabel="multiple of softmax's", title=f"one training step, batch {cost['batch_size']}, {cost['points']} points"
    )
    ax.legend(fontsize=8)


def plot_paired_differences(fig, axes, comparison, panels, threshold: float) -> None:
    """Per panel, one row per scorer: each seed's paired difference, softmax's error minus the
    scorer's over the shifted sigmas (positive: the scorer is better; one dot per seed), the mean
    (a bar) and its 95% interval (a line; off the axis when it is infinite), the band within
    ``threshold`` of zero shaded; the outcome of the rule at the right
    (:func:`ssa_book.alternatives.comparison.versus_softmax`)."""
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
            ax.annotate(row["outcome"], (1.01, position), xycoords=("axes fraction", "data"), fontsize=8, va="center")
        ax.set_yticks(range(len(rows)), [scorer_label(s) for s in rows.index], fontsize=8)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlim(-limit, limit)
        ax.set(title=panel_label(task, shift), xlabel="softmax's error − the scorer's (> 0: scorer better)")
