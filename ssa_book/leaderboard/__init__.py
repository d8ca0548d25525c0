"""The leaderboard: every registered scorer under every kind of shift the book measures.

:mod:`~ssa_book.leaderboard.board` declares its columns, reads its cells from the cache, judges them
and draws its tables and figure; :mod:`~ssa_book.leaderboard.claims` gives the rows of the ledger it
judges (the paper's statement on the alternative scorers, and SSA across two kinds of shift).
"""
