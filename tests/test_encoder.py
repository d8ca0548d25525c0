"""The encoder chapter's package: AO-CHILDES cleaning, Zorro format and scoring, BabyBERTa
masking, training, verdict. Fast: tiny synthetic corpora and models."""

from __future__ import annotations

import csv
import dataclasses
import math

import pytest
import torch

from ssa_book.encoder import experiment, zorro
from ssa_book.encoder.corpus import CorpusError, clean_gloss, load_corpus, split_held_out
from ssa_book.encoder.model import EncoderConfig, build_model, learning_rate_factor, mask_tokens
from ssa_book.encoder.records import EncoderRun
from ssa_book.encoder.tokenizer import BOS_ID, EOS_ID, MASK_ID, NUM_SPECIAL, PAD_ID, encode, pad, train_tokenizer
from ssa_book.encoder.train import BatchStream, train_and_probe


@pytest.fixture(autouse=True)
def one_thread():
    # Tiny models on a shared CPU run many times faster on one thread.
    with experiment.torch_threads(1):
        yield


COLUMNS = ["gloss", "speaker_role", "target_child_age", "type", "collection_name", "transcript_id", "utterance_order"]


def write_transcript(folder, name, rows):
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{name}.csv", "w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(COLUMNS)
        writer.writerows(rows)


@pytest.fixture
def corpus_folder(tmp_path):
    folder = tmp_path / "aochildes" / "original_transcripts"
    write_transcript(
        folder,
        "A",
        [
            ["look at the ice+cream", "Mother", "800.5", "declarative", "Eng-NA", "2", "1"],
            ["what's that", "Father", "400", "question", "Eng-NA", "1", "1"],
            ["I want xxx", "Mother", "400", "declarative", "Eng-NA", "1", "2"],
            ["mine", "Child", "400", "declarative", "Eng-NA", "1", "3"],
            ["stop it", "Mother", "NA", "imperative_emphatic", "Eng-NA", "3", "1"],
            ["too old", "Mother", "3000", "declarative", "Eng-NA", "4", "1"],
            ["clinical", "Mother", "500", "declarative", "Clinical-MOR", "5", "1"],
            ["", "Mother", "500", "declarative", "Eng-NA", "1", "4"],
        ],
    )
    write_transcript(folder, "B", [["where's Big_Bird", "Mother", "300", "question", "Eng-NA", "9", "1"]])
    return tmp_path / "aochildes"


def test_corpus_keeps_child_directed_speech_cleaned_and_ordered_by_age(corpus_folder):
    corpus = load_corpus(corpus_folder)
    assert corpus.utterances == ("where's Big Bird ?", "what's that ?", "look at the ice cream .", "stop it !")
    assert corpus.corpus_names == ("B", "A", "A", "A")
    assert math.isnan(corpus.ages_days[-1])  # unknown age goes last
    assert corpus.dropped == {"untranscribable": 1, "speaker": 1, "age": 1, "collection": 1, "empty": 1}
    summary = corpus.summary()
    assert (summary["utterances"], summary["words"], summary["corpora"]) == (4, 12, 2)
    assert (summary["min_age_days"], summary["max_age_days"], summary["unknown_age_utterances"]) == (300.0, 800.5, 1)


def test_clean_gloss_rules():
    assert clean_gloss("yyy", "declarative") is None
    assert clean_gloss("a www b", "question") is None
    assert clean_gloss("thank_you", "trail off question") == "thank you ?"
    assert clean_gloss("  ", "declarative") is None


def test_corpus_errors_name_the_folder_file_and_line(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match="holds no transcripts"):
        load_corpus(tmp_path / "empty")
    with pytest.raises(CorpusError, match="does not exist"):
        load_corpus(tmp_path / "nowhere")
    bad = tmp_path / "bad"
    write_transcript(bad, "C", [["hi", "Mother", "soon", "declarative", "Eng-NA", "1", "1"]])
    with pytest.raises(CorpusError, match=r"C\.csv, line 2: target_child_age 'soon'"):
        load_corpus(bad)
    (bad / "C.csv").write_text("gloss,speaker_role\nhi,Mother\n")
    with pytest.raises(CorpusError, match=r"C\.csv, line 1: .*target_child_age"):
        load_corpus(bad)


def test_split_held_out_takes_every_kth():
    train, held_out = split_held_out([str(i) for i in range(10)], every=5)
    assert held_out == ["4", "9"] and len(train) == 8
    with pytest.raises(ValueError, match="every"):
        split_held_out(["a"], every=1)


