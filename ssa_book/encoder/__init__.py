"""The encoder study: BabyBERTa-style masked language models with any scorer, probed with Zorro.

:mod:`~ssa_book.encoder.corpus` (the AO-CHILDES corpus), :mod:`~ssa_book.encoder.tokenizer`,
:mod:`~ssa_book.encoder.model`, :mod:`~ssa_book.encoder.train`, :mod:`~ssa_book.encoder.zorro` (the
probing), :mod:`~ssa_book.encoder.experiment` (the chapter's cached runs and verdicts) and
:mod:`~ssa_book.encoder.claims` (its rows of the ledger).
"""
