"""The paper's claims the book tests, and what the book found of each: one row per claim.

Each study names the claims of the paper it tests, with the function that reads their rows
from the result cache (:class:`ssa_book.chapters.Study`); the ledger (:mod:`ssa_book.ledger`)
iterates the studies (:data:`ssa_book.studies.STUDIES`) and sorts the rows in :data:`ORDER`, the
front page's order. A row never trains: a claim whose results are not cached is "not tested",
with the command that creates them. The helpers here are what the studies' rows share: a row's sentences, its seeds,
its parts.

The paper's side of a row is its :class:`PaperClaim`. Published numbers are not copied into it:
they stay in the study modules that compare against them, and a claim's ``numbers`` reads them.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

import numpy as np

from ssa_book.verdicts.claim import MIN_PAIRS, Claim, no_effect_pairs
from ssa_book.verdicts.judge import judge_unrecorded
from ssa_book.verdicts.words import (
    BETTER,
    CLAIM_WORDS,
    NEGLIGIBLE,
    NOT_TESTED,
    OPEN,
    OUTCOMES,
    TOO_FEW_SEEDS,
    UNDECIDED,
    WORSE,
    claim_word,
    counted_words,
    outcome_words,
)
from ssa_book.verdicts.rule import MAX_SEEDS
from ssa_book.verdicts.verdict import Verdict

# The outcomes of ssa_book.verdicts, the one verdict rule of the book.
VERDICTS = OUTCOMES
DIRECTIONS = (BETTER, WORSE)
# The paper's claims, in the order of the front page.
ORDER = (
    "theorem_1",
    "theorem_2",
    "quantification",
    "collapse",
    "linear",
    "perplexity_id",
    "perplexity_ood",
    "benchmarks",
    "probing",
    "alternatives",
    "across_shifts",
)


@dataclasses.dataclass(frozen=True)
class PaperClaim:
    claim: str  # the claim in a few words (the ledger's first column)
    statement: str  # what the paper says; "{...}" fields are filled from `numbers`
    source: str  # where in the paper
    chapter: str  # the book page that tests it: a _toc.yml entry's file name without folder
    numbers: Callable[[], dict] | None = None  # the published numbers, from the chapter module
    beyond_paper: bool = False  # the book's own test of the paper's thesis, not a claim the paper makes


def paper_figure(claim: PaperClaim) -> str:
    """The paper's side of a row: its statement, with the published numbers filled in."""
    return claim.statement.format(**claim.numbers()) if claim.numbers else claim.statement


