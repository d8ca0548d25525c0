"""One look for every figure of the book: a seaborn style, and one colour per scorer.

Each scorer keeps its colour in every chapter: colours follow the registry order of
:mod:`ssa.scoring`, so a scorer registered later gets the next free colour and no other changes.
"""

from __future__ import annotations

from collections.abc import Iterable

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
}


def scorer_color(name: str) -> str:
    """The scorer's colour, the same in every figure of the book."""
    names = scorer_names()
    if name not in names:
        raise ValueError(f"name must be a registered scorer ({', '.join(names)}); got {name!r}")
    return _PALETTE[names.index(name) % len(_PALETTE)]


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