# ---- Zorro ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_zorro():
    from ssa_book import data

    try:
        return data.path("zorro")
    except data.DatasetError as error:
        pytest.skip(f"Zorro not in the data directory: {error}")


def test_real_zorro_has_23_paradigms_of_2000_pairs_odd_line_ungrammatical(real_zorro):
    files = sorted(path.stem for path in (real_zorro / "sentences").glob("*.txt"))
    assert files == sorted(zorro.PARADIGMS)
    first = zorro.load_paradigm("irregular-verb", real_zorro, max_pairs=1)[0]
    assert first.ungrammatical == "Michael chosen the good one some time ago ."  # line 1
    assert first.grammatical == "Michael chose the good one some time ago ."  # line 2
    assert all(len(zorro.load_paradigm(name, real_zorro)) == 2000 for name in zorro.PARADIGMS)


def test_malformed_probing_files_name_the_file_and_line(tmp_path):
    odd = tmp_path / "odd.txt"
    odd.write_text("bad one .\ngood one .\nlonely .\n")
    with pytest.raises(zorro.ZorroFormatError, match=r"odd\.txt, line 3: odd number of lines"):
        zorro.read_pairs(odd)
    empty = tmp_path / "empty.txt"
    empty.write_text("bad one .\n\ngood one .\nx .\n")
    with pytest.raises(zorro.ZorroFormatError, match=r"empty\.txt, line 2: empty line"):
        zorro.read_pairs(empty)
    with pytest.raises(zorro.ZorroFormatError, match="not found"):
        zorro.read_pairs(tmp_path / "missing.txt")
    with pytest.raises(ValueError, match="paradigm must be one of the 23"):
        zorro.load_paradigm("no-such-paradigm", tmp_path)


def test_wilson_interval():
    low, high = zorro.wilson_interval(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-4) and high == pytest.approx(0.5962, abs=1e-4)
    assert zorro.wilson_interval(0, 10)[0] == 0.0 and zorro.wilson_interval(10, 10)[1] == 1.0


def test_pair_accuracy_counts_lower_score_of_grammatical_as_correct():
    pairs = [zorro.MinimalPair("good a", "bad a"), zorro.MinimalPair("good b", "bad b")]
    scores = {"good a": 1.0, "bad a": 2.0, "good b": 3.0, "bad b": 3.0}  # a tie counts as wrong
    result = zorro.pair_accuracy(pairs, lambda sentences: [scores[s] for s in sentences])
    assert (result["correct"], result["total"], result["accuracy"]) == (1, 2, 0.5)


# ---- tokenizer, model, masking -------------------------------------------------------------

SENTENCES = ["the dog is here .", "where is the ball ?", "you want the cup .", "look at the big dog !"] * 30


@pytest.fixture(scope="module")
def tokenizer():
    return train_tokenizer(SENTENCES, vocab_size=300)


def test_tokenizer_uses_roberta_special_ids(tokenizer):
    assert [tokenizer.token_to_id(t) for t in ("<s>", "<pad>", "</s>", "<unk>", "<mask>")] == [
        BOS_ID,
        PAD_ID,
        EOS_ID,
        3,
        MASK_ID,
    ]
    ids = encode(tokenizer, ["the dog ."])[0]
    assert ids[0] == BOS_ID and ids[-1] == EOS_ID and all(i >= NUM_SPECIAL for i in ids[1:-1])
    with pytest.raises(ValueError, match="vocab_size"):
        train_tokenizer(SENTENCES, vocab_size=100)


def test_masking_selects_real_tokens_and_never_leaves_them_unchanged():
    config = EncoderConfig.for_profile("smoke", vocab_size=300, random_token_probability=0.0)
    ids, _ = pad([[0, 10, 11, 12, 2], [0, 20, 2], [0, 30, 31, 32, 33, 34, 35, 2]] * 50)
    inputs, selected = mask_tokens(ids, config, torch.Generator().manual_seed(0))
    assert selected.any(1).all()  # at least one prediction per utterance
    assert not selected[ids < NUM_SPECIAL].any()  # never <s>, </s> or padding
    assert (inputs[selected] == MASK_ID).all() and (inputs[~selected] == ids[~selected]).all()
    config = EncoderConfig.for_profile("smoke", vocab_size=300, random_token_probability=0.5)
    inputs, selected = mask_tokens(ids, config, torch.Generator().manual_seed(0))
    replaced = inputs[selected]
    assert 0.3 < (replaced != MASK_ID).float().mean() < 0.7
    assert ((replaced >= NUM_SPECIAL) | (replaced == MASK_ID)).all()  # random tokens are never special


