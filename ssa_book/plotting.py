"""One look for every figure of the book: a seaborn style, and one colour per scorer.

Each scorer keeps its colour in every chapter: colours follow the registry order of
:mod:`ssa.scoring`, so a scorer registered later gets the next free colour and no other changes.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import numpy as np

from ssa.scoring import scorer_names

# Softmax and SSA first and in contrasting colours: they are on almost every figure.
_PALETTE = [
    "#4C72B0",  # softmax: blue
    "#DD8452",  # ssa: orange
    "#C44E52", "#8C2D04", "#55A868", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C", "#CCB974", "#64B5CD", "#1B9E77",
    "#E7298A", "#66A61E", "#E6AB02", "#A6761D",
]

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


def scorer_label(name: str) -> str:
    return SCORER_LABELS.get(name, name)


def scorer_palette(names: Iterable[str]) -> dict[str, str]:
    """A seaborn ``palette=`` mapping for the given scorers."""
    return {name: scorer_color(name) for name in names}


def use_book_style() -> None:
    """The book's matplotlib/seaborn style; call once at the top of a chapter."""
    import seaborn as sns

    sns.set_theme(context="notebook", style="whitegrid", rc={"figure.dpi": 110, "savefig.dpi": 110, "axes.titleweight": "bold"})


def provenance_caption(profile: str, seeds: Iterable[int], wall_time_s: float | None = None, activity: str = "training") -> str:
    """The caption line every figure carries: which profile and seeds produced it, and how long it
    took (``activity``: what the time was spent on). No seeds: a deterministic computation. Plain
    text: it is glued into captions as text, where Markdown is not rendered."""
    seeds = sorted(set(seeds))
    if seeds:
        text = f"{profile} profile, {len(seeds)} seed{'s' if len(seeds) != 1 else ''} ({', '.join(map(str, seeds))})"
    else:
        text = f"{profile} profile, deterministic (no seed)"
    if wall_time_s is not None:
        text += f", {wall_time_s / 60:.1f} min of {activity} in total" if wall_time_s >= 60 else f", {wall_time_s:.0f} s of {activity}"
    return text


# ----------------------------------------------------------------------------------------------
# Means over few seeds. The book trains two to four seeds per configuration, too few for a band
# to say anything on its own: every mean it plots is drawn with each seed beside it.

SEED_LINE = {"linewidth": 0.7, "alpha": 0.45}  # a seed's own line, beneath its mean
SEED_POINT = {"s": 12, "alpha": 0.6, "linewidths": 0}  # a seed's own point, beside its mean


def plot_mean_and_seeds(ax, x, values, *, color: str, label: str | None = None, marker: str = "o", markersize: float = 3,
                        linestyle="-", alpha: float = 1.0):
    """The mean over seeds as a line, and each seed beneath it as a thin line of the same colour.

    ``values``: one row per seed, one column per ``x`` (NaN where a seed has no value). Returns
    ``(mean_line, seed_lines)``."""
    values = np.atleast_2d(np.asarray(values, dtype=float))
    seed_lines = [ax.plot(x, row, color=color, zorder=1, **SEED_LINE)[0] for row in values]
    with warnings.catch_warnings():  # a point no seed has stays NaN (a gap in the line)
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(values, axis=0)
    (mean_line,) = ax.plot(x, mean, color=color, label=label, marker=marker, markersize=markersize, linestyle=linestyle,
                           alpha=alpha, zorder=2)
    return mean_line, seed_lines


def _ordered(values, order=None) -> list:
    present = list(dict.fromkeys(values))
    return [value for value in order if value in present] if order is not None else present


def plot_seed_lines(ax, frame, *, x: str, y: str, hue: str, palette: dict, labels: dict | None = None, seed: str = "seed",
                    hue_order=None, marker: str = "") -> dict:
    """:func:`plot_mean_and_seeds` for each ``hue`` of a long table (one row per hue, seed and
    ``x``). Returns ``{hue value: (mean_line, seed_lines)}``."""
    drawn = {}
    for value in _ordered(frame[hue], hue_order):
        wide = frame[(frame[hue] == value) & frame[y].notna()].pivot_table(index=x, columns=seed, values=y)
        drawn[value] = plot_mean_and_seeds(ax, wide.index.to_numpy(), wide.to_numpy().T, color=palette[value],
                                           label=(labels or {}).get(value, value), marker=marker)
    return drawn


def plot_category_means(ax, frame, *, category: str, value: str, hue: str, palette: dict, labels: dict | None = None,
                        seed: str = "seed", order=None, hue_order=None, low: str | None = None, high: str | None = None,
                        paired: bool = False, span: float = 0.6) -> dict:
    """One row per ``category`` (top to bottom), one marker per ``hue`` in it, slightly apart: the
    mean of ``value`` over seeds (a large dot) and each seed's own value (small dots on the same
    line). With ``low`` and ``high`` a bar spans the lowest ``low`` to the highest ``high`` over
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
            drawn["means"].append(ax.errorbar(means, y + offsets[name], xerr=[means - lows, highs - means], fmt="none",
                                              ecolor=color, elinewidth=1, alpha=0.6))
        drawn["means"].append(ax.scatter(means, y + offsets[name], s=36, color=color, label=(labels or {}).get(name, name),
                                         zorder=3, edgecolors="white", linewidths=0.5))
        drawn["seeds"].append(ax.scatter(part[value], [categories.index(c) + offsets[name] for c in part[category]],
                                         color=color, zorder=2, marker="o", **SEED_POINT))
    if paired and len(hues) > 1:
        for (name, seed_value), rows in frame[frame[category].isin(categories)].groupby([category, seed]):
            rows = rows.set_index(hue).reindex([h for h in hues if h in set(rows[hue])])
            if len(rows) > 1:
                drawn["pairs"].append(ax.plot(rows[value], [categories.index(name) + offsets[h] for h in rows.index],
                                              color="grey", linewidth=0.6, alpha=0.5, zorder=1)[0])
    ax.set_yticks(range(len(categories)), categories)
    ax.set_ylim(len(categories) - 0.5, -0.5)
    return drawn
