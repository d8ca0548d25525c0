"""Alternative scorers: every scorer of :mod:`ssa.scoring` through the in-context-learning tasks.

The paper says it tried temperature softmax, sparsemax, entmax, cosFormer and SA-softmax and
found "none consistently better than softmax", with no numbers. This chapter trains
every registered scorer (``ssa.scoring.scorer_names()``: registering a new one adds it here with
no other change than rerunning) on the same tasks, shifts, budget and hyperparameters as the
In-context learning chapters, and compares them.

The runs *are* the In-context learning chapters' experiments: one experiment per task x scorer x
seed from :func:`ssa_book.icl.experiments.experiment_config`, cached under
``results/<profile>/icl/<task>/<scorer>/``; softmax and SSA are read from exactly the entries
those chapters made. :mod:`~ssa_book.alternatives.comparison` turns them into the table, ranks and
collapse diagnostics; :mod:`~ssa_book.alternatives.statement` into each scorer's verdict against softmax
and the paper's statement (by the book's one rule, :mod:`ssa_book.verdicts`, on errors paired by seed);
:mod:`~ssa_book.alternatives.cost` measures each scorer's cost; :mod:`~ssa_book.alternatives.figures`
draws them.

Regenerate (resumable, cached per run):
``python -m ssa_book regenerate alternative_scorers --profile cpu --jobs 2`` (:mod:`ssa_book.regenerate`).
"""
