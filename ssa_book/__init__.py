"""ssa_book: the machinery of the SSA book, above the ``ssa`` library.

Layers, each importing only those below it (``.importlinter`` holds the contracts): the command
line (``python -m ssa_book``); the pages' readers (ledger, reproducing page, reruns); the
studies (in-context, decoder, encoder, max retrieval, alternatives, leaderboard, theory,
benchmark), each registering its chapter in ``ssa_book.chapters``; the protocol (verdicts,
training harness, result cache, profiles, data); and below them the library, ``ssa``.
Installs with the ``[book]`` extra.
"""
