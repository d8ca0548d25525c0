"""The leaderboard: every registered scorer under every kind of shift the book measures.

:mod:`~ssa_book.leaderboard.board` declares its columns and reads its cells from the cache, judged;
:mod:`~ssa_book.leaderboard.tables` draws its tables and CSV; :mod:`~ssa_book.leaderboard.findings`
reads what they find (the counts, the statement, SSA across the shifts, the winners) and draws the
figure; :mod:`~ssa_book.leaderboard.claims` gives the rows of the ledger it judges (the paper's
statement on the alternative scorers, and SSA across two kinds of shift).
"""
