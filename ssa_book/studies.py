"""Every study of the book: importing this module registers each of them
(:data:`ssa_book.chapters.STUDIES`), with its chapters, kinds of run, readers and the claims of the
paper it tests. Each study registers itself from the package or module that holds it.

The book's machinery that iterates the studies (:mod:`ssa_book.regenerate`, :mod:`ssa_book.sizes`,
:mod:`ssa_book.reproduce`, :mod:`ssa_book.ledger`, :mod:`ssa_book.reruns`) imports this module, not
the studies one by one, so that a new study is named here once.
"""

from ssa_book import alternatives, bench, icl, leaderboard, lm as decoder, encoder, retrieval, theory

__all__ = ["alternatives", "bench", "decoder", "encoder", "icl", "leaderboard", "retrieval", "theory"]
