"""The claims ledger: every claim present, a missing cache is "not tested", synthetic caches
give the expected verdicts, and no number is typed where it should be computed."""

import dataclasses
import json
import re
import string

import pytest

from ssa import ledger
from ssa.results import CACHE_SCHEMA_VERSION, entry_path

CLAIMS = ("theorem_1", "theorem_2", "quantification", "collapse", "linear", "perplexity_id", "perplexity_ood",
          "benchmarks", "probing", "alternatives")


def _write_entry(results_dir, experiment: str, config, result: dict, profile: str = "cpu") -> None:
    """A cache entry as ssa.results.cached writes it, without running anything."""
    if dataclasses.is_dataclass(config):
        config = dataclasses.asdict(config)
    config = json.loads(json.dumps(config))  # tuples become lists, as in the cache
    path = entry_path(experiment, config, profile=profile, results_dir=results_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = {"schema_version": CACHE_SCHEMA_VERSION, "experiment": experiment, "profile": profile, "config": config,
             "result": result, "provenance": {"seed": config.get("seed"), "wall_time_s": 10.0, "device": "cpu"}}
    path.write_text(json.dumps(entry), encoding="utf-8")


def _by_key(rows):
    return {row.key: row for row in rows}


def test_the_ledger_has_every_headline_claim_once():
    assert tuple(ledger.PAPER) == CLAIMS
    for key in CLAIMS:
        assert ledger.paper_figure(key)
        assert ledger.PAPER[key].source


def test_an_empty_cache_makes_every_measured_claim_not_tested_with_its_command(tmp_path):
    rows = ledger.ledger("cpu", results_dir=tmp_path, theorems=False)
    assert [row.key for row in rows] == list(CLAIMS)
    for row in rows:
        assert row.verdict == "not tested"
        if row.profile != "live":
            assert row.command and row.command in row.ours, row


def test_sections_follow_the_table_of_contents():
    rows = _by_key(ledger.ledger("cpu", results_dir="/nonexistent", theorems=False))
    assert rows["theorem_1"].section == "notebooks/theory"
    assert rows["probing"].section.endswith("encoder")


def test_synthetic_decoder_runs_give_the_expected_verdicts(tmp_path):
    pytest.importorskip("ssa.lm.experiment")
    from ssa.lm import experiment
    from ssa.lm.config import run_config

    # SSA clearly better in distribution, clearly worse out of distribution; both learned.
    perplexities = {"softmax": ([30.0, 31.0], [40.0, 41.0]), "ssa": ([20.0, 21.0], [50.0, 51.0])}
    for scorer, (in_distribution, out_of_distribution) in perplexities.items():
        for index, seed in enumerate(experiment.SEEDS["cpu"]):
            _write_entry(tmp_path, experiment.EXPERIMENT, run_config("cpu", scorer, seed).to_dict(), {
                "scorer": scorer, "seed": seed, "perplexity_id": in_distribution[index],
                "perplexity_ood": out_of_distribution[index], "unigram_perplexity_id": 500.0,
                "unigram_perplexity_ood": 600.0, "blimp": {"accuracy": 0.6, "by_phenomenon": {}},
                "tokens_trained": 1_000_000, "parameters": 2_000_000,
            })
    rows = _by_key(ledger.ledger("cpu", results_dir=tmp_path, theorems=False))
    assert rows["perplexity_id"].verdict == "reproduced"
    assert rows["perplexity_ood"].verdict == "not reproduced at this scale"
    assert rows["perplexity_id"].seeds == tuple(experiment.SEEDS["cpu"])
    assert rows["perplexity_id"].wall_time_s == 10.0 * 2 * len(experiment.SEEDS["cpu"])
    assert rows["benchmarks"].verdict == "not tested"


def test_synthetic_encoder_runs_give_the_expected_verdict(tmp_path):
    pytest.importorskip("ssa.encoder.experiment")
    from ssa.encoder import experiment

    for variant in experiment.VARIANTS:
        for seed in experiment.seeds_for("cpu"):
            accuracy = 0.60 if variant == "softmax" else 0.75  # every SSA variant 15 points better
            holistic = {paradigm: {"accuracy": accuracy, "low": accuracy - 0.03, "high": accuracy + 0.03, "total": 1000}
                        for paradigm in experiment.PAPER_ACCURACIES}
            _write_entry(tmp_path, f"{experiment.EXPERIMENT}/runs", experiment.run_config("cpu", variant, seed),
                         {"scorer": variant, "seed": seed, "holistic": holistic})
    row = _by_key(ledger.ledger("cpu", results_dir=tmp_path, theorems=False))["probing"]
    assert row.verdict == "reproduced"
    assert "+15.0" in row.ours


@pytest.mark.parametrize("degrading, expected", [("softmax", "reproduced"), ("ssa", "not reproduced at this scale")])
def test_synthetic_quantification_runs_give_the_expected_verdict(tmp_path, degrading, expected):
    pytest.importorskip("ssa.icl.verdicts")
    from ssa.icl import experiments

    for task in ledger.QUANTIFIERS:
        for scorer in ("softmax", "ssa"):
            for seed in experiments.SEEDS:
                config = experiments.experiment_config(task, scorer, "cpu", seed)
                sigmas = len(config.eval.sigmas)
                # Both learn at sigma 1; one scorer's error then grows to 0.5, the other's stays near 0.
                top = 0.5 if scorer == degrading else 0.02
                errors = [0.01 + (top - 0.01) * i / (sigmas - 1) + 0.001 * seed for i in range(sigmas)]
                result = {"shifts": {"sigma_x": {"sigmas": list(config.eval.sigmas), "model": {"prompt_error": errors},
                                                 "majority class": {"prompt_error": [0.5] * sigmas}}},
                          "injection": {"injected_mass": [0.9 if scorer == degrading else 0.2],
                                        "model": {"prompt_error": top}, "majority class": {"prompt_error": 0.5},
                                        "clean": {"model": {"prompt_error": 0.01}, "majority class": {"prompt_error": 0.5}}}}
                _write_entry(tmp_path, config.name, config, result)
    rows = _by_key(ledger.ledger("cpu", results_dir=tmp_path, theorems=False))
    assert rows["quantification"].verdict == expected, rows["quantification"].ours
    assert rows["quantification"].seeds == tuple(experiments.SEEDS)
    # The injected value draws the degrading scorer's attention and hurts it more; linear is not cached.
    assert rows["collapse"].verdict == expected, rows["collapse"].ours
    assert "linear: not in the cache" in rows["collapse"].ours
    assert rows["linear"].verdict == "not tested"


def test_combine():
    assert ledger.combine(["reproduced", "reproduced"]) == "reproduced"
    assert ledger.combine(["reproduced", "not tested"]) == "reproduced"
    assert ledger.combine(["reproduced", "not reproduced at this scale"]) == "partly"
    assert ledger.combine(["not reproduced at this scale"] * 2) == "not reproduced at this scale"
    assert ledger.combine(["not tested"]) == "not tested"
    with pytest.raises(ValueError, match="verdict must be one of"):
        ledger.LedgerRow("x", "c", "p", "o", "cpu", (), "maybe", None, None)


def test_published_numbers_are_not_typed_into_the_paper_statements():
    """A claim with published numbers gets every number from its chapter module."""
    for key, claim in ledger.PAPER.items():
        if claim.numbers is None:
            continue
        fields = {name for _, name, _, _ in string.Formatter().parse(claim.statement) if name}
        assert fields <= set(claim.numbers()), key
        literal_text = "".join(text for text, _, _, _ in string.Formatter().parse(claim.statement))
        assert not re.search(r"\d", literal_text), f"{key}: a number is typed into {claim.statement!r}"


def test_the_markdown_table_has_a_row_per_claim_with_doc_links():
    rows = ledger.ledger("cpu", results_dir="/nonexistent", theorems=False)
    table = ledger.ledger_markdown(rows)
    lines = table.splitlines()
    assert len(lines) == 2 + len(CLAIMS)
    assert all(line.count(" | ") == 3 for line in lines[2:])  # no unescaped pipe splits a cell
    assert "{doc}`Theorem 1: global logit magnification </notebooks/theory>`" in table


def test_the_theorem_rows_are_checked_live():
    rows = ledger._theorem_rows("cpu")
    assert [row.verdict for row in rows] == ["reproduced", "reproduced"]


def test_every_cached_chapter_has_its_regenerate_command():
    from ssa import reproduce

    rows = {row["chapter"]: row for row in reproduce.chapter_commands("cpu")}
    assert rows["theory"]["regenerate"] is None and rows["theory"]["run"].endswith("--only theory")
    assert rows["encoder"]["regenerate"] == "python -m ssa.encoder regenerate --profile cpu"
    assert rows["decoder"]["regenerate"] == "python -m ssa.lm regenerate --profile cpu"
