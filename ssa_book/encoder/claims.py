"""The paper's encoder claim (grammatical probing on Zorro) as a row of the ledger, from the
encoder chapter's cached runs and verdict."""

from __future__ import annotations

from ssa_book.claims import (
    LedgerRow,
    PaperClaim,
    headline_of,
    missing,
    ours,
    paired,
    paper_figure,
    parts_of,
    short_summary,
)
from ssa_book.verdicts.readings import exploratory_effect_sentence
from ssa_book.encoder import confirmation, experiment
from ssa_book.encoder.experiment import PAPER_ACCURACIES
from ssa_book.results.errors import CacheMissError
from ssa_book.results.provenance import total_wall_time


def _probing_numbers() -> dict:

    gains = [paper["ssa"] - paper["softmax"] for paper in PAPER_ACCURACIES.values()]
    return {"paradigms": len(gains), "low": min(gains), "high": max(gains)}


def paper_gain_reading(runs) -> str:
    """Where the paper's gain lies against each part's interval, for the chapter's prose: the
    decided intervals' placement (:func:`ssa_book.encoder.experiment.paper_gain_sentence`), else,
    while every part is exploratory, where it lies as an estimate
    (:func:`ssa_book.verdicts.readings.exploratory_effect_sentence`)."""
    placed = experiment.paper_gain_sentence(runs)
    if not placed:
        gains = experiment.paper_gains()
        mean = sum(gains.values()) / len(gains)
        placed = exploratory_effect_sentence(
            {part: (verdict, gains.get(part, mean)) for part, verdict in experiment.paradigm_verdicts(runs).items()},
            "points",
        )
    return (
        placed[0].upper() + placed[1:] + "." if placed else "No part has paired seeds to set the paper's gain against."
    )


def encoder_row(profile: str) -> LedgerRow:
    command = experiment.regenerate_command(profile)
    try:
        runs = experiment.run_all(profile, progress=False)
    except CacheMissError:
        return missing("probing", CLAIMS["probing"], profile, command)
    verdict = experiment.probing_verdict(runs)
    provenances = [run.provenance for run in runs]
    headline = verdict.parts[0][1] if verdict.parts else verdict
    short = (
        f"SSA's mean gain over softmax on the paper's paradigms: {headline.effect:+.2g} points"
        if headline.effect is not None
        else ""
    )
    excluded = experiment.paper_gain_placement(runs)[experiment.HEADLINE] == "above"
    if short and excluded:
        gains = experiment.paper_gains().values()
        short += f"; the 95% interval excludes the paper's mean gain ({sum(gains) / len(gains):.1f} points)"
    calibrated = experiment.calibration(runs)
    caveat = (
        (
            f"softmax's overall Zorro accuracy here is {calibrated['mean']:.1f}%, BabyBERTa's {calibrated['reference']:g}%: a null "
            "this far from the paper's baseline says little of its scale"
        )
        if calibrated["far"]
        else ""
    )
    found, summary = ours(verdict), short_summary(verdict, short)
    if profile == confirmation.PROFILE:
        confirmatory_runs = confirmation.cached_runs(profile)
        confirmed = confirmation.sentence(confirmatory_runs)
        caveat = f"{caveat}; {confirmed[0].lower()}{confirmed[1:].rstrip('.')}" if caveat else confirmed.rstrip(".")
        found += f" {confirmed}"
        summary = f"{summary.rstrip('.')}; {confirmation.short(confirmatory_runs)}."
    return LedgerRow(
        "probing",
        CLAIMS["probing"].claim,
        paper_figure(CLAIMS["probing"]),
        found,
        profile,
        tuple(sorted({run.seed for run in runs})),
        verdict.outcome,
        None,
        command,
        total_wall_time(provenances),
        summary,
        parts_of(verdict),
        f"{experiment.regime(profile)}; {paired(sorted({run.seed for run in runs}))}",
        published_excluded=excluded,
        finding=caveat,
        headline=headline_of(verdict, experiment.HEADLINE),
        paper_effect=sum(experiment.paper_gains().values()) / len(experiment.paper_gains()),
        baseline=("the encoder's softmax Zorro accuracy (%)", calibrated["mean"], calibrated["reference"])
        if "mean" in calibrated
        else None,
    )


CLAIMS: dict[str, PaperClaim] = {
    "probing": PaperClaim(
        "Encoder (BabyBERTa) grammatical probing on Zorro",
        "SSA beats softmax on the {paradigms} paradigms it reports, by {low:.2f} to {high:.2f} accuracy points.",
        "paper, BabyBERTa Zorro table (holistic scoring)",
        "encoder",
        _probing_numbers,
    ),
}


def encoder_rows(profile: str) -> list[LedgerRow]:
    return [encoder_row(profile)]
