"""One colour per scorer across the book, and the caption line every figure carries."""

import pytest

from ssa.plotting import provenance_caption, scorer_color, scorer_palette
from ssa.scoring import scorer_names


def test_every_scorer_has_its_own_colour():
    colours = [scorer_color(name) for name in scorer_names()]
    assert len(set(colours)) == len(colours)
    assert scorer_palette(["softmax", "ssa"]) == {"softmax": scorer_color("softmax"), "ssa": scorer_color("ssa")}
    with pytest.raises(ValueError, match="registered scorer"):
        scorer_color("soft-max")


def test_caption_names_profile_seeds_and_time():
    assert provenance_caption("cpu", [2, 0, 1, 1], 150.0) == "cpu profile, 3 seeds (0, 1, 2), 2.5 min of training in total"
    assert provenance_caption("smoke", [0], 12.0, "measurement") == "smoke profile, 1 seed (0), 12 s of measurement"
    assert provenance_caption("cpu", []) == "cpu profile, deterministic (no seed)"
