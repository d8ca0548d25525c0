"""Figures and tables of the in-context-learning chapters, from cached results.

Every function takes ``runs``: ``{scorer: [run of each seed]}``, typed records
(:class:`ssa_book.icl.records.ICLRun`) as :func:`ssa_book.icl.experiments.load_runs` returns them, and draws the mean over seeds with its 95% bootstrap band
(:func:`ssa_book.icl.evaluate.bootstrap_band`) and each seed as a thin line; baselines are drawn
dashed, in grey.
"""

from __future__ import annotations

import textwrap

import numpy as np

from ssa_book.icl.evaluate import bootstrap_band
from ssa_book.icl.tasks import FIRST_SCORED, get_task
from ssa_book.verdicts.words import OPEN
from ssa_book.icl.verdicts import error_curve, length_curve
from ssa_book.plotting import (
    overlay_color,
    overlay_order,
    plot_mean_and_seeds,
    scorer_color,
    scorer_label,
    seed_style,
    variant_shade,
)
from ssa_book.icl.study.design import ARMS

# What each shift scales, as the book writes its sigma: "σ of x = 10".
SHIFTED = {"sigma_x": "x", "sigma_ab": "a, b"}
BASELINE_STYLES = {"least squares": ":", "zero": "--", "exact rule": ":", "majority class": "--"}


def _band(ax, x, values, *, color, label, marker="o"):
    """Mean over seeds with its bootstrap band, and each seed as a thin line
    (:func:`ssa_book.plotting.plot_mean_and_seeds`): with three seeds the band alone hides whether the
    seeds agree or split."""
    band = bootstrap_band(values)
    plot_mean_and_seeds(ax, x, values, color=color, label=label, marker=marker)
    ax.fill_between(x, band["low"], band["high"], color=color, alpha=0.15, linewidth=0)


def error_label(task: str, normalise: bool = True) -> str:
    if get_task(task).classification:
        return "prompt error (any wrong from point 3 on)"
    return "normalised MSE (model / zero predictor)" if normalise else "MSE from point 3 on"


def _baselines(runs: dict, curve) -> dict[str, np.ndarray]:
    first = next(iter(runs.values()))
    names = first[0].sweep("sigma_x").baselines
    # Baselines see the same prompts in every run: one seed's values are theirs.
    return {name: curve(first[:1], name)[0] for name in names}


def plot_shift(
    ax, runs: dict, task: str, shift: str = "sigma_x", title: str | None = None, normalise: bool = True
) -> None:
    """Error against sigma, per scorer, with the baselines (linear: normalised by the zero
    predictor, or the raw MSE on a log scale with ``normalise=False``)."""
    sigmas = next(iter(runs.values()))[0].sweep(shift).values
    for scorer in overlay_order(runs):
        _band(
            ax,
            sigmas,
            error_curve(runs[scorer], task, shift, normalise=normalise),
            color=overlay_color(scorer, runs),
            label=scorer_label(scorer),
        )
    for name, values in _baselines(runs, lambda r, p: error_curve(r, task, shift, p, normalise=normalise)).items():
        if (
            normalise or get_task(task).classification or name == "zero"
        ):  # exact baselines have raw error ~0: invisible on a log scale
            ax.plot(sigmas, values, color="grey", linestyle=BASELINE_STYLES.get(name, "--"), label=name)
    if not (normalise or get_task(task).classification):
        ax.set_yscale("log")
    ax.set(
        xlabel={"sigma_x": r"$\sigma$ of x (x ~ N(0, $\sigma^2$))", "sigma_ab": r"$\sigma$ of a, b"}.get(shift, shift),
        ylabel=error_label(task, normalise),
        title=title,
    )
    ax.legend(fontsize=8)