def test_learning_rate_warms_up_then_decays_to_zero():
    config = EncoderConfig.for_profile("smoke", warmup_steps=10, steps=20)
    assert learning_rate_factor(0, config) == pytest.approx(0.1)
    assert learning_rate_factor(9, config) == pytest.approx(1.0)
    assert learning_rate_factor(20, config) == 0.0


def test_config_rejects_bad_values():
    with pytest.raises(ValueError, match="order must be one of"):
        EncoderConfig(order="random")
    with pytest.raises(ValueError, match="profile must be one of"):
        EncoderConfig.for_profile("huge")
    with pytest.raises(ValueError, match="scorer must be one of"):
        build_model(EncoderConfig.for_profile("smoke"), "nope")


@pytest.mark.parametrize("scorer", ["softmax", "ssa"])
def test_holistic_score_ignores_padding(tokenizer, scorer):
    model = build_model(EncoderConfig.for_profile("smoke", vocab_size=300), scorer)
    alone = zorro.holistic_scores(model, tokenizer, ["the dog ."])
    padded = zorro.holistic_scores(model, tokenizer, ["the dog .", "look at the big dog here you want the cup ."])
    assert alone[0] == pytest.approx(padded[0], rel=1e-5)
    pll_alone = zorro.pseudo_log_likelihood_scores(model, tokenizer, ["the dog ."])
    pll_padded = zorro.pseudo_log_likelihood_scores(model, tokenizer, ["the dog .", "look at the big dog here ."])
    assert pll_alone[0] == pytest.approx(pll_padded[0], rel=1e-5)


def test_batch_stream_is_a_function_of_seed_and_step():
    sequences = [[0, i, 2] for i in range(10, 30)]
    first, second = (
        BatchStream(sequences, 4, seed=1, order="shuffled"),
        BatchStream(sequences, 4, seed=1, order="shuffled"),
    )
    assert [first.batch(s) for s in range(12)] == [second.batch(s) for s in reversed(range(12))][::-1]
    assert sorted(map(tuple, sum((first.batch(s) for s in range(5)), []))) == sorted(map(tuple, sequences))  # one pass
    assert BatchStream(sequences, 4, seed=1, order="age").batch(0) == sequences[:4]


# ---- training end to end (resuming: tests/test_training.py) ----------------------------------


@pytest.fixture
def tiny_zorro(tmp_path):
    folder = tmp_path / "zorro" / "sentences"
    folder.mkdir(parents=True)
    for name in zorro.PARADIGMS:
        (folder / f"{name}.txt").write_text(
            "dog the is here .\nthe dog is here .\nball where the is ?\nwhere is the ball ?\n"
        )
    return tmp_path / "zorro"


def tiny_config():
    return EncoderConfig.for_profile(
        "smoke",
        vocab_size=300,
        max_utterances=None,
        held_out_every=10,
        steps=6,
        eval_every=3,
        checkpoint_every=3,
        curve_pairs=1,
        probe_pairs=None,
        pll_pairs=1,
        held_out_utterances=5,
    )


def tiny_corpus():
    from ssa_book.encoder.corpus import Corpus

    return Corpus(
        utterances=tuple(SENTENCES), ages_days=(1.0,) * len(SENTENCES), corpus_names=("T",) * len(SENTENCES), dropped={}
    )


def test_training_gives_curves_probes_and_scorer_values(tmp_path, tiny_zorro):
    result = train_and_probe(
        tiny_config(),
        "ssa",
        3,
        checkpoint_dir=tmp_path / "run",
        corpus=tiny_corpus(),
        zorro_folder=tiny_zorro,
        progress=False,
    )
    assert (
        result["curve"]["step"] == [0, 3, 6] and result["curve"]["train_loss"][0] is None
    )  # the untrained model has no training loss
    assert all(math.isfinite(loss) for loss in result["curve"]["train_loss"][1:] + result["curve"]["held_out_loss"])
    assert set(result["holistic"]) == set(zorro.PARADIGMS) and result["holistic"]["irregular-verb"]["total"] == 2
    assert len(result["scorer_values"]["n"]) == tiny_config().num_layers
    record = EncoderRun.from_result(result)  # the layout the chapter reads
    assert record.scorer == "ssa" and record.seed == 3 and record.curve.step == (0, 3, 6)
    assert record.holistic["irregular-verb"].total == 2 and record.overall(zorro.PARADIGMS) is not None
    with pytest.raises(ValueError, match="the result has no 'holistic'"):
        EncoderRun.from_result({"scorer": "ssa", "seed": 3})


