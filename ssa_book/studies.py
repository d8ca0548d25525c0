"""Every study of the book: importing this module registers every chapter in
:data:`ssa_book.chapters.CHAPTERS` and every claim of the paper the book tests in
:data:`ssa_book.claims.PAPER` (each study registers its own beside its code).

The pages' machinery that lists chapters or claims (:mod:`ssa_book.sizes`, :mod:`ssa_book.reproduce`,
:mod:`ssa_book.ledger`) imports this module, not the studies one by one, so that a new study is named
here once.
"""

from ssa_book import bench, leaderboard, leaderboard_claims, theory
from ssa_book.alternatives import comparison as alternatives
from ssa_book.encoder import claims as encoder_claims, experiment as encoder
from ssa_book.icl import claims as icl_claims, experiments as icl, study as icl_study
from ssa_book.lm import claims as decoder_claims, experiment as decoder
from ssa_book.retrieval import experiment as retrieval

__all__ = ["alternatives", "bench", "decoder", "decoder_claims", "encoder", "encoder_claims", "icl", "icl_claims", "icl_study",
           "leaderboard", "leaderboard_claims", "retrieval", "theory"]
