"""The powered in-context study: does SSA make in-context learners generalise under input-scale
shift, and why? Its analysis plan, declared here before any of its runs.

The plan fixes, before a single study run exists:

* the **arms** (:data:`ARMS`): a scorer with its settings and training, each one config away
  from the chapters' in-context learners (:func:`ssa_book.icl.experiments.experiment_config`);
* the **endpoints** (:data:`ENDPOINTS`): what is read from each run, on which task, with the
  claim it tests (direction, threshold and the reason for its size, :class:`ssa_book.verdicts.claim.Claim`);
* the **comparisons** (:data:`COMPARISONS`): treatment arm against control arm, paired by seed
  (the same seed gives both the same initialisation stream and the same batches), on which
  tasks, with how many seeds, read at which endpoints, in which order of priority;
* the **test**: :func:`ssa_book.verdicts.judge.judge` (paired t interval, Wilcoxon guard, at least 6 pairs).

Seeds start at :data:`FIRST_SEED`: the chapters' seeds 0-2 were looked at (they are the pilot
that sized the study, :data:`PILOT_SEEDS`), so none of them is part of it. :data:`PRIMARY_SEEDS`
was chosen from the pilot's paired differences of softmax and SSA on "every" (the cpu profile,
regenerated at code version 1): at their spread, :func:`pilot_power` gave the rule a power of
about 0.84 with 40 pairs for a true difference of 0.3 in the share of seeds that generalise
(0.47 for 0.2, which sits at that endpoint's threshold, where no seed count passes one half),
and about 0.88 for a true difference of 0.2 in prompt error at σ = 10. A comparison is judged on a task
only when every one of its seeds is cached for both arms on that task; fewer is an error
(:class:`IncompleteStudyError`), never a smaller study. The runs are computed in priority order by
``python -m ssa_book regenerate icl_study`` and cached like every other result.

The package keeps one concern a module, each importing only those listed before it:

* :mod:`~ssa_book.icl.study.design`: what the plan declares: its arms, endpoints, comparisons and
  seeds, the check that it can be carried out, the runs it needs, and the test of one comparison;
* :mod:`~ssa_book.icl.study.power`: the pilot that sized the study, and the rule's power at its spread;
* :mod:`~ssa_book.icl.study.conduct`: the plan as carried out at a profile (with the contingency on
  training length), the chapter that registers its runs, and the cache the pages read them from;
* :mod:`~ssa_book.icl.study.judging`: the verdicts and the checks of the rule;
* :mod:`~ssa_book.icl.study.regimes`: SSA against softmax in each training regime of the study;
* :mod:`~ssa_book.icl.study.report`: the tables and sentences the pages show;
* :mod:`~ssa_book.icl.study.curves`: each arm's curves along sigma, for the figures.

A caller imports each name from the module that owns it (``from ssa_book.icl.study import design as
study_design``); a test that replaces a name (``monkeypatch``) replaces it in the module that looks it up.
"""