def test_stop_at_ends_training_with_a_curve_point_and_a_checkpoint(tmp_path, tiny_zorro):
    stopped = train_and_probe(
        tiny_config(),
        "ssa",
        3,
        checkpoint_dir=tmp_path / "stopped",
        corpus=tiny_corpus(),
        zorro_folder=tiny_zorro,
        progress=False,
        stop_at=2,
    )
    assert stopped["curve"]["step"] == [0, 2]
    assert torch.load(tmp_path / "stopped" / "checkpoint.pt", weights_only=True)["step"] == 2


# ---- verdict -------------------------------------------------------------------------------


def fake_run(variant, seed, accuracy, steps=None):
    """A synthetic run: ``accuracy`` (fraction) on every Zorro paradigm, or a dict of some of them."""
    accuracies = accuracy if isinstance(accuracy, dict) else {name: accuracy for name in zorro.PARADIGMS}
    holistic = {
        name: {"correct": 0, "total": 2000, "accuracy": value, "low": value - 0.02, "high": value + 0.02}
        for name, value in accuracies.items()
    }
    run = {"scorer": variant, "seed": seed, "holistic": holistic}
    if steps is not None:
        run["config"] = {"steps": steps, "batch_size": 16}
    return EncoderRun.from_result(run)


def seed_level(seed):
    """Accuracy that differs between seeds, shared by every variant of the same seed."""
    return 0.55 + 0.03 * (seed % 4)


def jitter(seed):
    """A small seed-to-seed spread of the gains (points), so that no two paired differences are equal."""
    return 0.2 * ((seed % 3) - 1) + 0.01 * seed


def variants_runs(seeds, gain_by_variant):
    """Softmax at the seed's level, each SSA variant about ``gain`` points above it on every paradigm."""
    runs = [fake_run("softmax", s, seed_level(s)) for s in seeds]
    return runs + [
        fake_run(v, s, seed_level(s) + (gain + jitter(s)) / 100) for v, gain in gain_by_variant.items() for s in seeds
    ]


def test_the_claim_is_judged_per_paradigm_and_on_the_mean_paired_by_seed():
    seeds = range(experiment.CHAPTER_MIN_PAIRS)  # the fewest pairs the chapter decides from
    better = variants_runs(seeds, {"ssa": 5, "ssa_n1.5": 5, "ssa_n2": 5})
    verdict = experiment.probing_verdict(list(reversed(better)))  # order does not matter: pairs are by seed
    assert verdict.outcome == "better"
    parts = dict(verdict.parts)
    assert set(parts) == {experiment.HEADLINE, *experiment.PAPER_ACCURACIES}
    assert parts[experiment.HEADLINE].differences == pytest.approx(tuple(5.0 + jitter(s) for s in seeds))
    same = variants_runs(seeds, {"ssa": 0.1, "ssa_n1.5": 0.1, "ssa_n2": 0.1})
    assert experiment.probing_verdict(same).outcome == "no difference that matters"
    worse = variants_runs(seeds, {"ssa": -5, "ssa_n1.5": -5, "ssa_n2": -5})
    assert experiment.probing_verdict(worse).outcome == "worse"
    softmax_only = [run for run in better if run.scorer == "softmax"]
    assert experiment.probing_verdict(softmax_only).outcome == "not tested"
    table = experiment.paper_comparison(better)
    assert table["our gain"].tolist() == pytest.approx([5.0 + sum(jitter(s) for s in seeds) / len(seeds)] * 4)
    assert table["outcome"].tolist() == ["SSA better"] * 4 and table["seeds"].tolist() == [len(seeds)] * 4
    assert experiment.accuracy_table(better).loc["mean over paradigms", "softmax"] == pytest.approx(
        100 * sum(seed_level(s) for s in seeds) / len(seeds)
    )


def test_parts_decided_both_ways_read_mixed_naming_each_part():
    # Only agreement_subject_verb uses ssa_n2 in the paper: it alone gains 5 points.
    mixed = variants_runs(range(experiment.CHAPTER_MIN_PAIRS), {"ssa_n2": 5, "ssa_n1.5": 0})
    verdict = experiment.probing_verdict(mixed)
    assert (
        verdict.outcome == "mixed"
        and verdict.words() == "mixed (no difference that matters on 4 of 5, SSA better on 1)"
    )
    assert "agreement_subject_verb-across_prepositional_phrase: SSA better" in verdict.detail
    assert "binding-principle_a: no difference that matters" in verdict.detail
    assert f"{experiment.HEADLINE}: no difference that matters" in verdict.detail  # mean gain 1.25 < 2


