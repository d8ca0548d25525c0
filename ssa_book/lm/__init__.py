"""Decoder-only language model: the paper's Nemotron-style pre-training with any scorer.

``ssa_book.lm.config`` (profiles), ``ssa_book.lm.data`` (sources, split, packing), ``ssa_book.lm.tokenizer``,
``ssa_book.lm.model``, ``ssa_book.lm.train`` (torchrun-ready loop), ``ssa_book.lm.evaluate`` (perplexity,
BLiMP), ``ssa_book.lm.lm_eval_adapter`` (the ``ssa-lm`` model for lm-eval), ``ssa_book.lm.experiment``
(the chapter's cached results and verdict). Command line: ``python -m ssa_book decoder --help``.
"""