def plot_length(ax, runs: dict, task: str, trained_points: int, title: str | None = None) -> None:
    """Error against prompt length at sigma 1, with the longest trained prompt marked."""
    lengths = next(iter(runs.values()))[0].length.values
    for scorer, seeds in runs.items():
        _band(ax, lengths, length_curve(seeds, task), color=scorer_color(scorer), label=scorer_label(scorer))
    for name, values in _baselines(runs, lambda r, p: length_curve(r, task, p)).items():
        ax.plot(lengths, values, color="grey", linestyle=BASELINE_STYLES.get(name, "--"), label=name)
    ax.axvline(trained_points, color="black", linewidth=0.8, linestyle="-.", label="longest trained prompt")
    ax.set(xlabel="prompt length (points)", ylabel=error_label(task), title=title)
    ax.legend(fontsize=8)


def plot_per_position(ax, runs: dict, task: str, shift: str, sigma: float, title: str | None = None) -> None:
    """Mean pointwise error at each point of the prompt, at one sigma (raw, not normalised)."""
    sigmas = next(iter(runs.values()))[0].sweep(shift).values
    index = sigmas.index(sigma)
    for scorer, seeds in runs.items():
        values = np.array([run.sweep(shift).per_position["model"][index] for run in seeds])
        _band(ax, np.arange(1, values.shape[1] + 1), values, color=scorer_color(scorer), label=scorer_label(scorer))
    ax.axvspan(0.5, FIRST_SCORED + 0.5, color="grey", alpha=0.1, label="not scored")
    ax.set(
        xlabel="point in the prompt",
        ylabel="error rate" if get_task(task).classification else "squared error",
        title=title or f"σ of {SHIFTED[shift]} = {sigma:g}",
    )
    if not get_task(task).classification:
        ax.set_yscale("log")
    ax.legend(fontsize=8)


def plot_training(ax, runs: dict, title: str | None = None) -> None:
    """Training loss (mean over each logging window) against step: the mean over seeds, its band
    and each seed."""
    for scorer, seeds in runs.items():
        steps = [step for step, _ in seeds[0].training.history]
        values = np.array([[loss for _, loss in run.training.history] for run in seeds])
        _band(ax, steps, values, color=scorer_color(scorer), label=scorer_label(scorer), marker="")
    ax.set(xlabel="training step", ylabel="training loss", yscale="log", title=title)
    ax.legend(fontsize=8)


STATISTIC_LABELS = {"entropy": "normalised entropy", "max_weight": "max weight", "logit_spread": "logit spread"}


def plot_per_layer(axes, per_seed: dict[str, list], sigmas, ylabel: str) -> None:
    """One panel per layer: a per-head statistic (mean over heads) against sigma, per scorer.
    ``per_seed``: ``{scorer: [array (sigmas, layers, heads) for each seed]}``."""
    layers = np.asarray(next(iter(per_seed.values()))[0]).shape[1]
    for layer, ax in zip(range(layers), np.ravel(axes)):
        for scorer, seeds in per_seed.items():
            values = np.array([np.asarray(run)[:, layer].mean(axis=1) for run in seeds])  # (seeds, sigmas)
            _band(ax, sigmas, values, color=scorer_color(scorer), label=scorer_label(scorer))
        ax.set(title=f"layer {layer + 1}", xlabel=r"$\sigma$", ylabel=ylabel)
    np.ravel(axes)[0].legend(fontsize=8)


def plot_concentration(axes, runs: dict, shift: str, statistic: str) -> None:
    """One panel per layer: the attention statistic (mean over heads) against sigma."""
    sigmas = next(iter(runs.values()))[0].concentration[shift].sigmas
    per_seed = {
        scorer: [run.concentration[shift].statistic(statistic) for run in seeds] for scorer, seeds in runs.items()
    }
    plot_per_layer(axes, per_seed, sigmas, STATISTIC_LABELS[statistic])


def plot_logit_spread(axes, spreads: dict) -> None:
    """One panel per layer: the attention-logit spread (mean over heads) against sigma."""
    sigmas = next(iter(spreads.values()))[0].sigmas
    plot_per_layer(
        axes,
        {scorer: [run.spread for run in seeds] for scorer, seeds in spreads.items()},
        sigmas,
        STATISTIC_LABELS["logit_spread"],
    )


