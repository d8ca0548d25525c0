"""Do reruns match the book? How far a rerun on another machine moves the cached numbers, and
whether any verdict would change.

A float32 training run rounds differently on CPUs with other vector units (ATen and MKL pick
their kernels by CPU), and the differences grow through training, so a rerun elsewhere gives other
per-seed numbers. Two measurements say by how much, each stored as a cache entry of its own, one
per machine (:func:`ssa_book.results.cache.record_entry`, keyed by the CPU model and ATen's CPU capability;
a new measurement on a machine replaces its old one, and those of other machines accumulate):

* ``python -m ssa_book reruns run --profile cpu [--jobs 2]`` recomputes :data:`SUBSET`, a fixed subset
  of the cached runs, into a fresh, empty results folder through the command a reader uses
  (``python -m ssa_book regenerate CHAPTER ...``), and compares each rerun entry with the committed
  one: the chapter's endpoints, the largest difference over every number of the result, and the
  chapter's verdicts re-judged with the rerun in place of the cached seed
  (:func:`compare_run`). A run of a chapter of several setups names its setup (max retrieval's
  original one: :class:`SetupReader`); the chapter's one command computes every setup it plans.
  Stored under ``results/<profile>/reruns/compared/``; read by :func:`rerun_table` and
  :func:`rerun_summary`, which say of each run of :data:`SUBSET` that a machine's record holds
  no row of (a record made before the run joined the subset) that it is not in that record's
  subset; ``python -m ssa_book reruns table`` prints them. ``reruns run --missing`` reruns only
  the runs this machine's record lacks, or holds for another entry than the cache's today (a
  changed config or code version), and keeps its other rows, each with the commit it was rerun
  at (:func:`lacking`, :func:`merged`).
* ``python -m ssa_book reruns bitwise --profile smoke`` trains one short run of each chapter of the
  subset again and again, each in a fresh process, under the settings of
  :data:`BITWISE_SETTINGS` (ATen's capability pinned, MKL's conditional numerical
  reproducibility, deterministic algorithms) and says which give the same bits
  (:func:`bitwise`). Stored under ``results/cpu/reruns/bitwise/`` (see
  :data:`BITWISE_RECORD_PROFILE`); read by :func:`bitwise_table` and :func:`bitwise_summary`.

Three modules: :mod:`ssa_book.reruns.comparison` reruns the subset and compares it,
:mod:`ssa_book.reruns.report` judges the stored comparisons again and words them for the pages,
:mod:`ssa_book.reruns.bits` measures bitwise reproducibility.

This is a book-layer package: it reads the chapters' own modules, and nothing in the library
(:mod:`ssa.scoring`, :mod:`ssa.attention`, :mod:`ssa.kernels`, :mod:`ssa.hf`) imports it.
"""
