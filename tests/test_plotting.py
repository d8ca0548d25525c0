"""One colour per scorer across the book, and the caption line every figure carries."""

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ssa_book.plotting import (
    SEED_LINE,
    plot_category_means,
    plot_mean_and_seeds,
    plot_seed_lines,
    provenance_caption,
    scorer_color,
    scorer_palette,
)
from ssa.scoring import scorer_names


def test_every_scorer_has_its_own_colour():
    colours = [scorer_color(name) for name in scorer_names()]
    assert len(set(colours)) == len(colours)
    assert scorer_palette(["softmax", "ssa"]) == {"softmax": scorer_color("softmax"), "ssa": scorer_color("ssa")}
    with pytest.raises(ValueError, match="registered scorer"):
        scorer_color("soft-max")


def test_caption_names_profile_seeds_and_time():
    assert (
        provenance_caption("cpu", [2, 0, 1, 1], 150.0) == "cpu profile, 3 seeds (0, 1, 2), 2.5 min of training in total"
    )
    assert provenance_caption("smoke", [0], 12.0, "measurement") == "smoke profile, 1 seed (0), 12 s of measurement"
    assert provenance_caption("cpu", []) == "cpu profile, deterministic (no seed)"
    # a run of four or more consecutive seeds is written as its ends, so a study's caption stays short
    assert (
        provenance_caption("cpu", [*range(100, 140), 7, 8, 9, 300]) == "cpu profile, 44 seeds (7, 8, 9, 100-139, 300)"
    )


# Every mean over a few seeds is drawn with each seed beside it: the tests count the artists.

SEEDS = (0, 1, 2)


def _thin(lines):
    return [line for line in lines if line.get_linewidth() == SEED_LINE["linewidth"]]


def test_a_mean_line_is_drawn_over_one_thin_line_per_seed():
    fig, ax = plt.subplots()
    values = np.array([[1.0, 2.0, 3.0], [2.0, 3.0, np.nan], [3.0, 4.0, 5.0]])
    mean, seeds = plot_mean_and_seeds(ax, [1, 2, 3], values, color="C0", label="mean")
    assert len(ax.lines) == 1 + len(values) and len(_thin(ax.lines)) == len(values)
    np.testing.assert_allclose(mean.get_ydata(), [2.0, 3.0, 4.0])  # a seed without a value is left out of the mean
    assert mean.get_linewidth() > seeds[0].get_linewidth()
    plt.close(fig)


def test_seed_lines_of_a_long_table_draw_each_seed_of_each_hue():
    frame = pd.DataFrame(
        [
            {"variant": variant, "seed": seed, "step": step, "loss": 5.0 - step + seed}
            for variant in ("softmax", "ssa")
            for seed in SEEDS
            for step in range(4)
        ]
    )
    fig, ax = plt.subplots()
    drawn = plot_seed_lines(ax, frame, x="step", y="loss", hue="variant", palette={"softmax": "C0", "ssa": "C1"})
    assert set(drawn) == {"softmax", "ssa"}
    assert len(ax.lines) == 2 * (1 + len(SEEDS)) and len(_thin(ax.lines)) == 2 * len(SEEDS)
    plt.close(fig)


def test_category_means_show_every_seed_and_join_paired_seeds():
    categories = ["a", "b", "c", "d"]
    frame = pd.DataFrame(
        [
            {
                "paradigm": category,
                "variant": variant,
                "seed": seed,
                "accuracy": 50 + 5 * seed + (variant == "ssa"),
                "low": 40.0,
                "high": 70.0,
            }
            for category in categories
            for variant in ("softmax", "ssa")
            for seed in SEEDS
        ]
    )
    fig, ax = plt.subplots()
    drawn = plot_category_means(
        ax,
        frame,
        category="paradigm",
        value="accuracy",
        hue="variant",
        palette={"softmax": "C0", "ssa": "C1"},
        low="low",
        high="high",
        paired=True,
    )
    assert [len(points.get_offsets()) for points in drawn["seeds"]] == [len(categories) * len(SEEDS)] * 2
    assert len(drawn["pairs"]) == len(categories) * len(
        SEEDS
    )  # one line per category and seed, across the two variants
    means = [artist for artist in drawn["means"] if hasattr(artist, "get_offsets")]
    np.testing.assert_allclose(means[0].get_offsets()[:, 0], [55.0] * len(categories))
    assert [tick.get_text() for tick in ax.get_yticklabels()] == categories
    plt.close(fig)