def plot_heads(ax, runs: dict, shift: str, statistic: str, sigma_index: int = -1) -> None:
    """Every head of every seed at one sigma: a strip per scorer and layer (is any head collapsing?)."""
    for offset, (scorer, seeds) in enumerate(runs.items()):
        for run in seeds:
            values = run.concentration[shift].statistic(statistic)[sigma_index]  # (layers, heads)
            for layer, heads in enumerate(values):
                ax.scatter(
                    np.full(len(heads), layer + 1 + 0.15 * (2 * offset - 1)),
                    heads,
                    s=10,
                    color=scorer_color(scorer),
                    label=scorer_label(scorer) if layer == 0 and run is seeds[0] else None,
                    alpha=0.7,
                )
    ax.set(xlabel="layer", ylabel=STATISTIC_LABELS[statistic])
    ax.legend(fontsize=8)


def plot_attention_maps(axes, runs: dict, seed_index: int = 0) -> None:
    """Head-averaged attention of one prompt with an injected extreme value, one row per scorer,
    one column per layer (square-root colour scale from 0 to 1); the injected token's column is
    outlined."""
    import matplotlib.patches as patches
    from matplotlib.colors import PowerNorm

    for row, (scorer, seeds) in enumerate(runs.items()):
        run = seeds[seed_index]
        maps = run.attention_map.weights
        token = 2 * run.injection.position
        for layer in range(maps.shape[0]):
            ax = axes[row, layer]
            # A square-root colour scale: small weights spread over many keys stay visible.
            ax.imshow(maps[layer], cmap="magma", norm=PowerNorm(0.5, vmin=0, vmax=1), interpolation="nearest")
            ax.add_patch(
                patches.Rectangle((token - 0.5, -0.5), 1, maps.shape[1], fill=False, edgecolor="cyan", linewidth=1)
            )
            ax.set(xticks=[], yticks=[], title=f"{scorer_label(scorer)}, layer {layer + 1}")
            if layer == 0:
                ax.set_ylabel("query token")
            ax.set_xlabel("key token")


def scorer_values_table(runs: dict):
    """Learned scorer parameters (e.g. SSA's b and n) per layer: mean and range over seeds."""
    import pandas as pd

    rows = []
    for scorer, seeds in runs.items():
        for layer, parameters in seeds[0].scorer_values.items():
            for parameter in parameters:
                values = np.array([np.mean(run.scorer_values[layer][parameter]) for run in seeds])
                rows.append(
                    {
                        "scorer": scorer_label(scorer),
                        "layer": layer,
                        "parameter": parameter,
                        "mean": values.mean(),
                        "min": values.min(),
                        "max": values.max(),
                    }
                )
    return pd.DataFrame(rows)


def timing_table(runs: dict):
    """Measured times per run: training (summed over interrupted and resumed sessions, kept in
    the checkpoint) and evaluation, steps per second, and the device that produced it (from the
    cache entry's provenance, which also holds the commit: a chapter's table leaves it out)."""
    import pandas as pd

    rows = []
    for scorer, seed_runs in runs.items():
        for run in seed_runs:
            training = run.training
            rows.append(
                {
                    "scorer": scorer_label(scorer),
                    "seed": run.seed,
                    "device": None if run.provenance is None else run.provenance.device,
                    "training (min)": training.wall_time_s / 60,
                    "steps/s": training.steps_per_s,
                    "evaluation (min)": training.evaluation_wall_time_s / 60,
                }
            )
    return pd.DataFrame(rows)


