"""One look for every figure of the book, sized for its text column: a seaborn style, one colour
per scorer, and the check that every figure fits the column (:func:`check_figure`).

Each scorer keeps its colour in every chapter: colours follow the registry order of
:mod:`ssa.scoring`, so a scorer registered later gets the next free colour and no other changes.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import numpy as np

from ssa.scoring import scorer_names

# Softmax and SSA first and in contrasting colours: they are on almost every figure. SSA's own
# variants (other n) get colours far from SSA's orange and from each other (a purple, a teal),
# and a marker of their own (:func:`scorer_marker`), never three shades of one red.
_PALETTE = [
    "#4C72B0",  # softmax: blue
    "#DD8452",  # ssa: orange
    "#8172B3",  # ssa_n1.5: purple
    "#1B9E77",  # ssa_n2: teal
    "#55A868",
    "#C44E52",
    "#937860",
    "#DA8BC3",
    "#8C8C8C",
    "#CCB974",
    "#64B5CD",
    "#E6AB02",
    "#E7298A",
    "#66A61E",
    "#8C2D04",
    "#A6761D",
]

# Markers: softmax and SSA as circles and squares, SSA's variants as triangles and diamonds, so
# that a variant is told apart by its marker as well as its colour.
_MARKERS = {"softmax": "o", "ssa": "s", "ssa_n1.5": "^", "ssa_n2": "D"}
VARIANT_MARKERS = ("^", "D", "v", "P", "X", "<", ">")  # for variants that are not scorers

SCORER_LABELS = {
    "softmax": "softmax",
    "ssa": "SSA",
    "ssa_n1.5": "SSA (n = 1.5)",
    "ssa_n2": "SSA (n = 2)",
    "temperature_softmax": "temperature softmax",
    "sparsemax": "sparsemax",
    "entmax15": "1.5-entmax",
    "sa_softmax": "SA-softmax",
    "sa_softmax_normalized": "SA-softmax (normalised)",
    "cosformer": "cosFormer",
    "ssmax": "Scalable-Softmax",
    "sigmoid": "sigmoid",
    "adaptive_temperature": "adaptive temperature",
    "stick_breaking": "stick-breaking",
}


def scorer_color(name: str) -> str:
    """The scorer's colour, the same in every figure of the book."""
    names = scorer_names()
    if name not in names:
        raise ValueError(f"name must be a registered scorer ({', '.join(names)}); got {name!r}")
    return _PALETTE[names.index(name) % len(_PALETTE)]


# In a figure that overlays many scorers, softmax and SSA keep their colours and the rest are drawn
# in one light grey, behind them: fourteen colours cannot be told apart, and the question of the
# book is SSA against softmax.
HIGHLIGHTED = ("softmax", "ssa")
MAX_COLOURED = 4  # overlays of at most this many scorers keep every colour
OTHER_SCORERS_COLOR = "0.78"
OTHER_SCORERS_LABEL = "other scorers"


def overlay_color(name: str, names: Iterable[str]) -> str:
    """The colour of scorer ``name`` in a figure that overlays ``names``: its book colour, unless
    the overlay is crowded (more than :data:`MAX_COLOURED`) and it is not one of
    :data:`HIGHLIGHTED`, which then share :data:`OTHER_SCORERS_COLOR`."""
    crowded = len(set(names)) > MAX_COLOURED
    return OTHER_SCORERS_COLOR if crowded and name not in HIGHLIGHTED else scorer_color(name)


def overlay_order(names: Iterable[str]) -> list[str]:
    """``names`` with the highlighted scorers last, so that they are drawn on top."""
    names = list(names)
    return [n for n in names if n not in HIGHLIGHTED] + [n for n in names if n in HIGHLIGHTED]


def scorer_marker(name: str) -> str:
    """The scorer's marker, the same in every figure of the book (a circle for most)."""
    return _MARKERS.get(name, "o")


