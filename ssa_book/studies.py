"""Every study of the book: importing this module registers every chapter in
:data:`ssa_book.chapters.CHAPTERS` (each study defines and registers its own chapter beside its code).

The pages' machinery that lists chapters (:mod:`ssa_book.sizes`, :mod:`ssa_book.reproduce`) imports this
module, not the studies one by one, so that a new study is named here once.
"""

from ssa_book import bench, leaderboard
from ssa_book.alternatives import comparison as alternatives
from ssa_book.encoder import experiment as encoder
from ssa_book.icl import experiments as icl, study as icl_study
from ssa_book.lm import experiment as decoder
from ssa_book.retrieval import experiment as retrieval

__all__ = ["alternatives", "bench", "decoder", "encoder", "icl", "icl_study", "leaderboard", "retrieval"]