@dataclasses.dataclass(frozen=True)
class LedgerRow:
    key: str  # the claim's key in ORDER
    claim: str
    paper: str  # the paper's figure
    ours: str  # what we measured, or why it is not tested
    profile: str  # the profile the numbers come from ("live": computed when the page is built)
    seeds: tuple[int, ...]  # seeds behind `ours` (empty: deterministic, or nothing measured)
    verdict: str  # one of VERDICTS
    section: str | None  # the book page (a _toc.yml file entry), None when the book has no such page
    command: str | None  # the command that (re)creates the cached results behind `ours`
    wall_time_s: float | None = None  # compute time of those results, from their provenance
    summary: str = ""  # `ours` in one short sentence: the key numbers and what the seeds decide
    parts: tuple[
        str, ...
    ] = ()  # the outcomes of the parts ssa_book.verdicts.families.combine made the verdict of (empty: none)
    regime: str = ""  # the training regime the verdict holds in (sizes, steps, learning rate, start, seeds)
    seed_counts: tuple[int, ...] = ()  # seeds per part where the parts ran different seeds (empty: len(seeds))
    published_excluded: bool = False  # the 95% interval excludes an effect of the size the paper publishes
    finding: str = ""  # what the front page's findings add beside the verdict (what a difference goes with)
    # The numbers the front page's scorecard draws: the judged verdicts behind the row's word, each
    # named (effect, 95% interval, threshold and units, in the paper's direction), one unit for all.
    headline: tuple[tuple[str, Verdict], ...] = ()
    paper_effect: float | None = (
        None  # the paper's published effect in the headline's units and direction (None: none published)
    )
    baseline: tuple[str, float, float] | None = (
        None  # (what, ours, the paper's): the softmax baseline's level here and there
    )
    # What the claim's word rests on where it rests on part of its evidence (:func:`only_on`: "linear panels only"),
    # said beside the word wherever it stands; a short form keeps its first clause.
    word_note: str = ""
    # The analysis changes made after the results were read that moved the word, each (what was set after reading, the
    # word before it: the claim's, "undecided", where the change moved the claim's word, else its parts', "SSA worse"),
    # said beside the word in every form (:func:`set_after_reading`; a short form leaves out the parts' words before,
    # never the claim's: :meth:`moved_claim_word`).
    after_reading: tuple[tuple[str, str], ...] = ()
    # A check its decided parts do not all pass, said beside their count ("a distribution-free check keeps 1 of 4").
    parts_note: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}; got {self.verdict!r}")

    def moved_claim_word(self, before: str) -> bool:
        """Whether a change of :attr:`after_reading` whose word before it was ``before`` moved the
        claim's word (``before`` is a word said of a claim, and another than the row's), not only its parts'."""
        return before in set(CLAIM_WORDS.values()) and before != claim_word(self.verdict)

    def note(self, short: bool = False, brief: bool = False) -> str:
        """What stands beside the word: what it rests on, then what was set after reading: "linear
        panels only; tally set after reading, undecided before it" (``short``: the first clause of
        what it rests on, and the word before a change where it was the claim's
        (:meth:`moved_claim_word`) or a direction of its parts' (:func:`directions_before`), whichever
        way it cut: "linear panels only; tally set after reading, undecided before it", "linear panels
        only; set-size minimum set after reading, SSA worse before it", but "set-size minimum set after
        reading" for a change that moved only open parts; such changes of one kind said once, with the
        one direction they moved, "set-size and prompt-error minimums set after reading, SSA worse
        before them"; ``brief``, a short form that leaves out their kinds: "minimums set after reading,
        SSA worse before them")."""
        short = short or brief
        basis = self.word_note.split(";")[0] if short else self.word_note
        changes = [
            set_after_reading(
                what, before, short=short and not self.moved_claim_word(before) and not directions_before(before)
            )
            for what, before in self.after_reading
        ]
        kinds = [what.rsplit(" ", 1) for what, _ in self.after_reading]
        directions = {label for _, before in self.after_reading for label in directions_before(before)}
        if (
            short
            and len(kinds) > 1
            and all(len(kind) == 2 for kind in kinds)
            and len({noun for _, noun in kinds}) == 1
            and not any(self.moved_claim_word(before) for _, before in self.after_reading)
            and len(directions) <= 1
        ):
            which = "" if brief else f"{listed([which for which, _ in kinds])} "
            direction = directions.pop() if directions else ""
            # "set-size and prompt-error minimums set after reading, SSA worse before them"
            changes = [f"{which}{kinds[0][1]}s set after reading" + (f", {direction} before them" if direction else "")]
        return "; ".join(filter(None, (basis, *changes)))


def directions_before(before: str) -> set[str]:
    """The directions a change made after reading moved, from the words before it (``before``):
    {"SSA worse"} for "SSA worse" or "SSA worse on 1 of 2"; {"sharper softmax worse", "SSA worse"} for
    "sharper softmax worse on 1 of 24, SSA worse on 4"; empty where it moved none ("undecided")."""
    labels = {part.split(" on ")[0].strip() for part in before.split(", ")}
    return {label for label in labels if label.endswith((" better", " worse"))}


def missing(
    key: str,
    claim: PaperClaim,
    profile: str,
    command: str,
    why: str = "results not in the cache",
    where: str | None = None,
) -> LedgerRow:
    """Claim ``key`` (``claim``) without results: ``why``, then ``command`` to run, or ``where``
    (MyST) the reader finds it when the command is the package's plumbing, kept off the argument's pages."""
    return LedgerRow(
        key,
        claim.claim,
        paper_figure(claim),
        f"{why}; {where or f'run `{command}`'}",
        profile,
        (),
        NOT_TESTED,
        None,
        command,
        summary=sentence(why.split(" (")[0]),
    )


