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

Its names are re-exported here, so that ``from ssa_book.icl import study; study.judge(...)`` reads
the study as one namespace. A test that replaces a name (``monkeypatch``) replaces it in the
module that looks it up, not here.
"""

from ssa_book.icl.study.design import (
    ABLATION_SEEDS,
    ARMS,
    ARM_LABELS,
    BINARY_ENDPOINT,
    COMPARISONS,
    CONTINGENT,
    ENDPOINTS,
    ENDPOINT_SIGMAS,
    FIRST_SEED,
    GENERALISES_BELOW,
    LENGTH_TREND,
    LENGTH_TREND_ENDPOINT,
    LENGTH_TREND_TASK,
    LINEAR_ENDPOINTS,
    LONGER_TRAINING,
    PILOT_SEEDS,
    PREMISE_COMPARISON,
    PRIMARY_SEEDS,
    QUANTIFICATION_ENDPOINTS,
    REGIME_COMPARISONS,
    REGIME_SEEDS,
    LENGTH_AND_SIZE_COMPARISONS,
    LENGTH_AND_SIZE_SEEDS,
    SSA_SLOPE_AT_ZERO,
    STARTING_POINT_SEEDS,
    Arm,
    Comparison,
    Endpoint,
    IncompleteStudyError,
    check_plan,
    error_at,
    generalises,
    judge,
    mean_error,
    needed,
    outcomes,
    paper_regime,
    runs,
)
from ssa_book.icl.study.power import pilot, pilot_power
from ssa_book.icl.study.conduct import (
    CHAPTER,
    TITLE,
    StudyCache,
    StudyChapter,
    comparison,
    compute_study_run,
    length_trend,
    load_run,
    longer_training_needed,
    plan,
    regenerate_command,
)
from ssa_book.icl.study.judging import (
    RAISED_AFTER_READING,
    SEED_AMENDMENTS,
    STARTING_POINT,
    STARTING_POINT_ENDPOINT,
    SeedAmendment,
    bounded_check_words,
    bounded_checks,
    claim_verdict,
    false_discovery_rows,
    not_kept,
    not_kept_words,
    rates_without_minimums,
    read_before_raise,
    readings_words,
    resampled_nulls,
    rule_amendment_changes,
    seeds_raised_note,
    starting_point_reading,
    verdict,
    verdict_rows,
)
from ssa_book.icl.study.regimes import (
    REGIME_MAP,
    REGIME_MAP_ENDPOINT,
    interval_spec,
    regime_map,
    regime_rows,
    regime_takeaway,
)
from ssa_book.icl.study.report import (
    GENERALISATION_CUTS,
    ablation_table,
    bounded_check_sentence,
    bounded_check_table,
    budget,
    chapter_answer,
    compute_sentence,
    endpoint_table,
    false_discovery_sentence,
    false_discovery_table,
    generalisation_cut_table,
    generalising_table,
    length_trend_sentence,
    plan_progress,
    plan_table,
    progress_sentence,
    progress_table,
    summary,
    verdict_table,
)
from ssa_book.icl.study.curves import arm_curves, error_along_sigma, first_layer

__all__ = [
    "ABLATION_SEEDS",
    "ARMS",
    "ARM_LABELS",
    "BINARY_ENDPOINT",
    "COMPARISONS",
    "CONTINGENT",
    "ENDPOINTS",
    "ENDPOINT_SIGMAS",
    "FIRST_SEED",
    "GENERALISES_BELOW",
    "LENGTH_TREND",
    "LENGTH_TREND_ENDPOINT",
    "LENGTH_TREND_TASK",
    "LINEAR_ENDPOINTS",
    "LONGER_TRAINING",
    "PILOT_SEEDS",
    "PREMISE_COMPARISON",
    "PRIMARY_SEEDS",
    "QUANTIFICATION_ENDPOINTS",
    "REGIME_COMPARISONS",
    "REGIME_SEEDS",
    "LENGTH_AND_SIZE_COMPARISONS",
    "LENGTH_AND_SIZE_SEEDS",
    "SSA_SLOPE_AT_ZERO",
    "STARTING_POINT_SEEDS",
    "Arm",
    "Comparison",
    "Endpoint",
    "IncompleteStudyError",
    "check_plan",
    "error_at",
    "generalises",
    "judge",
    "mean_error",
    "needed",
    "outcomes",
    "paper_regime",
    "runs",
    "pilot",
    "pilot_power",
    "CHAPTER",
    "TITLE",
    "StudyCache",
    "StudyChapter",
    "comparison",
    "compute_study_run",
    "length_trend",
    "load_run",
    "longer_training_needed",
    "plan",
    "regenerate_command",
    "STARTING_POINT",
    "STARTING_POINT_ENDPOINT",
    "bounded_check_words",
    "bounded_checks",
    "claim_verdict",
    "false_discovery_rows",
    "not_kept",
    "not_kept_words",
    "resampled_nulls",
    "rule_amendment_changes",
    "RAISED_AFTER_READING",
    "SEED_AMENDMENTS",
    "SeedAmendment",
    "rates_without_minimums",
    "read_before_raise",
    "readings_words",
    "seeds_raised_note",
    "interval_spec",
    "starting_point_reading",
    "verdict",
    "verdict_rows",
    "REGIME_MAP",
    "REGIME_MAP_ENDPOINT",
    "regime_map",
    "regime_rows",
    "regime_takeaway",
    "GENERALISATION_CUTS",
    "ablation_table",
    "bounded_check_sentence",
    "bounded_check_table",
    "budget",
    "chapter_answer",
    "compute_sentence",
    "endpoint_table",
    "false_discovery_sentence",
    "false_discovery_table",
    "generalisation_cut_table",
    "generalising_table",
    "length_trend_sentence",
    "plan_table",
    "plan_progress",
    "progress_sentence",
    "progress_table",
    "summary",
    "verdict_table",
    "arm_curves",
    "error_along_sigma",
    "first_layer",
]
