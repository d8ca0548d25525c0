"""Decoder-only language model: the paper's Nemotron-style pre-training with any scorer.

``ssa.lm.config`` (profiles), ``ssa.lm.data`` (sources, split, packing), ``ssa.lm.tokenizer``,
``ssa.lm.model``, ``ssa.lm.train`` (torchrun-ready loop), ``ssa.lm.evaluate`` (perplexity,
BLiMP), ``ssa.lm.lm_eval_adapter`` (the ``ssa-lm`` model for lm-eval), ``ssa.lm.experiment``
(the chapter's cached results and verdict). Command line: ``python -m ssa decoder --help``.
"""