def plot_paired_differences(verdicts, seeds, width: float = 7.2):
    """A figure with each judged claim's paired difference per seed (in the paper's direction:
    positive = as the paper says), the mean with its 95% interval, and the threshold either side of
    0 shaded (:mod:`ssa_book.verdicts`); one panel per unit, so that claims in different units do not
    share an axis. Returns the figure."""
    import matplotlib.pyplot as plt

    judged = [verdict for verdict in verdicts if verdict.differences]
    groups: dict[str, list] = {}
    for verdict in judged:
        groups.setdefault(verdict.units, []).append(verdict)
    if not groups:
        fig, ax = plt.subplots(figsize=(width, 1.5))
        ax.text(0.5, 0.5, "no judged claim", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    heights = [len(group) + 1.2 for group in groups.values()]
    fig, axes = plt.subplots(
        len(groups),
        1,
        figsize=(width, 0.65 * sum(heights) + 0.6),
        squeeze=False,
        gridspec_kw={"height_ratios": heights},
    )
    for ax, (units, group) in zip(axes[:, 0], groups.items()):
        for row, verdict in enumerate(group):
            y = len(group) - 1 - row
            if verdict.interval is not None and all(np.isfinite(verdict.interval)):
                ax.plot(verdict.interval, [y, y], color="black", linewidth=1.5)
            ax.plot(
                verdict.effect,
                y,
                marker="|",
                markersize=14,
                color="black",
                label="mean, 95% interval" if row == 0 else None,
            )
            for index, (seed, difference) in enumerate(zip(seeds, verdict.differences)):
                ax.scatter(
                    difference, y + 0.2, s=28, **seed_style(index), label=f"seed {seed}" if row == 0 else None, zorder=3
                )
        threshold = group[0].threshold
        ax.axvspan(-threshold, threshold, color="grey", alpha=0.15, linewidth=0, label="within the threshold")
        ax.axvline(0, color="grey", linewidth=0.8)
        ax.set_yticks(range(len(group)), [textwrap.fill(verdict.claim, 40) for verdict in reversed(group)], fontsize=8)
        ax.set_ylim(-0.6, len(group) - 0.2)
        ax.set_xlabel(f"paired difference, {units} (positive = the paper's direction)", fontsize=9)
    axes[0, 0].legend(fontsize=8, loc="best")
    fig.tight_layout()
    return fig


TASK_MARKERS = ("o", "s", "^", "D")  # the tasks of a forest, told apart by marker and shade
TASK_SHADES = ("black", "0.5", "0.25", "0.65")
# An open cell (exploratory, undecided) cannot carry a word, so it is drawn in a grey lighter than any
# task's shade, as the front page's scorecard greys its open parts.
OPEN_SHADE = "0.78"


def _comparison_label(row, tasks_on_row: int) -> str:
    """A forest row's label: the comparison, with its task when the row holds one task that the
    comparison's name does not already say."""
    label, title = row["comparison"], get_task(row["task"]).title
    if tasks_on_row == 1 and title not in label:
        label = f"{label} ({title})"
    return textwrap.fill(label, 30)


def _draw_seeds(ax, verdict, y: float, marker: str, shade, hollow: bool = False) -> None:
    """One cell of :func:`plot_study_differences` at height ``y``: each seed's paired difference as a
    small dot, the mean as ``marker`` with its 95% interval; ``hollow``: an open marker and open dots."""
    spread = np.linspace(-0.07, 0.07, len(verdict.differences))  # seeds side by side, in seed order
    dots = (
        {"facecolors": "none", "edgecolors": shade, "linewidths": 0.6}
        if hollow
        else {"color": scorer_color("ssa"), "linewidths": 0}
    )
    ax.scatter(verdict.differences, y + spread, s=6, alpha=0.6 if hollow else 0.45, zorder=2, **dots)
    if verdict.interval is not None and all(np.isfinite(verdict.interval)):
        ax.plot(verdict.interval, [y, y], color=shade, linewidth=1.6, zorder=3)
    ax.plot(
        verdict.effect,
        y,
        marker=marker,
        markersize=5,
        color=shade,
        markerfacecolor="white" if hollow else shade,
        zorder=4,
    )


def plot_study_differences(
    ax, rows, endpoint: str, *, labels: bool = True, order=None, tasks=None, legend: bool = True
) -> list:
    """The powered study's judged comparisons at one endpoint (rows of
    :func:`ssa_book.icl.study.verdict_rows`), one row per comparison: per task (a marker and shade
    each, side by side on the row), the mean with its 95% interval and each seed's paired difference
    as a small dot (positive = the paper's direction); the threshold either side of 0 shaded; an open
    cell (exploratory, undecided) in :data:`OPEN_SHADE`, and a comparison whose seeds were raised after
    reading and whose runs are not all in, its seeds read before the raise hollow in that grey.
    Comparisons not judged yet are listed with what is missing. ``order``: the comparisons, top to
    bottom (default: as they come); ``tasks``: the tasks, whose order picks their markers; ``labels=False`` leaves the row labels to a panel beside it;
    ``legend``: a legend below the panel (else the caller draws one). Returns the legend's handles."""
    from matplotlib.lines import Line2D

    chosen = [row for row in rows if row["endpoint"] == endpoint]
    comparisons = list(order) if order is not None else list(dict.fromkeys(row["comparison"] for row in chosen))
    present = list(dict.fromkeys(row["task"] for row in chosen))
    tasks = list(tasks) if tasks is not None else present
    offsets = dict(zip(present, np.linspace(-0.18, 0.18, len(present)) if len(present) > 1 else [0.0]))
    handles, names = [], []
    drew_earlier = drew_open = False
    for row in chosen:
        verdict = row["verdict"]
        y = comparisons.index(row["comparison"]) + offsets[row["task"]]
        index = tasks.index(row["task"])
        marker, shade = TASK_MARKERS[index % len(TASK_MARKERS)], TASK_SHADES[index % len(TASK_SHADES)]
        earlier = row.get("read_before_raise")
        if not verdict.differences and earlier is not None and earlier.differences:
            # seeds raised after reading, the rest not run yet: the seeds read before the raise, hollow
            # and in the open grey (exploratory today), and how far the rest are, as the tables say it
            _draw_seeds(ax, earlier, y, marker, OPEN_SHADE, hollow=True)
            ax.annotate(
                verdict.detail or verdict.word(),
                (max(max(earlier.differences), earlier.interval[1] if earlier.interval else -np.inf), y),
                xytext=(6, 0),
                textcoords="offset points",
                ha="left",
                va="center",
                fontsize=8,
                color="grey",
            )
            drew_earlier = True
            continue
        if not verdict.differences:
            # the state in the book's words, as the tables say it: "not run yet: 34 of 80 runs done"
            ax.text(0, y, verdict.detail or verdict.word(), ha="center", va="center", fontsize=8, color="grey")
            continue
        drew_open = drew_open or verdict.outcome in OPEN
        _draw_seeds(ax, verdict, y, marker, OPEN_SHADE if verdict.outcome in OPEN else shade)
        title = get_task(row["task"]).title
        if title not in names:
            names.append(title)
            handles.append(Line2D([], [], color=shade, marker=marker, markersize=5, linewidth=1.6, label=title))
    if chosen:
        threshold = chosen[0]["verdict"].threshold
        ax.axvspan(-threshold, threshold, color="grey", alpha=0.15, linewidth=0)
        ax.set_xlabel(chosen[0]["verdict"].units)
    ax.axvline(0, color="grey", linewidth=0.8)
    by_comparison = {c: [row for row in chosen if row["comparison"] == c] for c in comparisons}
    if labels:  # a panel sharing its rows with one beside it leaves the labels (and the shared ticks) to that one
        ax.set_yticks(
            range(len(comparisons)),
            [
                _comparison_label(by_comparison[c][0], len(by_comparison[c])) if by_comparison[c] else c
                for c in comparisons
            ],
        )
        ax.tick_params(axis="y", labelsize=8.5)
    ax.set_ylim(max(len(comparisons), 1) - 0.5, -0.5)
    ax.set_title(endpoint)
    handles.append(
        Line2D([], [], color=scorer_color("ssa"), marker="o", markersize=3, alpha=0.6, linewidth=0, label="each seed")
    )
    if drew_open or drew_earlier:
        handles.append(
            Line2D(
                [],
                [],
                color=OPEN_SHADE,
                marker="o",
                markersize=5,
                linewidth=1.6,
                label="open (exploratory or undecided)",
            )
        )
    if drew_earlier:
        handles.append(
            Line2D(
                [],
                [],
                color=OPEN_SHADE,
                marker="o",
                markersize=5,
                markerfacecolor="white",
                linewidth=1.6,
                label="seeds read before a raise",
            )
        )
    from matplotlib.patches import Patch

    handles.append(Patch(color="grey", alpha=0.15, label="within the threshold"))
    if legend:
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2, fontsize=8, frameon=False)
    return handles


