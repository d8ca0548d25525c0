"""Every study of the book: importing this module registers every chapter in
:data:`ssa.chapters.CHAPTERS` (each study defines and registers its own chapter beside its code).

The pages' machinery that lists chapters (:mod:`ssa.sizes`, :mod:`ssa.reproduce`) imports this
module, not the studies one by one, so that a new study is named here once.
"""

from ssa import bench, leaderboard
from ssa.alternatives import comparison as alternatives
from ssa.encoder import experiment as encoder
from ssa.icl import experiments as icl, study as icl_study
from ssa.lm import experiment as decoder
from ssa.retrieval import experiment as retrieval

__all__ = ["alternatives", "bench", "decoder", "encoder", "icl", "icl_study", "leaderboard", "retrieval"]
