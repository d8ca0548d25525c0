"""A claim of the paper as declared before its results are read (:class:`Claim`: direction,
threshold and why, the kind of outcome), and the fewest pairs from which the rule decides it
(:data:`MIN_PAIRS`, :func:`no_effect_pairs`)."""

from __future__ import annotations

import dataclasses
import math

from ssa_book.verdicts.intervals import CONFIDENCE


# The fewest pairs that may decide a claim: with fewer, no exact two-sided test on the signs or
# signed ranks of the differences can reach 5% (2 / 2^5 > 0.05), and outcomes that are
# all-or-nothing per seed make the t interval overconfident.
MIN_PAIRS = 6


@dataclasses.dataclass(frozen=True)
class Claim:
    """A claim of the paper, declared before its results are read.

    ``direction`` is +1 if the paper says the outcome of the treatment (SSA) is larger than the
    control's (accuracy), -1 if smaller (an error); ``threshold`` is the smallest paired
    difference, in ``units``, that would matter, and ``reason`` says why."""

    name: str
    direction: int
    threshold: float
    units: str
    reason: str
    binary: bool = False  # the outcome is 0 or 1 per seed: Tango's interval, not the t interval
    largest_flip: float | None = None  # outcomes that flip from seed to seed: the largest difference one flip makes
    # The largest paired difference the outcome allows (1 for an error rate, an accuracy or a share
    # in [0, 1]); None: unbounded. The interval is intersected with [-bound, bound]: the mean lies
    # there, so the intersection covers it whenever the interval does, and no estimate reads wider
    # than the scale (a t interval of three seeds can).
    bound: float | None = None
    treatment: str = "SSA"  # what the verdict's words name: "SSA better"
    control: str = "softmax"
    # A claim about a trend rather than a treatment against a control (softmax's error grows with
    # sigma): its words for the two decided directions, as the paper says and the other way.
    directions: tuple[str, str] = ()
    # The fewest pairs from which the rule decides anything on this claim: MIN_PAIRS, or more where
    # the chapter's own data show the rule naming a false direction more than 5% of the time with
    # fewer (ssa_book.error_rates).
    min_pairs: int = MIN_PAIRS

    def __post_init__(self):
        if not isinstance(self.binary, bool):
            raise ValueError(f"binary must be True or False, got {self.binary!r}")
        if self.largest_flip is not None and not (
            isinstance(self.largest_flip, (int, float)) and math.isfinite(self.largest_flip) and self.largest_flip > 0
        ):
            raise ValueError(f"largest_flip must be None or a finite number > 0, got {self.largest_flip!r}")
        if self.bound is not None and not (
            isinstance(self.bound, (int, float)) and math.isfinite(self.bound) and self.bound > 0
        ):
            raise ValueError(f"bound must be None or a finite number > 0, got {self.bound!r}")
        if self.direction not in (1, -1):
            raise ValueError(f"direction must be +1 or -1, got {self.direction!r}")
        if not (isinstance(self.threshold, (int, float)) and math.isfinite(self.threshold) and self.threshold > 0):
            raise ValueError(f"threshold must be a finite number > 0, got {self.threshold!r}")
        if not self.reason.strip():
            raise ValueError("reason must say why the threshold has its size")
        if isinstance(self.min_pairs, bool) or not isinstance(self.min_pairs, int) or self.min_pairs < MIN_PAIRS:
            raise ValueError(f"min_pairs must be a whole number >= {MIN_PAIRS}, got {self.min_pairs!r}")
        if self.directions and (
            len(self.directions) != 2 or not all(isinstance(w, str) and w.strip() for w in self.directions)
        ):
            raise ValueError(
                f"directions must be two phrases (as the paper says, the other way), got {self.directions!r}"
            )


def no_effect_pairs(claim: Claim) -> int:
    """The fewest pairs from which the rule may call ``claim`` "no difference that matters": for an
    outcome that flips (``claim.largest_flip``), the fewest N with
    (1 - threshold / largest_flip)^N <= (1 - 0.95) / 2, so that flips frequent enough to move the
    mean by the threshold would have shown in some pair; and never fewer than the claim's own
    minimum (:attr:`Claim.min_pairs`)."""
    if claim.largest_flip is None or claim.threshold >= claim.largest_flip:
        return claim.min_pairs
    unseen = math.log((1 - CONFIDENCE) / 2) / math.log(1 - claim.threshold / claim.largest_flip)
    return max(claim.min_pairs, math.ceil(unseen))