def test_a_gain_from_three_seeds_decides_nothing_and_every_seed_is_shown():
    # The case: +17.9, +0.1 and -0.7 points average to +5.8 but decide nothing.
    paradigm = "quantifiers-superlative"
    runs = [fake_run("softmax", s, 0.50) for s in range(3)]
    runs += [
        fake_run("ssa_n1.5", s, {**{p: 0.50 for p in zorro.PARADIGMS}, paradigm: 0.50 + g / 100})
        for s, g in enumerate((17.9, 0.1, -0.7))
    ]
    runs += [fake_run("ssa_n2", s, 0.50) for s in range(3)]
    table = experiment.gain_table(runs)
    assert table.loc[paradigm, ["seed 0", "seed 1", "seed 2"]].tolist() == pytest.approx([17.9, 0.1, -0.7])
    assert table.loc[paradigm, "mean gain"] == pytest.approx(5.7666, abs=1e-3)
    assert table.loc[paradigm, "outcome"] == "exploratory (3 pairs)" and int(table.loc[paradigm, "pairs to decide"]) > 6
    assert experiment.probing_verdict(runs).outcome == "exploratory"
    summary = experiment.summary(runs)
    assert "no claim can be decided" in summary and "exploratory" in summary
    power = experiment.power_table(runs, simulations=50)
    assert (power["3 seeds"].dropna() == 0).all() and "20 seeds" in power


def test_calibration_against_babyberta_says_when_the_baseline_is_undertrained():
    weak = [
        dataclasses.replace(run, config={"steps": 6000, "batch_size": 16})
        for run in variants_runs(range(experiment.CHAPTER_MIN_PAIRS), {"ssa": 0.1, "ssa_n1.5": 0.1, "ssa_n2": 0.1})
    ]
    calibrated = experiment.calibration(weak)
    assert calibrated["far"] and calibrated["fraction"] == pytest.approx(6000 * 16 / (400_000 * 16))
    assert calibrated["reference"] == experiment.BABYBERTA_ZORRO_ACCURACY
    verdict = experiment.probing_verdict(weak)
    assert verdict.outcome == "no difference that matters" and "undertrained" in verdict.detail
    # decided parts and a baseline far below BabyBERTa's: a null weighs little, both baselines said
    caveat = experiment.evidence_caveat(weak)
    assert caveat == (
        f"our softmax's overall Zorro accuracy is {calibrated['mean']:.1f}%, BabyBERTa's "
        f"{experiment.BABYBERTA_ZORRO_ACCURACY:g}%: a null result here says little of the paper's scale"
    )
    assert caveat in verdict.detail
    # every part exploratory: any result weighs little, a gain as much as a null
    few = [run for run in weak if run.seed < 8]
    assert experiment.evidence_caveat(few).startswith(
        f"every part is exploratory (8 paired seeds of the {experiment.CHAPTER_MIN_PAIRS} this chapter decides from) and our "
        "softmax's overall Zorro accuracy is "
    )
    assert experiment.evidence_caveat(few).endswith(
        "any result here, a gain, a loss or a null, says little of the paper's scale"
    )
    assert experiment.evidence_caveat(few) in experiment.summary(few)
    strong = [fake_run("softmax", s, 0.79, steps=400_000) for s in range(6)]
    strong += [fake_run("ssa_n1.5", s, 0.79, steps=400_000) for s in range(6)]
    assert experiment.calibration(strong)["far"] is False
    # Runs that do not score every paradigm have no overall accuracy to calibrate.
    partial = [fake_run("softmax", 0, {"binding-principle_a": 0.6})]
    assert experiment.calibration(partial)["far"] is None


def test_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="variant must be one of"):
        experiment.run_config("smoke", "linear", 0)


def test_command_line_refuses_unknown_profile_and_variant(capsys):
    from ssa_book.cli.regenerate import main

    with pytest.raises(SystemExit):
        main(["encoder", "--profile", "huge"])
    assert "argument --profile: invalid choice" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["encoder", "--profile", "cpu", "--scorers", "linear"])
    assert "argument --scorers: unknown scorer 'linear'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["encoder", "--profile", "cpu", "--scorers", "cosformer"])
    assert "the encoder chapter accepts only softmax, ssa, ssa_n1.5, ssa_n2" in capsys.readouterr().err
