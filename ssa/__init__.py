"""ssa: Scaled Signed Averaging and the other attention scorers of the SSA book.

``ssa.scoring`` holds the scorers, ``ssa.attention`` the attention function that uses them,
``ssa.hf`` puts a scorer into any Hugging Face ``transformers`` model. The library needs torch
alone; the book's studies, cache and command line are the separate package ``ssa_book``, which
imports this one and is never imported by it.
"""

from ssa.attention import attention
from ssa.scoring import SSA, Scorer, make_scorer, scorer_names

__all__ = ["SSA", "Scorer", "attention", "make_scorer", "scorer_names"]
__version__ = "0.1.0"