def plot_study_forest(rows, width: float = 7.2, columns: int = 3):
    """Every judged endpoint of the powered study (:func:`plot_study_differences`), as a grid of
    panels: endpoints that judge the same comparisons share one row of at most ``columns`` panels
    and their row labels; one row per comparison, the tasks side by side on it. Returns the figure."""
    import matplotlib.pyplot as plt

    endpoints = list(dict.fromkeys(row["endpoint"] for row in rows))
    tasks = list(dict.fromkeys(row["task"] for row in rows))
    if not endpoints:
        fig, ax = plt.subplots(figsize=(width, 1.2))
        ax.text(
            0.5,
            0.5,
            "No comparison is complete on any task yet, so none is drawn.",
            ha="center",
            va="center",
            transform=ax.transAxes,
        )
        ax.set_axis_off()
        return fig
    groups: dict[tuple, list] = {}
    for endpoint in endpoints:
        comparisons = tuple(dict.fromkeys(row["comparison"] for row in rows if row["endpoint"] == endpoint))
        groups.setdefault(comparisons, []).append(endpoint)
    lines = [
        (comparisons, chunk)
        for comparisons, members in groups.items()
        for chunk in (members[i : i + columns] for i in range(0, len(members), columns))
    ]
    heights = [0.42 * len(comparisons) + 1.2 for comparisons, _ in lines]
    legend_in = 0.75  # the shared legend's band at the top
    fig = plt.figure(figsize=(width, sum(heights) + legend_in))
    grid = fig.add_gridspec(len(lines), columns, height_ratios=heights)
    handles = {}
    for line, (comparisons, chunk) in enumerate(lines):
        first = None
        for column, endpoint in enumerate(chunk):
            ax = fig.add_subplot(grid[line, column], sharey=first)
            first = first or ax
            for handle in plot_study_differences(
                ax, rows, endpoint, labels=column == 0, order=comparisons, tasks=tasks, legend=False
            ):
                handles.setdefault(handle.get_label(), handle)
            ax.set_title(textwrap.fill(endpoint, 18))
            if column:
                ax.tick_params(axis="y", labelleft=False)
    fig.supxlabel("paired difference (positive = the paper's direction)", fontsize=9)
    fig.legend(
        handles=list(handles.values()),
        loc="upper center",
        bbox_to_anchor=(0.5, 1.0),
        ncol=3,
        frameon=False,
        title="per task: the mean and its 95% interval",
        title_fontsize=9,
    )
    fig.tight_layout(rect=(0, 0, 1, 1 - legend_in / fig.get_figheight()))
    return fig


ARM_MARKERS = ("o", "^", "s", "D", "v", "P")


def plot_arm_curves(ax, curves: dict, x, labels: dict, *, legend: bool = True) -> None:
    """Each arm's mean and seeds along ``x`` (``curves``: :func:`ssa_book.icl.study.arm_curves`): the
    first arm of a scorer in the scorer's book colour with circles, each further arm of the same
    scorer in a shade of that colour with a marker of its own (:func:`ssa_book.plotting.variant_shade`,
    :data:`ARM_MARKERS`), so that arms are never told apart by line style alone; labelled
    ``labels[arm]``, with a legend below the panel."""
    arms_of: dict[str, int] = {}
    for arm, (seeds, values) in curves.items():
        scorer = ARMS[arm].scorer
        index = arms_of[scorer] = arms_of.get(scorer, -1) + 1
        plot_mean_and_seeds(
            ax,
            x,
            values,
            color=variant_shade(scorer_color(scorer), index),
            label=f"{labels[arm]} ({len(seeds)} seeds)",
            marker=ARM_MARKERS[index % len(ARM_MARKERS)],
            markersize=4,
        )
    if curves and legend:
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1, frameon=False)
