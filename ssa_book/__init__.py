"""ssa_book: the machinery of the SSA book, above the ``ssa`` library.

Layers, each importing only those below it (``.importlinter`` holds the contracts): the command
line (``python -m ssa_book``); the pages' readers (ledger, reproducing page, reruns); the
studies (in-context, decoder, encoder, max retrieval, alternatives, leaderboard, theory,
benchmark), each listed once as a ``ssa_book.chapters.Study`` in ``ssa_book.studies`` (its chapters,
the kinds of run they plan, the readers of its runs, the paper's claims it judges); the protocol
(verdicts, training harness, result cache, profiles, data); and below them the library,
``ssa``.
Installs with the ``[book]`` extra.
"""
