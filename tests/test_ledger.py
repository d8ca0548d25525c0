"""The claims ledger: every claim present, a missing cache is "not tested", synthetic caches
give the expected verdicts, and no number is typed where it should be computed."""

import dataclasses
import json
import re
import string

import pytest

from ssa_book import claims, front_page, ledger, theory
from ssa_book.verdicts.words import HOLDS, OUTCOMES, UNDECIDED, claim_word
from ssa_book.verdicts.claim import Claim, MIN_PAIRS
from ssa_book.verdicts.judge import judge, not_tested
from ssa_book.verdicts.families import combine
from ssa_book.chapters import Study, index_studies
from ssa_book.studies import ORDER, PAPER, STUDIES
from ssa_book.icl.tasks import QUANTIFIERS
from ssa_book.results.keys import CACHE_SCHEMA_VERSION, code_identity, config_dict, entry_path, experiment_code
from synthetic_runs import provenance_with

CLAIMS = (
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


def _write_entry(results_dir, experiment: str, config, result: dict, profile: str = "cpu") -> None:
    """A cache entry as ssa_book.results.cache.cached writes it, without running anything."""
    config = config_dict(config)  # as a key holds it (ssa_book.results.keys.config_dict)
    config = json.loads(json.dumps(config))  # tuples become lists, as in the cache
    path = entry_path(experiment, config, profile=profile, results_dir=results_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    identity = code_identity(experiment_code(experiment))
    entry = {
        "schema_version": CACHE_SCHEMA_VERSION,
        "experiment": experiment,
        "profile": profile,
        "config": config,
        **({"code": identity} if identity is not None else {}),
        "result": result,
        "provenance": provenance_with(seed=config.get("seed"), wall_time_s=10.0).to_dict(),
    }
    path.write_text(json.dumps(entry), encoding="utf-8")


def _by_key(rows):
    return {row.key: row for row in rows}


def test_the_ledger_has_every_headline_claim_once():
    assert claims.ORDER == CLAIMS and tuple(PAPER) == CLAIMS  # every study's claims, in the front page's order
    assert sorted(key for study in STUDIES.values() for key in study.claims) == sorted(CLAIMS)  # each by one study
    for key in CLAIMS:
        assert claims.paper_figure(PAPER[key])
        assert PAPER[key].source


def test_an_empty_cache_makes_every_measured_claim_not_tested_with_its_command(tmp_path):
    rows = ledger.ledger("cpu", results_dir=tmp_path, theorems=False)
    assert [row.key for row in rows] == list(CLAIMS)
    for row in rows:
        assert row.verdict == "not tested"
        if row.key == "benchmarks":  # the lm-eval command is on the reproducing page, not in the argument
            assert row.command and row.command not in row.ours and "<paper-on-gpus>" in row.ours, row
        elif row.profile != "live":
            assert row.command and row.command in row.ours, row


def test_sections_follow_the_table_of_contents():
    rows = _by_key(ledger.ledger("cpu", results_dir="/nonexistent", theorems=False))
    assert rows["theorem_1"].section == "notebooks/theory"
    assert rows["probing"].section.endswith("encoder")


def test_synthetic_decoder_runs_give_the_chapters_verdicts(tmp_path):
    pytest.importorskip("ssa_book.lm.experiment")
    from ssa_book.lm import experiment
    from ssa_book.lm.config import run_config
    from ssa_book.lm.records import LMRun

    # SSA clearly better in distribution, clearly worse out of distribution; both learned.
    seeds = experiment.SEEDS["cpu"]
    runs = []
    for scorer, (in_distribution, out_of_distribution) in {"softmax": (30.0, 40.0), "ssa": (20.0, 50.0)}.items():
        for seed in seeds:
            run = {
                "scorer": scorer,
                "seed": seed,
                "perplexity_id": in_distribution + seed,
                "perplexity_ood": out_of_distribution + seed,
                "unigram_perplexity_id": 500.0,
                "unigram_perplexity_ood": 600.0,
                "blimp": {"accuracy": 0.6, "by_phenomenon": {}},
                "tokens_trained": 1_000_000,
                "parameters": 2_000_000,
            }
            runs.append(run)
            _write_entry(tmp_path, experiment.EXPERIMENT, run_config("cpu", scorer, seed).to_dict(), run)
    rows = _by_key(ledger.ledger("cpu", results_dir=tmp_path, theorems=False))
    expected = experiment.claim_verdicts([LMRun.from_result(run) for run in runs])
    for key in ("perplexity_id", "perplexity_ood"):
        assert rows[key].verdict == expected[key].outcome
        assert rows[key].verdict == ("exploratory" if len(seeds) < MIN_PAIRS else rows[key].verdict)
    assert expected["perplexity_id"].effect > 0 > expected["perplexity_ood"].effect  # in the paper's direction
    assert rows["perplexity_id"].seeds == tuple(seeds)
    assert rows["perplexity_id"].regime == f"{experiment.regime('cpu')}; {len(seeds)} paired seeds"
    assert (
        "layers of width" in rows["perplexity_id"].regime
        and "(the paper: 12 layers of width 768" in rows["perplexity_id"].regime
    )
    assert rows["perplexity_id"].wall_time_s == 10.0 * 2 * len(seeds)
    assert rows["benchmarks"].verdict == "not tested"


def test_synthetic_encoder_runs_give_the_chapters_verdict(tmp_path):
    pytest.importorskip("ssa_book.encoder.experiment")
    from ssa_book.encoder import experiment

    for variant in experiment.VARIANTS:
        for seed in experiment.seeds_for("cpu"):
            accuracy = 0.60 if variant == "softmax" else 0.75 + 0.01 * seed  # every SSA variant about 15 points better
            holistic = {
                paradigm: {"accuracy": accuracy, "low": accuracy - 0.03, "high": accuracy + 0.03, "total": 1000}
                for paradigm in experiment.PAPER_ACCURACIES
            }
            _write_entry(
                tmp_path,
                experiment.runs_experiment(variant),
                experiment.run_config("cpu", variant, seed),
                {"scorer": variant, "seed": seed, "holistic": holistic},
            )
    row = _by_key(ledger.ledger("cpu", results_dir=tmp_path, theorems=False))["probing"]
    expected = "exploratory" if len(experiment.seeds_for("cpu")) < experiment.CHAPTER_MIN_PAIRS else "better"
    assert row.verdict == expected, row.ours
    assert row.regime.startswith(experiment.regime("cpu")) and "(the paper: 8 layers of width 256" in row.regime


def _write_icl_runs(tmp_path, degrading, seeds, softmax_injected_mass):
    from ssa_book.icl import experiments

    for task in QUANTIFIERS:
        for scorer in ("softmax", "ssa"):
            for seed in seeds:
                config = experiments.experiment_config(task, scorer, "cpu", seed)
                sigmas = len(config.eval.sigmas)
                # Both learn at sigma 1; one scorer's error then grows to 0.5, the other's stays near 0.
                top = 0.5 if scorer == degrading else 0.02
                errors = [0.01 + (top - 0.01) * i / (sigmas - 1) + 0.001 * seed for i in range(sigmas)]
                mass = softmax_injected_mass if scorer == "softmax" else 0.1
                result = {
                    "shifts": {
                        "sigma_x": {
                            "sigmas": list(config.eval.sigmas),
                            "model": {"prompt_error": errors},
                            "majority class": {"prompt_error": [0.5] * sigmas},
                        }
                    },
                    "injection": {
                        "injected_mass": [mass],
                        "model": {"prompt_error": top},
                        "majority class": {"prompt_error": 0.5},
                        "clean": {"model": {"prompt_error": 0.01}, "majority class": {"prompt_error": 0.5}},
                    },
                }
                _write_entry(tmp_path, config.name, config, result)


@pytest.mark.parametrize(
    "seeds, degrading, expected",
    [
        ((0, 1, 2), "softmax", "exploratory"),  # three seeds decide nothing
        # prompt errors flip from seed to seed: a direction needs no_effect_pairs pairs (36)
        (tuple(range(6)), "softmax", "exploratory"),
        (tuple(range(36)), "softmax", "better"),
        (tuple(range(36)), "ssa", "worse"),
    ],
)
def test_synthetic_quantification_runs_give_the_expected_verdict(tmp_path, monkeypatch, seeds, degrading, expected):
    pytest.importorskip("ssa_book.icl.verdicts")
    from ssa_book.icl import experiments

    monkeypatch.setattr(experiments, "SEEDS", seeds)
    _write_icl_runs(tmp_path, degrading, seeds, softmax_injected_mass=0.9)
    rows = _by_key(ledger.ledger("cpu", results_dir=tmp_path, theorems=False))
    assert rows["quantification"].verdict == expected, rows["quantification"].ours
    assert rows["quantification"].seeds == seeds
    assert rows["collapse"].verdict == "not tested" and "linear: results not in the cache" in rows["collapse"].ours
    assert rows["linear"].verdict == "not tested"


def test_counts_sentence_and_rows_take_only_the_rules_outcomes():
    def row(verdict):
        return claims.LedgerRow("x", "c", "p", "o", "cpu", (), verdict, None, None)

    assert (
        ledger.counts_sentence([row("better"), row("undecided"), row("exploratory")])
        == "Of the paper's 3 experimental claims, 1 holds and 2 are undecided."
    )
    assert (
        ledger.counts_sentence([row("not tested")])
        == "Of the paper's 1 experimental claim, none holds: 1 is not tested."
    )
    theorem = dataclasses.replace(row("better"), profile="live")
    assert ledger.counts_sentence(
        [theorem, theorem, row("does not hold"), row("no difference that matters"), row("worse")]
    ) == (
        "Of the paper's 3 experimental claims, none holds: 3 do not hold. "
        "The 2 theorems, in the book's own versions (the paper's statements are not public; derived and checked numerically, "
        "live): 2 hold."
    )
    assert set(ledger._PREDICATES) == {claim_word(outcome) for outcome in OUTCOMES}
    assert set(claims.VERDICTS) == set(OUTCOMES)
    with pytest.raises(ValueError, match="verdict must be one of"):
        row("maybe")


def test_published_numbers_are_not_typed_into_the_paper_statements():
    """A claim with published numbers gets every number from its chapter module."""
    for key, claim in PAPER.items():
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
    rows = theory.theorem_rows("cpu")
    assert [row.verdict for row in rows] == ["better", "better"]
    # each names the variable its slopes are fitted along: Theorem 1 magnifies every logit by λ, Theorem 2 grows one, t
    assert "slopes fitted for λ from" in rows[0].ours and "slopes fitted for t from" in rows[1].ours


def test_every_cached_chapter_has_its_regenerate_command():
    from ssa_book import reproduce

    rows = {row["chapter"]: row for row in reproduce.chapter_commands("cpu")}
    assert rows["theory"]["regenerate"] is None and rows["theory"]["run"].endswith("--only theory")
    assert rows["encoder"]["regenerate"] == "python -m ssa_book regenerate encoder --profile cpu"
    assert rows["decoder"]["regenerate"] == "python -m ssa_book regenerate decoder --profile cpu"
    assert rows["icl_linear"]["regenerate"] == "python -m ssa_book regenerate icl_linear --profile cpu"


def test_the_summary_table_gives_each_claim_one_short_sentence_with_its_verdict():
    rows = ledger.ledger("cpu", results_dir="/nonexistent", theorems=False)
    table = ledger.summary_markdown(rows)
    lines = table.splitlines()
    assert lines[0].startswith("| claim | the paper's claim | in short | regime (") and len(lines) == 2 + len(CLAIMS)
    assert all(line.count(" | ") == 3 for line in lines[2:])
    assert (
        "{doc}`Theorem 1: global logit magnification </notebooks/theory>` | {doc}`not tested </notebooks/glossary>` |"
        in table
    )
    for row in rows:
        assert row.summary and row.summary.endswith(".") and row.summary.count(". ") == 0, row.summary
        assert len(row.summary) <= 200, row.summary


def test_the_seeds_phrase_says_what_more_seeds_would_decide():
    claim = Claim("SSA is better", 1, 0.1, "points", "a tenth of the scale")
    undecided = judge(claim, [0.3, 0.1, 0.5], [0.0, 0.0, 0.0])
    assert undecided.outcome == "exploratory"
    assert claims.seeds_phrase(undecided) == f"3 paired seeds; about {undecided.seeds_to_resolve} would decide"
    decided = judge(claim, [1.0, 1.1, 0.9, 1.2, 1.0, 1.05], [0.0] * 6)
    assert claims.seeds_phrase(decided) == "6 paired seeds"
    both = combine("both", {"a": undecided, "b": decided})
    assert claims.seeds_phrase(both).startswith("3 to 6 paired seeds; about ")
    assert claims.seeds_phrase(both).endswith(
        "would decide its 1 open part"
    )  # the claim is decided: more seeds decide a part
    assert claims.seeds_phrase(combine("open", {"a": undecided, "b": undecided})).endswith(" would decide")
    assert claims.seeds_phrase(not_tested(claim)) == ""
    assert (
        claims.short_summary(undecided, "effect +0.3")
        == f"Effect +0.3; 3 paired seeds; about {undecided.seeds_to_resolve} would decide."
    )


def test_theorem_rows_have_a_summary():
    rows = theory.theorem_rows("cpu")
    assert all(
        row.summary.startswith("The book's own version of the theorem")
        and "fitted decay rates" in row.summary
        and "of the derived ones" in row.summary
        for row in rows
    )


def test_the_leaderboard_row_combines_ssa_against_softmax_on_every_kind_of_shift(monkeypatch):
    from synthetic_runs import loader, noisy

    from ssa_book.leaderboard import board as leaderboard

    read = leaderboard.read
    # SSA is worse than softmax in every in-context column and no different in max retrieval
    load = loader(lambda task, scorer, seed: noisy(0.7 if scorer == "ssa" else 0.3, seed), lambda scorer, seed: 0.8)
    monkeypatch.setattr(leaderboard, "read", lambda profile, train=None: read(profile, load=load))
    rows = _by_key(ledger.ledger("cpu", results_dir="/nonexistent", theorems=False))
    row = rows["across_shifts"]
    # no column supports the claim and four are decided against it (the two flip-prone in-context
    # columns cannot decide at ten seeds): it does not hold, never "holds in part" and never the
    # milder "no difference" of the two columns (max retrieval's setups) where SSA is not worse
    assert row.verdict == "does not hold" and row.seeds == tuple(range(10)) + tuple(range(100, 110))
    # the parts are counted once, in the verdict's cell, not again in the summary
    assert row.summary.startswith("SSA against softmax in 6 of the 6 columns") and "Parts" not in row.summary
    # ten seeds are below the fewest pairs of the flip-prone in-context columns and of max retrieval's
    assert claims.comparison_words(row) == "exploratory on 4 of 6 parts, SSA worse on 2"
    assert (
        "max retrieval, short setup, 256 items: none" in row.ours
        and "max retrieval, original setup, 256 items: none" in row.ours
    )


def test_a_tally_says_the_small_directions_of_its_parts_without_a_bracket_inside_the_brackets_around_it():
    from ssa_book.verdicts.words import NEGLIGIBLE

    claim = Claim("SSA is better", 1, 0.05, "error", "a reason")
    small = judge(claim, [0.01 + 0.001 * (seed % 3) for seed in range(10)], [0.0] * 10)
    plain = judge(claim, [0.002 * (-1) ** seed for seed in range(10)], [0.0] * 10)
    assert small.outcome == plain.outcome == NEGLIGIBLE and small.small_direction() == "SSA slightly better"
    row = claims.LedgerRow(
        "linear",
        "c",
        "p",
        "o",
        "cpu",
        tuple(range(10)),
        "does not hold",
        None,
        None,
        parts=(small.outcome, plain.outcome),
        headline=(("a", small), ("b", plain)),
    )
    assert claims.comparison_words(row) == "no difference that matters on 2 of 2 parts; SSA slightly better on 1"
    assert "(" not in claims.comparison_words(row)


def test_the_alternatives_row_takes_the_leaderboards_ten_seeds_once_they_are_complete(monkeypatch):
    from synthetic_runs import loader, noisy

    from ssa_book.leaderboard import board as leaderboard

    read = leaderboard.read
    # every alternative worse than softmax, seed by seed: at ten seeds the flip-prone prompt errors
    # of the in-context panels decide nothing (ssa_book.verdicts.claim.no_effect_pairs), but the linear panels
    # decide each alternative worse, so none is better on every panel and the statement holds
    load = loader(lambda task, scorer, seed: noisy(0.3 if scorer == "softmax" else 0.6, seed), lambda scorer, seed: 0.8)
    monkeypatch.setattr(leaderboard, "read", lambda profile, train=None: read(profile, load=load))
    row = _by_key(ledger.ledger("cpu", results_dir="/nonexistent", theorems=False))["alternatives"]
    assert claim_word(row.verdict) == HOLDS and row.seeds == tuple(range(100, 110))
    assert "sparsemax worse on 2 of 4, exploratory on 2" in row.ours
    assert "alternative too few seeds to decide" not in row.ours and "exploratory" in row.ours
    assert row.ours.startswith("Read by the leaderboard at 10 paired seeds") and "regenerate leaderboard" in row.command
    incomplete = loader(
        lambda task, scorer, seed: noisy(0.3, seed), lambda scorer, seed: 0.8, {("icl", "some", "sparsemax", 100)}
    )
    monkeypatch.setattr(leaderboard, "read", lambda profile, train=None: read(profile, load=incomplete))
    row = _by_key(ledger.ledger("cpu", results_dir="/nonexistent", theorems=False))["alternatives"]
    assert (
        row.verdict == "not tested" and "alternative_scorers" in row.command
    )  # the chapter's row, nothing cached there


def test_findings_are_at_most_six_computed_bullets_that_say_the_direction():
    def row(key, verdict, parts=(), regime="", profile="cpu"):
        return claims.LedgerRow(
            key, key.title(), "p", "o", profile, (1, 2, 3), verdict, None, None, parts=parts, regime=regime
        )

    rows = [
        row("theorem_1", "better", profile="live"),
        row("theorem_2", "better", profile="live"),
        row(
            "across_shifts", "does not hold", ("worse", "worse", "no difference that matters", "undecided"), "4 layers"
        ),
        row("linear", "no difference that matters", regime="1,500 steps"),
        row("alternatives", "does not hold", ("worse", "undecided")),
        row("perplexity_id", "undecided"),
        row("probing", "undecided"),
        row("benchmarks", "not tested"),
    ]
    found = ledger.findings(rows)
    assert 1 < len(found) <= 6
    assert found[0].startswith("Of the paper's 5 experimental claims, none holds") and "The 2 theorems" in found[0]
    assert "The book's own test beyond the paper: 1 does not hold." in found[0]  # counted apart from the paper's claims
    beyond = next(bullet for bullet in found if bullet.startswith("**Across_Shifts**"))
    assert (
        "does not hold here (SSA worse on 2 of 4 parts, no difference that matters on 1, undecided on 1). Regime: 4 layers."
        in beyond
    )
    # the alternatives row judges a statement about other scorers: its parts counted in the claim's words, no "SSA"
    assert any(
        bullet.startswith(
            "**Alternatives**: the paper's claim does not hold here (does not hold on 1 of 2 parts, undecided on 1)."
        )
        for bullet in found
    )
    assert not any("SSA worse on 1 of 2" in bullet for bullet in found)
    assert any(bullet.startswith("**Undecided**") and "Perplexity_Id (3 seeds)" in bullet for bullet in found)
    assert not any("excludes" in bullet for bullet in found)
    assert found[-1] == "**Not tested or premise not shown**: Benchmarks (not tested)."
    # what a row adds beside its verdict follows its regime
    rows[2] = dataclasses.replace(rows[2], finding="In max retrieval, short setup: SSA's deficit goes with its form.")
    assert "Regime: 4 layers. In max retrieval, short setup: SSA's deficit goes with its form." in next(
        bullet for bullet in ledger.findings(rows) if bullet.startswith("**Across_Shifts**")
    )
    rows = [dataclasses.replace(each, published_excluded=each.key in ("perplexity_id", "probing")) for each in rows]
    undecided = next(bullet for bullet in ledger.findings(rows) if bullet.startswith("**Undecided**"))
    assert undecided.endswith(
        "For Perplexity_Id and Probing, the 95% interval at the book's scale already excludes an effect the "
        "size of the paper's."
    )


def test_markdown_keeps_every_row_and_escapes_pipes():
    import pandas as pd

    frame = pd.DataFrame({"a": [f"x|{i}" for i in range(100)], "b": range(100)})
    text = ledger.markdown_table(frame)
    assert text.count("\n") == 101 and "x\\|99" in text
    assert ledger.markdown_table(frame, ["b"]).splitlines()[0] == "| b |"


def test_a_regime_in_short_keeps_every_setting_and_names_the_papers_once():
    regime = (
        "4 layers of width 64, 1,000 steps at learning rate 0.001 (constant), SSA from b = 2.72, n = 1.49 (the paper: "
        "12 layers of width 256, 500,000 steps at 0.0001); 40 paired seeds a task"
    )
    assert (
        ledger.short_regime(regime)
        == "4 × 64, 1,000 steps, lr 0.001 (constant), SSA from b = 2.72, n = 1.49; 40 seeds a task"
    )
    decoder = (
        "4 layers of width 192, 400 steps (1.64M tokens) at learning rate 0.002 (warm-up + cosine), SSA from b = 0.8, "
        "n = 1.5 (the paper: 12 layers of width 768, 22,000 steps, 17.3B tokens); 2 paired seeds"
    )

    def row(key, regime=""):
        return claims.LedgerRow(key, key, "p", "o", "cpu", (1, 2), "undecided", None, None, regime=regime)

    rows = [row("quantification", regime), row("linear", regime), row("perplexity_id", decoder), row("benchmarks")]
    assert ledger.paper_regimes_sentence(rows) == (
        "The paper trains its in-context models 12 × 256, 500,000 steps, lr 0.0001; "
        "its decoder 12 × 768, 22,000 steps, 17.3B tokens."
    )
    assert ledger.paper_regimes_sentence([row("benchmarks")]) == ""


def test_a_markdown_table_from_rows_with_headers():
    rows = [{"a": "x|1", "b": 2}, {"a": "y", "b": 3}]
    assert ledger.markdown_table(rows, {"b": "B", "a": "A"}).splitlines() == [
        "| B | A |",
        "|---|---|",
        "| 2 | x\\|1 |",
        "| 3 | y |",
    ]


def test_a_variant_regime_names_only_what_it_changes_and_the_undecided_bullet_counts_seeds_per_part():
    base = "4 layers of width 64, 1,500 steps at learning rate 0.001 (constant), SSA from b = 2.72, n = 1.49; 3 paired seeds"
    variant = "4 layers of width 64, 1,000 steps at learning rate 0.001 (constant), SSA from b = 2.72, n = 1.49"
    assert claims.differing(base, variant) == "1,000 steps"
    assert claims.differing(base, variant.replace("0.001", "0.0001")) == "1,000 steps, learning rate 0.0001 (constant)"
    assert claims.differing(base, base.split(";")[0]) == "the same"
    row = claims.LedgerRow(
        "collapse", "ICL: collapse", "", "", "cpu", (0, 1, 2, 100, 101), UNDECIDED, None, None, seed_counts=(3, 2)
    )
    assert ledger.seed_counts_text(row) == "3 and 2 seeds"
    assert ledger.seed_counts_text(dataclasses.replace(row, seed_counts=())) == "5 seeds"
    assert "(3 and 2 seeds)" in " ".join(ledger.findings([row]))


def test_parts_that_share_words_name_them_once():
    assert (
        claims.factored([("“every”, error at sigma 10", "-0.17"), ("“some”, error at sigma 10", "-0.23")])
        == "error at sigma 10: “every” -0.17; “some” -0.23"
    )
    assert (
        claims.factored([("linear, error, larger inputs", "+0.02"), ("linear, error, larger functions", "+0.04")])
        == "linear, error: larger inputs +0.02; larger functions +0.04"
    )
    assert claims.factored([("a, b", "1"), ("c, d", "2")]) == "a, b: 1; c, d: 2"
    assert claims.factored([("a, b", "1")]) == "a, b: 1"
    assert claims.factored([("a", "1"), ("a, b", "2")]) == "a: 1; a, b: 2"


def test_a_study_claims_only_claims_of_the_order_none_another_study_claims_and_every_claim_is_claimed():
    other = claims.PaperClaim("another", "another statement", "nowhere", "theory")
    listed = tuple(STUDIES.values())
    with pytest.raises(ValueError, match="not in ORDER"):
        index_studies((*listed, Study("another", claims={"unknown": other}, rows=theory.theorem_rows)), ORDER)
    with pytest.raises(ValueError, match="claim 'theorem_1' is already another study's"):
        index_studies((*listed, Study("another", claims={"theorem_1": other}, rows=theory.theorem_rows)), ORDER)
    with pytest.raises(ValueError, match="claims and the rows that judge them go together"):
        index_studies((*listed, Study("another", claims={"theorem_1": other})), ORDER)
    with pytest.raises(ValueError, match="no study defines the claim 'theorem_1', 'theorem_2'"):
        index_studies([study for study in listed if study.name != "theory"], ORDER)
    assert PAPER["theorem_1"].statement != other.statement


def test_decided_claims_that_do_not_fit_a_bullet_each_share_the_last_one():
    keys = ["quantification", "linear", "alternatives", "across_shifts", "perplexity_id", "perplexity_ood"]
    LedgerRow = claims.LedgerRow
    decided = [
        LedgerRow(key, key, "", "", "cpu", (0,), word, None, None)
        for key, word in zip(keys, ["does not hold", "does not hold", "better", "does not hold", "worse", "worse"])
    ]
    undecided = [LedgerRow(key, key, "", "", "cpu", (0,), "undecided", None, None) for key in ("collapse", "probing")]
    untested = [LedgerRow("benchmarks", "benchmarks", "", "", "cpu", (), "not tested", None, None)]
    bullets = front_page.key_findings(decided + undecided + untested)
    assert len(bullets) <= front_page.BULLETS
    said = " ".join(bullets)
    assert all(ledger.short_name(row) in said for row in decided)  # none left out unsaid
    assert any(bullet.startswith("**Also decided**: ") for bullet in bullets)


def test_the_alternatives_chapters_own_seeds_read_in_one_word_with_their_parts_counted_wherever_said(monkeypatch):
    from ssa_book.verdicts.verdict import Verdict
    from ssa_book.leaderboard import claims as leaderboard_claims

    open_part = Verdict("a part", "exploratory", -0.1, (-0.3, 0.1), 3, 0.05)
    statement = Verdict("none is better", "exploratory", parts=(("one", open_part), ("two", open_part)))
    monkeypatch.setattr(leaderboard_claims.statement, "statement_verdict", lambda runs: statement)
    monkeypatch.setattr(leaderboard_claims.comparison, "chapter_seeds", lambda profile: (0, 1, 2))
    # the claim's word, as the chapter says it of the statement, never the parts' word in its place
    assert leaderboard_claims.chapter_words({"runs": 1}) == "undecided (exploratory on 2 of 2)"
    assert leaderboard_claims.chapter_reading("cpu", {"runs": 1}) == (
        "The chapter's own 3 seeds (mean error over σ > 1) read undecided (exploratory on 2 of 2)."
    )