def listed(names: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"


def panels_by_task(panels: Sequence[tuple[str, Verdict]]) -> tuple[dict[str, list[Verdict]], list[str], list[str]]:
    """Named panels by task (a panel's task is its name up to the first comma: 'linear' of 'linear,
    σ of x = 10'), the tasks that decide a panel, and those every panel of which is open."""
    by_task: dict[str, list[Verdict]] = {}
    for name, verdict in panels:
        by_task.setdefault(name.split(", ")[0], []).append(verdict)
    decided = [task for task, verdicts in by_task.items() if any(verdict.outcome not in OPEN for verdict in verdicts)]
    return by_task, decided, [task for task in by_task if task not in decided]


def only_on(decided: Sequence[str], open_: Sequence[str]) -> str:
    """The one note for a word decided on some tasks' panels while every panel of the other tasks is
    open, so that it is never read as said of all: "linear panels only" ("" when every task, or
    none, decides a panel)."""
    return f"{listed(decided)} panels only" if decided and open_ else ""


def set_after_reading(what: str, before: str, short: bool = False) -> str:
    """The one note for a word that an analysis change made after its results were read moved,
    whichever way it cut, with the word it gave before: "tally set after reading, undecided before
    it", "pair minimum set after reading, SSA worse before it" (``short``: "pair minimum set after
    reading"; "" when the change moved nothing)."""
    if not before:
        return ""
    return f"{what} set after reading" + ("" if short else f", {before} before it")


def at_rule_minimum(claim: Claim, verdict: Verdict) -> Verdict:
    """``verdict`` on ``claim`` judged again from its own paired differences with the rule's fewest
    pairs (:data:`~ssa_book.verdicts.claim.MIN_PAIRS`) instead of its chapter's, unrecorded."""
    differences = claim.direction * np.asarray(verdict.differences, dtype=float)  # treatment minus control
    alone = dataclasses.replace(claim, name=verdict.claim, treatment=verdict.treatment, min_pairs=MIN_PAIRS)
    if claim.binary:  # 0/1 outcomes whose difference is each pair's
        return judge_unrecorded(alone, (differences > 0).astype(float), (differences < 0).astype(float), resolve=False)
    return judge_unrecorded(alone, differences, np.zeros_like(differences), resolve=False)


def before_minimum(judged: Sequence[tuple[Claim, Verdict]]) -> str:
    """For verdicts exploratory only under their chapter's fewest pairs, a minimum above the rule's
    that was set after their results were read (the analysis-changes page, 550efa7), what they read
    under the rule's own minimum, for :func:`set_after_reading`: "SSA worse" (their words counted
    where they differ; "" when no verdict is exploratory for that alone)."""
    moved = [
        (claim, verdict)
        for claim, verdict in judged
        if verdict.outcome == TOO_FEW_SEEDS and verdict.pairs >= MIN_PAIRS and claim.min_pairs > MIN_PAIRS
    ]
    if not moved:
        return ""
    before = [at_rule_minimum(claim, verdict) for claim, verdict in moved]
    labels = {verdict.label() for verdict in before}
    return (
        labels.pop() if len(labels) == 1 else counted_words([(verdict.outcome, verdict.label()) for verdict in before])
    )


# What the pairs an outcome that flips needs for a direction are called beside a word they moved: they were
# set after results were read (the analysis-changes page, 4e737d3), and every such outcome is a prompt error.
FLIP_MINIMUM = "prompt-error minimum"
FLIP_MINIMUM_SET_AFTER_READING = "4e737d3"  # its entry in ssa_book.analysis_changes.CHANGES
# The change, also made after results were read, that had "no difference that matters" on such an outcome need those
# pairs first (its entry in ssa_book.analysis_changes.CHANGES): neither half of the minimum was declared before reading.
FLIP_NO_DIFFERENCE_SET_AFTER_READING = "47a4544"


def without_minimums(claim: Claim) -> Claim:
    """``claim`` with the rule's own fewest pairs, :data:`~ssa_book.verdicts.claim.MIN_PAIRS`, for a
    direction: without its chapter's minimum (as :func:`at_rule_minimum` judges) and without the pairs
    an outcome that flips needs (as :func:`before_flip_minimum_verdict`), both set after the results were read."""
    return dataclasses.replace(claim, min_pairs=MIN_PAIRS, largest_flip=None)


def before_flip_minimum_verdict(claim: Claim, verdict: Verdict) -> Verdict:
    """``verdict`` judged again as the rule judged it before :data:`FLIP_MINIMUM_SET_AFTER_READING`
    (unrecorded): a direction from the rule's own minimum on, "no difference that matters" on an
    outcome that flips only from :func:`~ssa_book.verdicts.claim.no_effect_pairs` on, "undecided"
    otherwise (the rule's word then for too few pairs as well)."""
    again = at_rule_minimum(without_minimums(claim), verdict)
    if again.outcome == TOO_FEW_SEEDS or (again.outcome == NEGLIGIBLE and verdict.pairs < no_effect_pairs(claim)):
        return dataclasses.replace(again, outcome=UNDECIDED)
    return again


def before_flip_minimum(judged: Sequence[tuple[Claim, Verdict]]) -> str:
    """For verdicts on outcomes that flip from seed to seed, exploratory only because "better" and
    "worse" need as many pairs as "no difference" (:func:`~ssa_book.verdicts.claim.no_effect_pairs`), a
    minimum set after their results were read (:data:`FLIP_MINIMUM_SET_AFTER_READING`), what the rule
    read before it (:func:`before_flip_minimum_verdict`), its directions counted: "SSA worse" (every one
    of them), "SSA worse on 1 of 2" (the other read no direction); "" when none read a direction before it."""
    before = [
        moved[1] for claim, verdict in judged if (moved := minimum_moved(claim, verdict)) and moved[0] == FLIP_MINIMUM
    ]
    directions = [verdict.label() for verdict in before if verdict.outcome in DIRECTIONS]
    if len(directions) == len(before) and len(set(directions)) == 1:
        return directions[0] if directions else ""
    counts = {words: directions.count(words) for words in dict.fromkeys(directions)}
    return ", ".join(
        f"{words} on {n}" + (f" of {len(before)}" if i == 0 else "") for i, (words, n) in enumerate(counts.items())
    )


def minimum_moved(claim: Claim, verdict: Verdict, what: str = "pair minimum") -> tuple[str, Verdict] | tuple[()]:
    """The pair minimum set after reading that left ``verdict`` exploratory, and the verdict the
    rule gave before it: (``what``, ...) for its chapter's (:func:`at_rule_minimum`),
    (:data:`FLIP_MINIMUM`, ...) for outcomes that flip (:func:`before_flip_minimum_verdict`); () when
    neither moved it."""
    if verdict.outcome != TOO_FEW_SEEDS or verdict.pairs < MIN_PAIRS:
        return ()
    if claim.min_pairs > MIN_PAIRS:
        return what, at_rule_minimum(claim, verdict)
    if claim.largest_flip is not None and verdict.pairs < no_effect_pairs(claim):
        return FLIP_MINIMUM, before_flip_minimum_verdict(claim, verdict)
    return ()


def minimums_after_reading(
    judged: Sequence[tuple[Claim, Verdict]], what: str = "pair minimum"
) -> tuple[tuple[str, str], ...]:
    """The pair minimums set after the results of ``judged`` were read that moved their words, each
    with the words before it, for :func:`set_after_reading`: the chapter's (called ``what``,
    :func:`before_minimum`) and the one for outcomes that flip (:data:`FLIP_MINIMUM`,
    :func:`before_flip_minimum`); those that moved nothing left out."""
    return tuple(
        (name, before)
        for name, before in ((what, before_minimum(judged)), (FLIP_MINIMUM, before_flip_minimum(judged)))
        if before
    )


def minimum_notes(judged: Sequence[tuple[Claim, Verdict]], what: str = "pair minimum") -> str:
    """:func:`minimums_after_reading` said: "pair minimum set after reading, SSA worse before it" ("" for none)."""
    return "; ".join(set_after_reading(*change) for change in minimums_after_reading(judged, what))


def sentence(text: str) -> str:
    text = text.strip().rstrip(".")
    return text[0].upper() + text[1:] + "." if text else ""


def parts_of(verdict: Verdict) -> tuple[str, ...]:
    """The outcomes of the parts ``verdict`` combines (empty for a single verdict)."""
    return tuple(part.outcome for _, part in verdict.parts)


def judged_parts(verdict: Verdict) -> list[Verdict]:
    """The verdicts judged on paired seeds inside ``verdict``: itself, or its parts' (recursively)."""
    if verdict.parts:
        return [leaf for _, part in verdict.parts for leaf in judged_parts(part)]
    return [verdict] if verdict.interval is not None else []


def headline_of(verdict: Verdict, endpoint: str | None = None, limit: int = 6) -> tuple[tuple[str, Verdict], ...]:
    """The judged parts of ``verdict`` a row's scorecard draws, each named: only those whose name
    holds ``endpoint`` when some do (at every level of a verdict of parts of parts), only those in the
    first one's units, at most ``limit``; a verdict judged on paired seeds itself is its own one part, named ""."""
    if not verdict.parts:
        return (("", verdict),) if verdict.interval is not None and verdict.effect is not None else ()
    judged = [
        (f"{name}, {inner}" if inner and name else inner or name, leaf)
        for name, part in verdict.parts
        for inner, leaf in headline_of(part, endpoint, limit=limit)
    ]
    chosen = [(name, part) for name, part in judged if endpoint and endpoint in name] or judged
    return tuple((name, part) for name, part in chosen if part.units == chosen[0][1].units)[:limit] if chosen else ()


def seeds_phrase(verdict: Verdict) -> str:
    """What the seeds decide, in a few words: "3 paired seeds; about 6 to 12 would decide" (at the
    observed mean and spread, :attr:`ssa_book.verdicts.verdict.Verdict.seeds_to_resolve`; "" when nothing was
    judged on paired seeds); for a claim its decided parts already decide, what more seeds would decide
    is its open parts: "40 paired seeds; about 2,115 would decide its 1 open part"."""
    judged = judged_parts(verdict)
    if not judged:
        return ""
    fewest, most = min(v.pairs for v in judged), max(v.pairs for v in judged)
    text = f"{fewest}{'' if fewest == most else f' to {most}'} paired seed{'' if most == 1 else 's'}"
    undecided = [v for v in judged if v.outcome in OPEN]
    if not undecided:
        return text
    needed = sorted(v.seeds_to_resolve for v in undecided if v.seeds_to_resolve)
    what = f" its {plural(len(undecided), 'open part')}" if verdict.parts and verdict.outcome not in OPEN else ""
    if needed:
        text += f"; about {needed[0]:,}{'' if needed[0] == needed[-1] else f' to {needed[-1]:,}'} would decide{what}"
    if any(v.seeds_to_resolve is None for v in undecided):
        text += f"; {'some' if needed else 'it'} would need more than {MAX_SEEDS:,}"
    return text


def short_summary(verdict: Verdict, numbers: str = "") -> str:
    """A row's summary: its key numbers and what the seeds decide, in one sentence. The parts of a
    claim of several parts are counted in the verdict's own cell (:func:`comparison_words`), so that
    the one word there never stands alone over an adverse part."""
    return sentence("; ".join(part for part in (numbers, seeds_phrase(verdict)) if part))


def ours(verdict: Verdict, numbers: str = "") -> str:
    """Our side of a row: the numbers, then the verdict's own sentence (its evidence), or for a
    claim of several parts each part's sentence."""
    if verdict.parts:
        said = " ".join(part.sentence() for _, part in verdict.parts)
        listing = "; ".join(f"{name}: {part.label()}" for name, part in verdict.parts)
        extra = verdict.detail.removeprefix(listing).strip("; ")  # what the chapter added, e.g. a calibration
        if extra:
            said += " " + extra[0].upper() + extra[1:].rstrip(".") + "."
    else:
        said = verdict.sentence()
        said = said.split(": ", 1)[1] if ": " in said else said
        if verdict.detail and verdict.detail not in said:  # e.g. how far the baseline is from its reference
            said += " " + verdict.detail.rstrip(".") + "."
    return (f"{numbers}. " if numbers else "") + said[0].upper() + said[1:]


def plural(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def paired(seeds: Sequence[int]) -> str:
    return plural(len(seeds), "paired seed")


def tally(verdict: Verdict, one: str, many: str) -> str:
    """ "24 comparisons ...: 20 undecided, 4 no difference that matters" over the judged parts,
    in the book's words (the treatment named where the word has a direction)."""
    judged = judged_parts(verdict)
    counts: dict[str, int] = {}
    for part in judged:
        word = part.word()
        counts[word] = counts.get(word, 0) + 1
    return f"{len(judged)} {one if len(judged) == 1 else many}: " + ", ".join(
        f"{n} {word}" for word, n in counts.items()
    )


def factored(named: Sequence[tuple[str, str]]) -> str:
    """ "name: value; ..." with what every name shares (comma-separated parts, leading or trailing)
    said once: [("every, error at σ = 10", "-0.17"), ("some, error at σ = 10", "-0.23")] ->
    "error at σ = 10: every -0.17; some -0.23"."""
    parts = [name.split(", ") for name, _ in named]
    if len(parts) < 2:
        return "; ".join(f"{name}: {value}" for name, value in named)
    shortest = min(map(len, parts))
    lead = next((i for i in range(shortest) if len({tuple(p[: i + 1]) for p in parts}) > 1), shortest)
    tail = next(
        (i for i in range(shortest - lead) if len({tuple(p[len(p) - i - 1 :]) for p in parts}) > 1), shortest - lead
    )
    if lead == tail == 0 or any(len(p) == lead + tail for p in parts):
        return "; ".join(f"{name}: {value}" for name, value in named)
    shared = ", ".join(parts[0][:lead] + parts[0][len(parts[0]) - tail :])
    return f"{shared}: " + "; ".join(
        f"{', '.join(p[lead : len(p) - tail])} {value}" for p, (_, value) in zip(parts, named)
    )


# Where a regime's parts split: "4 layers of width 64, 1,000 steps at learning rate 0.001 ...; 3 paired seeds".
REGIME_PARTS = r", | at |; "


# A row's regime names the paper's beside it: "... n = 1.49 (the paper: 12 layers of width 256, ...); 40 paired seeds".
PAPER_REGIME = re.compile(r" \(the paper: ([^()]*)\)")


def differing(regime: str, other: str) -> str:
    """The parts of ``other`` (comma-separated, as a regime names them) that ``regime`` lacks, so a
    variant's regime names only what it changes: "1,000 steps"."""
    mine = set(re.split(REGIME_PARTS, PAPER_REGIME.sub("", regime)))
    return ", ".join(part for part in re.split(REGIME_PARTS, other) if part not in mine) or "the same"


# The rows whose verdicts compare SSA with softmax (the alternatives row judges a statement about
# other scorers, and the theorem rows are derivations).
SSA_ROWS = ("quantification", "collapse", "linear", "perplexity_id", "perplexity_ood", "probing", "across_shifts")


def comparison_words(row: LedgerRow) -> str:
    """What the row's comparison found, in the book's words, its parts counted: "SSA worse on 5
    of 6 parts, undecided on 1"; "SSA worse" for a row of one comparison; for a row that compares
    no treatment with softmax (the theorems, the alternatives' statement), its parts counted in
    the claim's words where they differ, else ""."""
    if row.key not in SSA_ROWS:
        if len(set(row.parts)) < 2:
            return ""
        return counted_words([(outcome, outcome_words(outcome, "")) for outcome in row.parts], of=" parts")
    if not row.parts:
        return outcome_words(row.verdict)
    counted = counted_words([(outcome, outcome_words(outcome)) for outcome in row.parts], of=" parts")
    return counted + _small_directions(row)


def _small_directions(row: LedgerRow) -> str:
    """The small decided directions beside "no difference that matters" among the row's headline
    verdicts, counted: "; SSA slightly better on 1" ("" for none), so that a tally of parts never
    drops a direction its verdicts say (a clause, not a bracket: the tally is itself said in brackets)."""
    found = [small for _, verdict in row.headline if (small := verdict.small_direction())]
    counts = {small: found.count(small) for small in dict.fromkeys(found)}
    return f"; {', '.join(f'{small} on {n}' for small, n in counts.items())}" if counts else ""
