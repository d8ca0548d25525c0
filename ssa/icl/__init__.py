"""In-context learning under distribution shift (the paper's central experiments).

Modules, in the spirit of Garg et al. (2022): :mod:`~ssa.icl.tasks` (labels and losses),
:mod:`~ssa.icl.samplers` (prompts and the paper's shifts), :mod:`~ssa.icl.curriculum`,
:mod:`~ssa.icl.models` (GPT-2 with read-in/read-out and a pluggable scorer),
:mod:`~ssa.icl.train` (seeded, checkpointed, resumable), :mod:`~ssa.icl.evaluate` (metrics,
baselines, bootstrap bands), :mod:`~ssa.icl.diagnostics` (attention collapse),
:mod:`~ssa.icl.experiments` (configs per profile, cached runs) and :mod:`~ssa.icl.verdicts`.
Regenerate every cached result: ``python -m ssa regenerate icl_collapse --profile cpu`` (:mod:`ssa.regenerate`).
"""