def _icl_run(seed: int, sigmas=(1.0, 2.0, 4.0)):
    from ssa_book.icl.records import ICLRun

    errors = [0.1 * (1 + seed) * sigma for sigma in sigmas]
    result = {
        "training": {"history": [(step, 1.0 / (1 + step + seed)) for step in range(5)], "steps": 5, "wall_time_s": 1.0},
        "shifts": {
            "sigma_x": {
                "sigmas": list(sigmas),
                "model": {"prompt_error": errors},
                "majority class": {"prompt_error": [0.5] * len(sigmas)},
            }
        },
        "concentration": {
            "sigma_x": {
                "sigmas": list(sigmas),
                "entropy": [[[1.0 - 0.1 * i - 0.01 * seed] * 2] * 2 for i in range(len(sigmas))],
            }
        },
    }
    return ICLRun.from_result(result, task="every", scorer="softmax", seed=seed)


def test_icl_figures_draw_each_seed_beside_the_mean():
    from ssa_book.icl import figures

    runs = {scorer: [_icl_run(seed) for seed in SEEDS] for scorer in ("softmax", "ssa")}
    for draw in (lambda ax: figures.plot_training(ax, runs), lambda ax: figures.plot_shift(ax, runs, "every")):
        fig, ax = plt.subplots()
        draw(ax)
        assert len(_thin(ax.lines)) == len(runs) * len(SEEDS)
        plt.close(fig)


def test_alternatives_figures_draw_each_seed():
    from ssa_book.alternatives import comparison, figures

    runs = {"every": {scorer: [_icl_run(seed) for seed in SEEDS] for scorer in ("softmax", "ssa", "sparsemax")}}
    ranks = figures.seed_ranks(runs["every"], "every", "sigma_x")
    assert {scorer: values.shape for scorer, values in ranks.items()} == {
        scorer: (len(SEEDS), 3) for scorer in runs["every"]
    }
    np.testing.assert_allclose(sum(ranks.values()), 1 + 2 + 3)  # each seed ranks the three scorers at each sigma

    ranked = comparison.rank_table(comparison.error_table(runs))
    fig, axes = plt.subplots(1, 1, squeeze=False)
    figures.plot_ranks(fig, axes, ranked, [("every", "sigma_x")], runs)
    assert (
        sum(len(points.get_offsets()) for points in axes[0, 0].collections) == 3 * len(SEEDS) * 3
    )  # scorers x seeds x sigmas
    plt.close(fig)

    fig, axes = plt.subplots(1, 1, squeeze=False)
    figures.plot_entropy(fig, axes, runs, [("every", "sigma_x")])
    assert len(_thin(axes[0, 0].lines)) == 3 * len(SEEDS)
    plt.close(fig)

    mechanism = comparison.mechanism_table(runs)
    fig, axes = plt.subplots(1, 1, squeeze=False)
    figures.plot_mechanism(
        fig, axes, mechanism, comparison.mechanism_correlation(mechanism), [("every", "sigma_x")], runs
    )
    seed_points = [points for points in axes[0, 0].collections if len(points.get_offsets()) == len(SEEDS)]
    assert len(seed_points) == 3 and len(axes[0, 0].lines) >= 3 * len(
        SEEDS
    )  # each seed's point, joined to its scorer's mean
    plt.close(fig)


def test_a_crowded_overlay_keeps_softmax_and_ssa_in_colour_and_the_rest_grey():
    from ssa_book import plotting
    from ssa.scoring import scorer_names

    everyone = list(scorer_names())
    assert len(everyone) > plotting.MAX_COLOURED
    colours = {name: plotting.overlay_color(name, everyone) for name in everyone}
    assert colours["softmax"] == plotting.scorer_color("softmax") and colours["ssa"] == plotting.scorer_color("ssa")
    assert {colours[name] for name in everyone if name not in plotting.HIGHLIGHTED} == {plotting.OTHER_SCORERS_COLOR}
    few = ["softmax", "ssa", "sparsemax"]
    assert plotting.overlay_color("sparsemax", few) == plotting.scorer_color("sparsemax")
    assert plotting.overlay_order(["ssa", "sigmoid", "softmax", "sparsemax"]) == [
        "sigmoid",
        "sparsemax",
        "ssa",
        "softmax",
    ]


# Every figure is drawn for the book's column (issue 53): at most 7.5 in wide as saved, no text
# below 8 pt. The notebooks' figures are checked when they are glued (use_book_style installs the
# check in the kernel), so the smoke run of every notebook in CI checks every figure of the book.


def test_a_figure_wider_than_the_column_or_with_small_text_is_refused():
    from ssa_book import plotting

    plotting.use_book_style()
    fitting, ax = plt.subplots(figsize=(7.0, 3.0))
    ax.plot([0, 1], [0, 1], label="a line")
    ax.set(title="a title", xlabel="x", ylabel="y")
    ax.legend()
    fitting.tight_layout()
    assert plotting.figure_problems(fitting) == []
    plotting.check_figure(fitting)

    wide, ax = plt.subplots(figsize=(12.0, 3.0))
    ax.plot([0, 1], [0, 1])
    wide.tight_layout()
    assert any("wide" in problem for problem in plotting.figure_problems(wide))

    small, ax = plt.subplots(figsize=(6.0, 3.0))
    ax.plot([0, 1], [0, 1])
    ax.text(0.5, 0.5, "tiny", fontsize=6)
    small.tight_layout()
    problems = plotting.figure_problems(small)
    assert len(problems) == 1 and "below 8 pt" in problems[0] and "'tiny'" in problems[0]
    with pytest.raises(plotting.FigureNotForColumn, match="below 8 pt"):
        plotting.check_figure(small)

    outside, ax = plt.subplots(figsize=(7.0, 3.0))  # a legend outside the axes widens the saved figure
    ax.plot([0, 1], [0, 1], label="a line with a long label")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1))
    assert any("wide" in problem for problem in plotting.figure_problems(outside))
    for fig in (fitting, wide, small, outside):
        plt.close(fig)


