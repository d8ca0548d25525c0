r"""One verdict rule for every claim of the paper the book tests.

A claim is tested by a paired design: seed :math:`i` trains both models (SSA and softmax, say)
on the same batches, and gives one outcome each, :math:`t_i` and :math:`c_i`. The effect is the
mean paired difference in the paper's direction,

.. math:: d_i = s\,(t_i - c_i), \qquad \hat\delta = \frac1N \sum_i d_i,

with :math:`s = +1` when the paper says the outcome grows (accuracy) and :math:`s = -1` when it
says it shrinks (an error). Its 95% interval is the paired :math:`t` interval
(``scipy.stats.ttest_rel``), :math:`\hat\delta \pm t_{N-1,\,0.975}\, \hat\sigma_d / \sqrt N`.
Outcomes that are all-or-nothing per seed (an in-context learner generalises or fails) are far
from normal, and with few pairs the :math:`t` interval is then overconfident, so two guards
hold: no claim is decided by fewer than :data:`~ssa_book.verdicts.claim.MIN_PAIRS` pairs, and "better" or
"worse" also needs the Wilcoxon signed-rank test (``scipy.stats.wilcoxon``) at 5%.
An outcome that is 0 or 1 per seed (a seed generalises or it does not) is declared binary
(``Claim(binary=True)``), and its interval is Tango's score interval for a difference of paired
proportions (Tango, Statistics in Medicine 17:891, 1998), one of the intervals Fagerland, Lydersen
and Laake recommend (Statistics in Medicine 33:2850, 2014): with :math:`g` pairs where only the
treatment succeeds and :math:`l` where only the control does, it holds the :math:`\delta` with

.. math:: \left| \frac{g - l - N\delta}{\sqrt{N\,(2\tilde p_l + \delta(1 - \delta))}} \right| \le z_{0.975},

where :math:`\tilde p_l` is the maximum-likelihood rate of control-only successes given
:math:`\delta`. The :math:`t` interval of 0/1 differences is a point when every pair agrees,
and would call ten agreeing pairs "no difference" at any threshold; Tango's is then
:math:`\pm z^2 / (N + z^2)`, :math:`\pm 0.28` with ten pairs.
A claim whose outcome can flip from seed to seed (an in-context learner generalises or fails)
declares the largest paired difference one flip can make, :math:`F` (``Claim(largest_flip=1)`` for
an error in [0, 1]). Pairs that show no flip give a narrow :math:`t` interval, yet flips in a share
:math:`\tau / F` of the seeds, enough to move the mean by the threshold, go unseen in all
:math:`N` pairs with probability :math:`(1 - \tau/F)^N`; so "no difference that matters" also needs
:math:`(1 - \tau/F)^N \le 0.025` (:func:`~ssa_book.verdicts.claim.no_effect_pairs`: 36 pairs for :math:`\tau = 0.1`,
:math:`F = 1`), and with fewer pairs such a claim has too few seeds to decide. The same pairs are
needed for "better" and "worse": with fewer, whether one seed flips decides the sign, and
under nulls resampled from the book's own flip-prone outcomes (:func:`~ssa_book.verdicts.power.resampled_null_rates`) the
:math:`t` interval gave a false direction up to 30% of the time at 6 to 10 pairs, against at most
5% from 36 pairs on. Both directions and "no difference" thus share one pair minimum.
Each claim declares, before any result is read, a practical threshold :math:`\tau > 0`: the
smallest effect that would matter, with the reason for its size. A comparison of a treatment X
(SSA, say) with its control (softmax) then reads, in the book's one vocabulary:

===========================  ===================================================================
X better                     the interval excludes 0 on the paper's side and :math:`\hat\delta \ge \tau`
X worse                      the interval excludes 0 on the other side and :math:`\hat\delta \le -\tau`
no difference that matters   the interval lies within :math:`(-\tau, \tau)`; when it also excludes 0,
                             the small decided direction is said beside it ("X slightly worse")
undecided                    anything else; :attr:`~ssa_book.verdicts.verdict.Verdict.seeds_to_resolve` says about how many
                             pairs would decide it if the observed mean and spread held
too few seeds to decide      fewer pairs than the rule decides from (:data:`~ssa_book.verdicts.claim.MIN_PAIRS`, or
                             :func:`~ssa_book.verdicts.claim.no_effect_pairs` for outcomes that flip); the estimate is shown,
                             never a word that sounds like a finding
premise not shown            the measurement of the mechanism stayed below its cut in every seed
not learned                  a model of the comparison did not learn the task, so it tests nothing
not tested                   no paired outcomes
===========================  ===================================================================

(for outcomes that flip, every decision needs :func:`~ssa_book.verdicts.claim.no_effect_pairs` pairs). The rule is
symmetric: "better" and "worse" each need the interval to exclude 0 and the estimate to reach the
threshold on their side, and the three decided words exclude each other, so no word takes
precedence over another. A direction word also needs the signed-rank test, and, where a chapter
judges a family of comparisons together, its Benjamini-Hochberg adjusted p-value below
:data:`~ssa_book.verdicts.rule.FALSE_DISCOVERY_RATE` (:func:`~ssa_book.verdicts.families.control_false_discoveries`); a direction that fails either
reads "undecided".

What each outcome says of the paper's claim (:func:`~ssa_book.verdicts.words.claim_word`): "X better" says it **holds**;
"X worse" and "no difference that matters" say it **does not hold**; "undecided" and "too few seeds
to decide" leave it **undecided**. A claim of several parts (:func:`~ssa_book.verdicts.families.combine`) **holds in part** when
its parts differ and one at least supports it; it **does not hold** when they differ, none supports
it and one at least is decided against it: an adverse part is never folded into a milder word, and
an open part never into "no difference that matters". Parts that differ with none decided leave it
undecided (or premise not shown, not learned, not tested, in that order).

The :math:`t` interval stays an approximation for bounded, skewed differences. As a check that
assumes nothing about their distribution, :func:`~ssa_book.verdicts.robustness.bounded_check` decides a verdict again with
:func:`~ssa_book.verdicts.intervals.bounded_mean_interval`, an interval valid at any number of pairs for differences known to
lie in :math:`[-B, B]` (Waudby-Smith and Ramdas's betting interval); its price is width: 40 pairs
that agree exactly give about :math:`\pm 0.16\,B`. It is a robustness check, not the rule.

:func:`~ssa_book.verdicts.power.false_reproduction_rate` and :func:`~ssa_book.verdicts.power.power` measure the rule by simulation: with no
effect, "better" comes out at most 2.5% of the time for normal differences (one side of a
95% interval), and the tests check it stays under 5% for the all-or-nothing outcomes that
in-context learners give (a seed generalises or it does not).

Both draw the two arms from one distribution chosen by the caller. :func:`~ssa_book.verdicts.power.resampled_null_rates`
draws the null from a study's own paired differences instead, so that it keeps their shape (skew,
bounds, seeds that flip): with observed differences :math:`d_1, \dots, d_n` in the paper's
direction, recentred to :math:`e_i = d_i - \bar d` (mean exactly 0, the observed spread and shape),
each of :math:`S` simulated studies draws :math:`N` pairs :math:`D^*_1, \dots, D^*_N` independently
and uniformly from :math:`\{e_1, \dots, e_n\}` (resampling with replacement) and is judged by
:func:`~ssa_book.verdicts.rule.decide`, the code that judges the real study. The false "better" rate is the share of
the :math:`S` studies called "better" (the treatment better where it is not), the false
"worse" rate the share called "worse", and their sum the rate of a false directional
decision, about 5% for normal differences (2.5% each side of a 95% interval). Each rate :math:`r`
has Monte Carlo standard error :math:`\sqrt{r(1-r)/S} \le 0.011` at :data:`~ssa_book.verdicts.power.SIMULATIONS`. A sample
of :math:`n` differences shows flips at most at its own share of them: the measurement is only as
flip-prone as the sample it resamples.
For a binary claim the differences are :math:`-1, 0, +1`, and recentring would leave values that
no paired 0/1 outcomes give (Tango's interval counts gains and losses); the null keeps instead the
observed share :math:`p` of discordant pairs (those that differ) and makes a gain and a loss equally
likely, :math:`P(D^* = +1) = P(D^* = -1) = p/2`, :math:`P(D^* = 0) = 1 - p`: McNemar's null at the
observed discordance. :func:`~ssa_book.verdicts.power.resampled_null_table` measures a sequence of verdicts this way.

Each concern is a module, and a caller imports each name from the module that owns it (this file
re-exports nothing):

* :mod:`~ssa_book.verdicts.words`: the outcomes' words, what each says of the paper's claim, and how a page writes them;
* :mod:`~ssa_book.verdicts.glossary`: what each word means, for the glossary page;
* :mod:`~ssa_book.verdicts.intervals`: the 95% intervals (paired t, Tango's, a rate's, the betting interval);
* :mod:`~ssa_book.verdicts.claim`: a claim as declared before its results are read, and the fewest pairs that decide it;
* :mod:`~ssa_book.verdicts.rule`: the rule on paired differences, the signed-rank test, the pairs that would decide;
* :mod:`~ssa_book.verdicts.verdict`: a verdict with its evidence, in the words a page shows;
* :mod:`~ssa_book.verdicts.judge`: judging a claim from paired outcomes, and the blocks that record what was judged;
* :mod:`~ssa_book.verdicts.families`: verdicts taken together: false-discovery control, a claim of several parts;
* :mod:`~ssa_book.verdicts.robustness`: how firmly a verdict stands (the bounded check, the seeds it rests on);
* :mod:`~ssa_book.verdicts.readings`: what verdicts read together say (form or slope, a published effect);
* :mod:`~ssa_book.verdicts.power`: the rule measured by simulation (power, false directions under resampled nulls).
"""