def variant_shade(color: str, index: int) -> str:
    """The colour of the ``index``-th variant drawn in ``color`` (an arm of a study, a path of one
    scorer): ``color`` itself for the first, then darker and lighter shades of it in turn, far
    enough apart to be told apart; draw each with a marker of its own too."""
    from matplotlib.colors import to_hex, to_rgb

    steps = (0.0, -0.45, 0.45, -0.7, 0.65, -0.2)
    step = steps[index % len(steps)]
    rgb = np.array(to_rgb(color))
    mixed = rgb + step * (1 - rgb) if step > 0 else rgb * (1 + step)
    return to_hex(np.clip(mixed, 0, 1))


# Seeds told apart within one figure (a paired-difference plot): greys and markers, never the
# colours of softmax and SSA.
_SEED_SHADES = ("0.15", "0.5", "0.7", "0.35", "0.6")
_SEED_MARKERS = "osD^v<>p*h"


def seed_style(index: int) -> dict:
    """``color`` and ``marker`` of the ``index``-th seed of a figure that tells seeds apart."""
    return {"color": _SEED_SHADES[index % len(_SEED_SHADES)], "marker": _SEED_MARKERS[index % len(_SEED_MARKERS)]}


def scorer_label(name: str) -> str:
    return SCORER_LABELS.get(name, name)


def scorer_palette(names: Iterable[str]) -> dict[str, str]:
    """A seaborn ``palette=`` mapping for the given scorers."""
    return {name: scorer_color(name) for name in names}


# Every figure is drawn for the book's column: 688 px in a 1280-px window. A figure at most
# COLUMN_WIDTH_IN wide at FIGURE_DPI (825 px) is shown at 83% of its size or more, so text of
# MIN_FONT_PT (8 pt: 12 px saved) is at least 10 px on screen. The style's smallest text is 9 pt.
COLUMN_WIDTH_IN = 7.5
MIN_FONT_PT = 8.0
FIGURE_DPI = 110
SAVE_PAD_IN = 0.1  # matplotlib's savefig.pad_inches, around the tight bounding box
_STYLE = {
    "figure.dpi": FIGURE_DPI,
    "savefig.dpi": FIGURE_DPI,
    "savefig.pad_inches": SAVE_PAD_IN,
    "figure.figsize": (COLUMN_WIDTH_IN - 0.5, 4.0),
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.title_fontsize": 9,
    "figure.titlesize": 11,
    "axes.titleweight": "bold",
    "lines.markersize": 5,
}


class FigureNotForColumn(ValueError):
    """A figure wider than the column or with text too small to read there."""


def figure_problems(fig) -> list[str]:
    """What keeps ``fig`` from reading in the column, as it would be saved (tight bounding box,
    as the notebooks' figures are): wider than :data:`COLUMN_WIDTH_IN`, or any visible text below
    :data:`MIN_FONT_PT`. An empty list: none."""
    from matplotlib.text import Text

    problems = []
    renderer = fig.canvas.get_renderer()
    width = fig.get_tightbbox(renderer).width + 2 * SAVE_PAD_IN
    if width > COLUMN_WIDTH_IN + 0.01:
        problems.append(
            f"{width:.2f} in wide (at most {COLUMN_WIDTH_IN:g} in, {COLUMN_WIDTH_IN * fig.dpi:.0f} px at "
            f"{fig.dpi:g} dpi)"
        )
    small = sorted(
        {
            (round(text.get_fontsize(), 2), text.get_text().strip()[:40])
            for text in fig.findobj(Text)
            if text.get_visible() and text.get_text().strip() and text.get_fontsize() < MIN_FONT_PT
        }
    )
    if small:
        shown = "; ".join(f"{size:g} pt {label!r}" for size, label in small[:3])
        problems.append(f"{len(small)} text(s) below {MIN_FONT_PT:g} pt ({shown}{'; ...' if len(small) > 3 else ''})")
    return problems


def check_figure(fig) -> None:
    """Raise :class:`FigureNotForColumn` when :func:`figure_problems` finds any."""
    problems = figure_problems(fig)
    if problems:
        title = next(
            (
                text
                for text in [fig.get_suptitle() if hasattr(fig, "get_suptitle") else ""]
                + [ax.get_title() for ax in fig.axes]
                if text
            ),
            "untitled",
        )
        raise FigureNotForColumn(f"figure ({title!r}) does not fit the book's column: {'; '.join(problems)}")