def test_the_book_style_writes_no_text_below_the_minimum():
    from ssa_book import plotting

    plotting.use_book_style()
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="line")
    ax.set(title="title", xlabel="x", ylabel="y")
    ax.legend(title="legend")
    fig.suptitle("figure")
    fig.tight_layout()
    assert plotting.figure_problems(fig) == []
    assert plt.rcParams["savefig.dpi"] == plotting.FIGURE_DPI
    plt.close(fig)


def test_in_a_notebook_every_glued_figure_is_checked():
    """In an IPython shell the book style wraps the PNG formatter of figures: a figure that does not
    fit the column raises when it is rendered (a notebook's cell then shows an error and
    papermill fails the chapter)."""
    from IPython.core.interactiveshell import InteractiveShell
    from matplotlib.figure import Figure

    from ssa_book import plotting

    shell = InteractiveShell.instance()
    try:
        plotting.use_book_style()
        render = shell.display_formatter.formatters["image/png"].lookup_by_type(Figure)
        assert getattr(render, "checks_column", False)
        fig, ax = plt.subplots(figsize=(6.0, 3.0))
        ax.plot([0, 1], [0, 1])
        assert render(fig)[:4] == b"\x89PNG"
        fig.set_size_inches(12.0, 3.0)
        with pytest.raises(plotting.FigureNotForColumn, match="wide"):
            render(fig)
        plt.close(fig)
    finally:
        InteractiveShell.clear_instance()


def test_ssa_variants_are_told_apart_from_ssa_by_colour_and_marker():
    from matplotlib.colors import to_rgb

    from ssa_book import plotting

    variants = ["ssa", "ssa_n1.5", "ssa_n2"]
    colours = [np.array(to_rgb(plotting.scorer_color(name))) for name in variants]
    # every pair at least a third of the RGB cube's diagonal apart: no near-identical shades
    assert min(np.linalg.norm(a - b) for i, a in enumerate(colours) for b in colours[i + 1 :]) > 0.35
    assert len({plotting.scorer_marker(name) for name in ["softmax", *variants]}) == 4


def test_the_study_forest_fits_the_column_with_every_comparison_on_one_row():
    """The powered study's forest (issue 53's Fig. 24 had 71 rows, 3,804 px tall): twelve comparisons
    judged on two tasks at three endpoints, and one comparison on linear functions at two more, fit
    the column; each comparison is one row, its tasks side by side on it."""
    from types import SimpleNamespace

    from ssa_book import plotting
    from ssa_book.icl import figures

    plotting.use_book_style()

    def verdict(effect):
        return SimpleNamespace(
            differences=[effect - 0.1, effect, effect + 0.1],
            interval=(effect - 0.2, effect + 0.2),
            effect=effect,
            threshold=0.1,
            units="prompt error",
            detail="",
            outcome="worse",
        )

    comparisons = [f"SSA vs softmax, variant number {index} of the study's plan" for index in range(12)]
    rows = [
        {"comparison": comparison, "task": task, "endpoint": endpoint, "verdict": verdict(0.01 * index)}
        for endpoint in ("error at σ = 10", "mean error, σ = 2-29", "generalises at σ = 10")
        for index, comparison in enumerate(comparisons)
        for task in ("every", "some")
    ]
    rows += [
        {
            "comparison": "SSA vs softmax, linear functions",
            "task": "linear",
            "endpoint": endpoint,
            "verdict": verdict(0.05),
        }
        for endpoint in ("normalised error, larger inputs", "normalised error, larger functions")
    ]
    fig = figures.plot_study_forest(rows)
    assert plotting.figure_problems(fig) == []
    labelled = [ax for ax in fig.axes if [label.get_text() for label in ax.get_yticklabels() if label.get_text()]]
    assert len(labelled) == 2  # one panel per row of endpoints carries the labels
    assert len(labelled[0].get_yticklabels()) == len(comparisons)
    assert all("(linear functions)" not in label.get_text() for ax in fig.axes for label in ax.get_yticklabels())
    assert fig.get_size_inches()[1] * fig.dpi < 1100  # one screen, not 3,804 px
    plt.close(fig)
