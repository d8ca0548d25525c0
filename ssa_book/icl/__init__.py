"""In-context learning under distribution shift (the paper's central experiments).

Modules, in the spirit of Garg et al. (2022): :mod:`~ssa_book.icl.tasks` (labels and losses),
:mod:`~ssa_book.icl.samplers` (prompts and the paper's shifts), :mod:`~ssa_book.icl.curriculum`,
:mod:`~ssa_book.icl.models` (GPT-2 with read-in/read-out and a pluggable scorer),
:mod:`~ssa_book.icl.train` (seeded, checkpointed, resumable), :mod:`~ssa_book.icl.evaluate` (metrics,
baselines, bootstrap bands), :mod:`~ssa_book.icl.diagnostics` (attention collapse),
:mod:`~ssa_book.icl.experiments` (configs per profile, cached runs) and :mod:`~ssa_book.icl.verdicts`.
Regenerate every cached result: ``python -m ssa_book regenerate icl_collapse --profile cpu`` (:mod:`ssa_book.regenerate`).
"""