def _install_figure_check() -> None:
    """In a notebook (an IPython kernel), check every figure when it is rendered, displayed or glued:
    the PNG formatter of matplotlib figures calls :func:`check_figure` first, so a chapter whose
    figure does not fit the column fails (at every profile: the smoke run of CI checks them all)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - the [book] extra brings IPython
        return
    shell = get_ipython()
    if shell is None:
        return
    import matplotlib
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    # The inline backend registers its PNG formatter when it is loaded, at a chapter's first
    # figure: load it now, so that the check wraps that formatter rather than being replaced by it.
    if not plt.get_fignums():
        plt.switch_backend(matplotlib.get_backend())
    formatter = shell.display_formatter.formatters["image/png"]
    try:
        render = formatter.lookup_by_type(Figure)
    except KeyError:
        from IPython.core.pylabtools import print_figure

        def render(fig):
            return print_figure(fig, "png")

    if getattr(render, "checks_column", False):
        return

    def checked(fig):
        check_figure(fig)
        return render(fig)

    checked.checks_column = True
    formatter.for_type(Figure, checked)


def use_book_style() -> None:
    """The book's matplotlib/seaborn style, sized for the column; call once at the top of a chapter.
    In a notebook it also checks every figure the chapter shows or glues (:func:`check_figure`)."""
    import seaborn as sns

    sns.set_theme(context="notebook", style="whitegrid", rc=_STYLE)
    _install_figure_check()


def seed_ranges(seeds: Iterable[int]) -> str:
    """Sorted seeds in few words: a run of four or more consecutive seeds as its ends, "0, 1, 2, 100-139"."""
    seeds = sorted(set(seeds))
    runs: list[list[int]] = []
    for seed in seeds:
        if runs and seed == runs[-1][-1] + 1:
            runs[-1].append(seed)
        else:
            runs.append([seed])
    return ", ".join(f"{run[0]}-{run[-1]}" if len(run) >= 4 else ", ".join(map(str, run)) for run in runs)


def provenance_caption(
    profile: str, seeds: Iterable[int], wall_time_s: float | None = None, activity: str = "training"
) -> str:
    """The caption line every figure carries: which profile and seeds produced it, and how long it
    took (``activity``: what the time was spent on). No seeds: a deterministic computation. Plain
    text: it is glued into captions as text, where Markdown is not rendered."""
    seeds = sorted(set(seeds))
    if seeds:
        text = f"{profile} profile, {len(seeds)} seed{'s' if len(seeds) != 1 else ''} ({seed_ranges(seeds)})"
    else:
        text = f"{profile} profile, deterministic (no seed)"
    if wall_time_s is not None:
        text += (
            f", {wall_time_s / 60:.1f} min of {activity} in total"
            if wall_time_s >= 60
            else f", {wall_time_s:.0f} s of {activity}"
        )
    return text


# ----------------------------------------------------------------------------------------------
# Means over few seeds. The book trains two to four seeds per configuration, too few for a band
# to say anything on its own: every mean it plots is drawn with each seed beside it.

SEED_LINE = {"linewidth": 0.7, "alpha": 0.45}  # a seed's own line, beneath its mean
SEED_POINT = {"s": 12, "alpha": 0.6, "linewidths": 0}  # a seed's own point, beside its mean


def plot_mean_and_seeds(
    ax,
    x,
    values,
    *,
    color: str,
    label: str | None = None,
    marker: str = "o",
    markersize: float = 3,
    linestyle="-",
    alpha: float = 1.0,
):
    """The mean over seeds as a line, and each seed beneath it as a thin line of the same colour.

    ``values``: one row per seed, one column per ``x`` (NaN where a seed has no value). Returns
    ``(mean_line, seed_lines)``."""
    values = np.atleast_2d(np.asarray(values, dtype=float))
    seed_lines = [ax.plot(x, row, color=color, zorder=1, **SEED_LINE)[0] for row in values]
    with warnings.catch_warnings():  # a point no seed has stays NaN (a gap in the line)
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(values, axis=0)
    (mean_line,) = ax.plot(
        x,
        mean,
        color=color,
        label=label,
        marker=marker,
        markersize=markersize,
        linestyle=linestyle,
        alpha=alpha,
        zorder=2,
    )
    return mean_line, seed_lines


def _ordered(values, order=None) -> list:
    present = list(dict.fromkeys(values))
    return [value for value in order if value in present] if order is not None else present


def plot_seed_lines(
    ax,
    frame,
    *,
    x: str,
    y: str,
    hue: str,
    palette: dict,
    labels: dict | None = None,
    seed: str = "seed",
    hue_order=None,
    marker: str = "",
) -> dict:
    """:func:`plot_mean_and_seeds` for each ``hue`` of a long table (one row per hue, seed and
    ``x``). Returns ``{hue value: (mean_line, seed_lines)}``."""
    drawn = {}
    for value in _ordered(frame[hue], hue_order):
        wide = frame[(frame[hue] == value) & frame[y].notna()].pivot_table(index=x, columns=seed, values=y)
        drawn[value] = plot_mean_and_seeds(
            ax,
            wide.index.to_numpy(),
            wide.to_numpy().T,
            color=palette[value],
            label=(labels or {}).get(value, value),
            marker=marker,
        )
    return drawn


def plot_category_means(
    ax,
    frame,
    *,
    category: str,
    value: str,
    hue: str,
    palette: dict,
    labels: dict | None = None,
    seed: str = "seed",
    order=None,
    hue_order=None,
    low: str | None = None,
    high: str | None = None,
    paired: bool = False,
    span: float = 0.6,
) -> dict:
    """One row per ``category`` (top to bottom), one marker per ``hue`` in it, slightly apart: the
    mean of ``value`` over seeds (a large marker, a scorer's own: :func:`scorer_marker`) and each
    seed's own value (small dots on the same line). With ``low`` and ``high`` a bar spans the lowest ``low`` to the highest ``high`` over
    the seeds; ``paired``: each seed's dots are joined across the hues of a category by a thin grey
    line (the hues of one seed are paired: same batches, same test items).

    Returns the artists: ``{"means": [...], "seeds": [...], "pairs": [...]}``."""
    categories = _ordered(frame[category], order)
    hues = _ordered(frame[hue], hue_order)
    offsets = dict(zip(hues, np.linspace(-span / 2, span / 2, len(hues)) if len(hues) > 1 else [0.0]))
    drawn = {"means": [], "seeds": [], "pairs": []}
    for name in hues:
        part = frame[(frame[hue] == name) & frame[category].isin(categories)]
        grouped = part.groupby(category)
        keys = [c for c in categories if c in grouped.groups]
        y = np.array([categories.index(c) for c in keys], dtype=float)
        means = grouped[value].mean().reindex(keys).to_numpy()
        color = palette[name]
        if low is not None and high is not None:
            lows, highs = grouped[low].min().reindex(keys).to_numpy(), grouped[high].max().reindex(keys).to_numpy()
            drawn["means"].append(
                ax.errorbar(
                    means,
                    y + offsets[name],
                    xerr=[means - lows, highs - means],
                    fmt="none",
                    ecolor=color,
                    elinewidth=1,
                    alpha=0.6,
                )
            )
        drawn["means"].append(
            ax.scatter(
                means,
                y + offsets[name],
                s=36,
                color=color,
                label=(labels or {}).get(name, name),
                marker=_MARKERS.get(name, "o"),
                zorder=3,
                edgecolors="white",
                linewidths=0.5,
            )
        )
        drawn["seeds"].append(
            ax.scatter(
                part[value],
                [categories.index(c) + offsets[name] for c in part[category]],
                color=color,
                zorder=2,
                marker="o",
                **SEED_POINT,
            )
        )
    if paired and len(hues) > 1:
        for (name, seed_value), rows in frame[frame[category].isin(categories)].groupby([category, seed]):
            rows = rows.set_index(hue).reindex([h for h in hues if h in set(rows[hue])])
            if len(rows) > 1:
                drawn["pairs"].append(
                    ax.plot(
                        rows[value],
                        [categories.index(name) + offsets[h] for h in rows.index],
                        color="grey",
                        linewidth=0.6,
                        alpha=0.5,
                        zorder=1,
                    )[0]
                )
    ax.set_yticks(range(len(categories)), categories)
    ax.set_ylim(len(categories) - 0.5, -0.5)
    return drawn
