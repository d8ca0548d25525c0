"""The leaderboard (ssa_book.leaderboard.board): its columns, its cells from synthetic runs, and its tables."""

import dataclasses
import json

import numpy as np
import pytest
from scipy import stats

from ssa_book.leaderboard import board as lb, findings, tables
from ssa_book.verdicts.words import (
    BETTER,
    DOES_NOT_HOLD,
    NEGLIGIBLE,
    NOT_LEARNED,
    NOT_TESTED,
    TOO_FEW_SEEDS,
    UNDECIDED,
    WORSE,
)
from ssa_book.verdicts.claim import no_effect_pairs
from ssa_book.verdicts.verdict import DIRECTION_LOG_ENV
from synthetic_runs import icl_run as _icl_run, loader as _loader, noisy as _noisy, retrieval_run as _retrieval_run

PROFILE = "cpu"


def test_every_point_is_the_first_test_point_ten_times_the_training_scale():
    from ssa_book.icl.experiments import experiment_config
    from ssa_book.retrieval.experiment import experiment_config as retrieval_config

    for each in lb.COLUMNS:
        if each.benchmark == lb.ICL:
            sigmas = experiment_config(each.task, "softmax", PROFILE).eval.sigmas
            assert each.point == min(s for s in sigmas if s >= lb.TEN_TIMES * 1)
        else:
            config = retrieval_config("softmax", PROFILE, setup=each.setup)
            assert each.point == min(size for size in config.eval.sizes if size >= lb.TEN_TIMES * config.train.items)
            for profile in ("smoke", "cpu", "paper"):  # every profile tests the point
                assert each.point in retrieval_config("softmax", profile, setup=each.setup).eval.sizes
    assert [each.setup for each in lb.COLUMNS if each.benchmark == lb.RETRIEVAL] == ["short", "original"]


def test_the_in_context_runs_train_the_chapters_models_and_test_sigma_1_and_the_point():
    from ssa_book.icl.experiments import experiment_config

    for profile in ("smoke", "cpu", "paper"):
        for task in ("every", "linear"):
            ours = lb.icl_experiment(task, "sparsemax", 103, profile)
            assert ours.train == experiment_config(task, "sparsemax", profile, 103).train
            assert ours.eval.sigmas == (1, lb.TEN_TIMES) and ours.eval.lengths == ()


def test_unknown_column_is_an_error_naming_the_choices():
    with pytest.raises(ValueError, match="column must be one of every, some"):
        lb.column("wide")
    with pytest.raises(ValueError, match="benchmark must be"):
        lb.seeds("icl", PROFILE)


def test_reading_never_trains_at_cpu():
    with pytest.raises(ValueError, match="never by reading them"):
        lb.read("cpu", train=True)


def test_mean_interval_is_the_t_interval_and_needs_two_values():
    values = [0.1, 0.3, 0.2, 0.6]
    low, high = lb.mean_interval(values)
    expected = stats.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=stats.sem(values))
    assert (low, high) == pytest.approx(expected)
    assert lb.mean_interval([0.4]) is None
    assert lb.mean_interval([0.2, 0.2]) == (0.2, 0.2)


def test_a_scorer_better_everywhere_is_better_in_every_column_and_the_others_are_judged_on_paired_seeds():
    def icl_error(task, scorer, seed):
        return _noisy(0.1 if scorer == "sigmoid" else 0.6, seed)

    def accuracy(scorer, seed):
        return _noisy(0.9 if scorer == "sigmoid" else 0.5, seed)

    board = lb.read(PROFILE, load=_loader(icl_error, accuracy))
    assert board.complete and board.runs == (len(lb.plan(PROFILE)),) * 2
    for each in lb.COLUMNS:
        # where prompt errors flip from seed to seed, the seeds are too few for any decision
        # (ssa_book.verdicts.claim.no_effect_pairs); elsewhere sigmoid is better, and identical errors seed by
        # seed are no difference at the threshold
        too_few = len(lb.seeds(each.benchmark, PROFILE)) < no_effect_pairs(each.claim)
        assert too_few == (each.key in ("every", "some", "retrieval", "retrieval_original"))
        assert board.cell("sigmoid", each.key).verdict.outcome == (TOO_FEW_SEEDS if too_few else BETTER)
        assert board.cell("sigmoid", each.key).verdict.pairs == len(lb.seeds(each.benchmark, PROFILE))
        assert board.cell("sparsemax", each.key).verdict.outcome == (TOO_FEW_SEEDS if too_few else NEGLIGIBLE)
        assert board.cell("softmax", each.key).verdict is None
    retrieval = board.cell("sigmoid", "retrieval")
    assert retrieval.mean == pytest.approx(1 - np.mean([_noisy(0.9, s) for s in range(10)]))
    assert findings.best_scorers(board) == {
        each.key: [] if each.key in ("every", "some", "retrieval", "retrieval_original") else ["sigmoid"]
        for each in lb.COLUMNS
    }
    # the paper's statement reads the in-context columns only; sigmoid is not one of its alternatives
    # its alternatives match softmax: ten seeds of prompt errors cannot show it, the linear panels do, so no alternative's
    # claim to be better on every panel can hold (the book's one tally of parts), and the statement holds
    statement = findings.statement_verdict(board)
    assert statement.outcome == BETTER and "4 task-and-shift panels" in statement.detail
    assert (
        "(holds for 6 of the 6 alternatives)" in statement.detail
        and "cosFormer, does not hold (no difference that matters on 2 of 4, exploratory on 2)" in statement.detail
    )
    assert "experiments with 10 seeds, " in statement.detail and "with 20" in statement.detail  # 10 is said once
    # SSA matches softmax: no difference where the seeds can show it, undecided where they cannot;
    # the claim does not hold, and the undecided columns stay in the tally, not folded into "no effect"
    assert findings.ssa_verdict(board).outcome == DOES_NOT_HOLD
    assert findings.ssa_verdict(board).tally() == "exploratory on 4 of 6, no difference that matters on 2"
    table = tables.table(board)
    assert table.loc["sigmoid", '"every", σ of x = 10'].endswith("exploratory")
    assert table.loc["sigmoid", lb.COLUMNS[2].label].endswith("scorer better than softmax")
    frame = tables.frame(board)
    assert len(frame) == len(lb.scorers()) * len(lb.COLUMNS)
    assert set(frame["outcome"]) == {"reference", BETTER, NEGLIGIBLE, TOO_FEW_SEEDS}


def test_a_cell_waits_for_every_seed_and_a_column_for_softmax():
    def icl_error(task, scorer, seed):
        return _noisy(0.3, seed)

    missing = {
        ("icl", "every", "ssa", 104),
        ("icl", "some", "softmax", 100),
        ("retrieval", "cosformer", 9),
        ("retrieval", "sigmoid", 3, "original"),
    }
    board = lb.read(PROFILE, load=_loader(icl_error, lambda scorer, seed: 0.8, missing))
    assert board.cell("ssa", "every") is None and board.cell("sparsemax", "every") is not None
    assert all(board.cell(scorer, "some") is None for scorer in lb.scorers())
    assert board.cell("cosformer", "retrieval") is None and board.cell("ssa", "retrieval") is not None
    # each setup's column reads its own runs
    assert (
        board.cell("cosformer", "retrieval_original") is not None
        and board.cell("sigmoid", "retrieval_original") is None
    )
    assert board.cell("sigmoid", "retrieval") is not None and board.seeds_cached[("sigmoid", "retrieval_original")] == (
        9,
        10,
    )
    assert board.seeds_cached[("ssa", "every")] == (9, 10)
    assert not board.complete and "regenerate leaderboard" in board.progress_sentence()
    # the cell's comparison counts SSA's 9 seeds and softmax's 10
    assert tables.table(board).loc["SSA", '"every", σ of x = 10'] == "not run yet: 19 of 20 runs done"
    assert tables.table(board).loc["softmax", '"some", σ of x = 10'] == "not run yet: 9 of 10 runs done"
    verdict = findings.ssa_verdict(board)
    assert verdict.outcome == UNDECIDED and 'not run yet: "every", σ of x = 10, "some", σ of x = 10' in verdict.detail


def test_a_comparison_where_softmax_or_the_scorer_did_not_learn_reads_not_learned():
    def load(run):
        if run[0] == "retrieval":
            return _retrieval_run(run[1], run[2], 0.5, accuracy_at_16=0.05 if run[1] == "softmax" else 0.99)
        task, scorer, seed = run[1:]
        return _icl_run(task, scorer, seed, 0.5, error_at_1=0.5 if scorer == "cosformer" else 0.0)

    board = lb.read(PROFILE, load=load)
    assert {board.cell(s, "retrieval").verdict.outcome for s in lb.scorers()[1:]} == {NOT_LEARNED}
    assert (
        "softmax did not learn the task (max retrieval (short setup) in distribution"
        in board.cell("ssa", "retrieval").verdict.detail
    )
    cosformer = board.cell("cosformer", "every")
    assert cosformer.verdict.outcome == NOT_LEARNED and not cosformer.learned
    assert tables.table(board).loc["cosFormer", '"every", σ of x = 10'].endswith("not learned")


def test_an_interval_is_clipped_to_the_range_of_its_error():
    cell = lb.Cell("ssa", "every", (0, 1), (0.0, 0.9), True, None, bounded=True)
    assert cell.interval[0] == 0.0 and cell.interval[1] == 1.0
    unbounded = dataclasses.replace(cell, column="linear_x", bounded=False)
    assert unbounded.interval[1] > 1.0


def test_the_figure_has_one_panel_per_column():
    import matplotlib

    matplotlib.use("Agg")
    board = lb.read(PROFILE, load=_loader(lambda task, scorer, seed: _noisy(0.3, seed), lambda scorer, seed: 0.7))
    figure = findings.plot(board)
    assert len(figure.axes) == len(lb.COLUMNS)


def test_the_download_is_one_row_per_seed_as_a_file_or_inside_the_link(tmp_path):
    import base64
    import io
    import re

    import pandas as pd

    board = lb.read(PROFILE, load=_loader(lambda task, scorer, seed: _noisy(0.3, seed), lambda scorer, seed: 0.7))
    frame = tables.seed_frame(board)
    cells = [
        (scorer, each.key) for scorer in lb.scorers() for each in lb.COLUMNS if board.cell(scorer, each.key) is not None
    ]
    assert len(frame) == sum(len(board.cell(*cell).seeds) for cell in cells)
    assert not frame.duplicated(["scorer", "column", "seed"]).any()
    softmax = frame[frame["scorer"] == "softmax"]
    assert (softmax["error"] == softmax["softmax_error"]).all() and set(softmax["outcome"]) == {"reference"}
    link = tables.download_link(frame)
    payload = re.search(r"base64,([A-Za-z0-9+/=]+)\"", link).group(1)
    back = pd.read_csv(io.StringIO(base64.b64decode(payload).decode("utf-8")))
    assert list(back.columns) == list(frame.columns) and len(back) == len(frame)
    # in the book: a file in the downloads folder, which the build puts at the site's root
    link = tables.download_link(frame, tmp_path / "downloads")
    assert f'href="../{tables.CSV_NAME}"' in link
    assert len(pd.read_csv(tmp_path / "downloads" / tables.CSV_NAME)) == len(frame)
    assert list(tables.columns_table().index) == [each.label for each in lb.COLUMNS]


def test_the_statement_is_read_only_once_every_cell_it_needs_is_filled():
    missing = {("icl", "linear", "cosformer", 103)}
    board = lb.read(
        PROFILE, load=_loader(lambda task, scorer, seed: _noisy(0.3, seed), lambda scorer, seed: 0.7, missing)
    )
    assert not findings.statement_complete(board)
    reading = findings.statement_reading(board)
    assert reading["outcome"] == NOT_TESTED and "26 of the 28 in-context cells" in reading["text"]
    # every alternative worse than softmax everywhere: none is better on any panel
    full = lb.read(
        PROFILE,
        load=_loader(
            lambda task, scorer, seed: _noisy(0.3 if scorer == "softmax" else 0.6, seed), lambda scorer, seed: 0.7
        ),
    )
    reading = findings.statement_reading(full)
    # ten seeds cannot decide a prompt error that flips from seed to seed, in either direction, but the linear panels
    # decide each alternative worse: none can be better on every panel, and the statement holds
    assert reading["complete"] and reading["outcome"] == BETTER and "at 10 paired seeds" in reading["text"]
    assert reading["text"].startswith("holds, at 10 paired seeds")


def test_the_chapter_plans_its_runs_in_parts_each_setup_of_max_retrieval_apart():
    from ssa_book.studies import plan

    runs = plan("leaderboard", PROFILE)
    parts = {lb.CHAPTER.part(run) for run in runs}
    assert parts == {"cost", "in-context runs", "max retrieval, short setup", "max retrieval, original setup"}
    original = [run for run in runs if lb.CHAPTER.part(run) == "max retrieval, original setup"]
    assert len(original) == len(lb.scorers()) * len(lb.seeds(lb.RETRIEVAL, PROFILE))
    assert all(run.arguments[2:] == ("original",) for run in original)


def _synthetic_board(
    errors=lambda task, scorer, seed: _noisy(
        0.1 if scorer == "sigmoid" else 0.6 if scorer == "cosformer" else 0.3, seed
    ),
):
    # sigmoid better than softmax on the linear columns, cosFormer worse there
    return lb.read(PROFILE, load=_loader(errors, lambda scorer, seed: 0.7))


def test_the_csv_has_regime_columns_six_significant_digits_and_verdicts_with_their_subject(tmp_path):
    import re

    import pandas as pd

    board = _synthetic_board()
    cost = {lb.ICL: {"scorers": {"sigmoid": {"time_ratio": 1.0 / 3.0, "memory_ratio": 2.0}}}}
    frame = tables.seed_frame(board, cost)
    tables.download_link(frame, tmp_path)
    text = (tmp_path / tables.CSV_NAME).read_text(encoding="utf-8")
    back = pd.read_csv(tmp_path / tables.CSV_NAME)
    # regime columns, the same for every row of a column, in words and field by field
    for name in ("regime", "regime_layers", "regime_width", "regime_steps", "regime_learning_rate", "regime_seeds"):
        assert back[name].notna().all() and (back.groupby("column")[name].nunique() == 1).all(), name
    linear = back[back["column"] == "linear_x"].iloc[0]
    assert linear["regime"].startswith("in context, 4 layers of width 64,") and linear["regime_layers"] == 4
    assert back[back["column"] == "retrieval_original"].iloc[0]["regime"].startswith("max retrieval, original setup: ")
    # six significant digits at most: no float noise such as -0.27851560000000003
    numbers = re.findall(r"(?<![\w.])-?\d+\.\d+(?:e-?\d+)?", text)
    assert numbers and all(
        len(number.lstrip("-").split("e")[0].replace(".", "").lstrip("0")) <= tables.CSV_DIGITS for number in numbers
    )
    assert "0.333333" in text and "0.3333333" not in text
    # verdicts name their subject: never a bare "better" or "worse"
    outcomes = set(back["outcome"])
    assert {"sigmoid better than softmax", "cosFormer worse than softmax", "reference"} <= outcomes
    for outcome in outcomes:
        for found in re.finditer(r"\b(better|worse)\b", outcome):
            assert outcome[found.end() :].startswith(" than softmax") and outcome[: found.start()].strip(), outcome
    row = back[(back["scorer"] == "sigmoid") & (back["column"] == "linear_x")]
    assert set(row["outcome"]) == {"sigmoid better than softmax"} and (row["effect"] > 0).all()


def test_the_page_says_what_a_row_of_the_csv_is():
    import json
    from pathlib import Path

    board = _synthetic_board()
    frame = tables.seed_frame(board)
    assert len(frame) == sum(len(cell.seeds) for cell in board.cells.values())
    assert "one per scorer, column and seed" in tables.download_link(frame)
    notebook = json.loads(
        (Path(__file__).resolve().parent.parent / "notebooks" / "leaderboard.ipynb").read_text(encoding="utf-8")
    )
    prose = " ".join(
        " ".join("".join(cell["source"]).split()) for cell in notebook["cells"] if cell["cell_type"] == "markdown"
    )
    assert "The CSV has one row per scorer, column and seed" in prose
    assert "one row per scorer and column:" not in prose.replace("CSV has one row per scorer, column", "")


def test_the_pages_table_is_a_row_per_scorer_and_column_with_its_regime_verdict_and_cost():
    board = _synthetic_board()
    cost = {lb.ICL: {"scorers": {"ssa": {"time_ratio": 1.234, "memory_ratio": 1.5}}}}
    table = tables.board_frame(board, cost)
    assert len(table) == len(lb.scorers()) * len(lb.COLUMNS) and not table.duplicated(["scorer", "column"]).any()
    assert list(table.columns[-2:]) == list(tables.BOARD_COST_COLUMNS)
    ssa = table[(table["scorer"] == "SSA") & (table["column"] == lb.COLUMNS[0].label)].iloc[0]
    assert ssa["step time / softmax"] == 1.23 and ssa["regime"] == "in context, 4 × 64, 1,000 steps, lr 0.001"
    assert set(table[table["scorer"] == "cosFormer"]["against softmax"]) >= {"cosFormer worse than softmax"}
    words = " ".join(table["against softmax"])
    assert "better" not in words.replace("better than softmax", "") and "worse" not in words.replace(
        "worse than softmax", ""
    )
    # a cell not complete says how many seeds are cached
    partial = lb.read(
        PROFILE,
        load=_loader(
            lambda task, scorer, seed: _noisy(0.3, seed), lambda scorer, seed: 0.7, {("icl", "every", "ssa", 104)}
        ),
    )
    row = tables.board_frame(partial).set_index(["scorer", "column"]).loc[("SSA", lb.COLUMNS[0].label)]
    assert row["against softmax"] == "not run yet: 19 of 20 runs done" and np.isnan(row["mean error"])


def test_the_interactive_table_works_offline_and_sorts_and_filters():
    import re

    html = tables.interactive_table(tables.board_frame(_synthetic_board()))
    scripts = " ".join(re.findall(r"<script[^>]*\bsrc=[\"']?([^\"' >]+)", html))
    assert not scripts, f"the table loads a script from {scripts}"  # DataTables travels inside the page
    assert "unpkg.com" not in html.replace("https://www.unpkg.com/dt_for_itables", "") or "import {" not in html
    assert "injectModule(" in html and '"pageLength": 14' in html and '"topEnd": "search"' in html
    assert "nowrap" not in html  # its cells wrap to fit the text column


def test_the_figures_takeaway_counts_the_columns_where_a_scorer_is_better_than_softmax_and_names_it():
    # sigmoid better than softmax on the two linear columns, nowhere else
    text = findings.winners_takeaway(_synthetic_board())
    assert text.startswith(
        f"In 2 of {len(lb.COLUMNS)} columns a scorer is better than softmax: sigmoid on linear, σ of x = 10"
    )
    assert "sigmoid on linear, σ of a, b = 10" in text
    assert findings.winners_takeaway(_synthetic_board(lambda task, scorer, seed: 0.3)) == (
        f"In none of the {len(lb.COLUMNS)} columns is a scorer better than softmax"
    )


def test_a_direction_that_rests_on_one_seed_says_so_beside_its_word(tmp_path, monkeypatch):
    # sigmoid's linear errors are softmax's less 0.09, less 0.3 at seed 102: the mean reaches the
    # threshold (0.1) only with that seed, so the word "better" carries it wherever it is said
    def errors(task, scorer, seed):
        return (
            0.5 - (0.3 if seed == 102 else 0.09) - 0.001 * seed
            if scorer == "sigmoid" and task == "linear"
            else 0.5 - 0.001 * seed
        )

    board = lb.read(PROFILE, load=_loader(errors, lambda scorer, seed: 0.7))
    cell = board.cell("sigmoid", "linear_x")
    assert cell.verdict.outcome == BETTER and tables.rests_on(cell) == "rests on seed 102"
    assert tables.against_softmax(cell) == "sigmoid better than softmax (rests on seed 102)"
    assert "sigmoid better, but it rests on seed 102 (+0.111" in findings.winners_words(
        board
    ) and "threshold 0.1)" in findings.winners_words(board)
    # the word comes from the verdict that decided it, so the build's direction check finds it logged
    log = tmp_path / "directions.jsonl"
    monkeypatch.setenv(DIRECTION_LOG_ENV, str(log))
    findings.winners_words(board)
    assert any(json.loads(line)["words"] == "sigmoid better" for line in log.read_text().splitlines())
    assert "sigmoid on linear, σ of x = 10 (rests on seed 102)" in findings.winners_takeaway(board)
    # a direction that survives leaving any one seed out says nothing more
    assert tables.against_softmax(_synthetic_board().cell("sigmoid", "linear_x")) == "sigmoid better than softmax"


def test_ssa_is_judged_kind_of_shift_by_kind_so_a_word_decided_on_one_is_not_said_of_both():
    # SSA matches softmax: the linear columns decide "no difference that matters", the prompt-error and
    # max-retrieval columns are exploratory at ten seeds
    board = _synthetic_board()
    found = findings.ssa_by_shift(board)
    assert [verdict.outcome for verdict in found.values()] == [DOES_NOT_HOLD, TOO_FEW_SEEDS]
    # each kind says what its word rests on, and that set size's fewest pairs came after reading, with its word before them
    assert findings.ssa_shifts_sentence(board) == (
        "does not hold on input and function scale (no difference that matters on 2 of 4, "
        "exploratory on 2; linear panels only); undecided on set size (exploratory on 2 of 2; "
        "pair minimum set after reading, no difference that matters before it)"
    )
    # where max retrieval decides too, its kind gets its own word
    decided = lb.read(
        PROFILE,
        load=_loader(
            lambda task, scorer, seed: _noisy(0.3, seed), lambda scorer, seed: 0.6 if scorer == "ssa" else 0.9
        ),
    )
    # ten seeds, below its 20 set after reading: what the rule's own 6 would have said stands beside it
    assert findings.ssa_shifts_sentence(decided).endswith(
        "; undecided on set size (exploratory on 2 of 2; pair minimum set after reading, SSA worse before it)"
    )
    assert (
        findings.ssa_shifts_sentence(
            lb.read(PROFILE, load=_loader(lambda *run: 0.3, lambda *run: 0.7, set(lb.plan(PROFILE))))
        )
        == ""
    )


def test_the_caption_counts_the_pairs_of_a_column_not_the_distinct_seeds_of_all_columns():
    board = _synthetic_board()
    assert board.pair_counts() == (10,) and len({seed for cell in board.cells.values() for seed in cell.seeds}) == 20
    assert board.caption().startswith("cpu profile, 10 paired seeds a column (in context 100-109, max retrieval 0-9), ")
    assert (
        board.caption(seeds=False).startswith("cpu profile, 10 paired seeds a column, ")
        and "20 seeds" not in board.caption()
    )


def test_the_statement_says_its_direction_plainly_and_on_which_panels_its_word_rests():
    from ssa_book.leaderboard import claims

    # the alternatives match softmax but cosFormer, worse: the linear panels decide each against, the
    # prompt-error panels are exploratory at ten seeds, so the statement holds on linear panels only
    statement = findings.statement_verdict(_synthetic_board())
    assert statement.outcome == BETTER
    assert (
        claims.statement_words(statement)
        == "holds: no alternative the paper tried is better than softmax on every panel"
    )
    assert claims.statement_basis(statement) == (
        "on linear panels only (no difference that matters on 10 of 12, cosFormer worse on 2); "
        '"every" and "some" exploratory on 12 of 12'
    )
    assert claims.statement_qualifier(statement, 10) == (
        'on linear panels only (no difference that matters on 10 of 12, cosFormer worse on 2); "every" and "some" '
        'exploratory on 12 of 12; the tally giving "holds" at 10 seeds set after reading, undecided before it.'
    )
    # open everywhere: undecided whether any is better, never "is not better: undecided"
    open_ = dataclasses.replace(statement, outcome=TOO_FEW_SEEDS)
    assert (
        claims.statement_words(open_)
        == "undecided whether any alternative the paper tried is better than softmax on every panel"
    )
    assert "not better" not in claims.statement_ours(open_)
    assert claims.statement_words(dataclasses.replace(statement, outcome=WORSE)).startswith(
        "does not hold: an alternative"
    )
    # every task decides a panel: nothing to qualify
    linear_only = dataclasses.replace(
        statement,
        parts=tuple(
            (
                name,
                dataclasses.replace(
                    part, parts=tuple((panel, v) for panel, v in part.parts if panel.startswith("linear"))
                ),
            )
            for name, part in statement.parts
        ),
    )
    assert claims.statement_finding(statement, 10, "The chapter's own 3 seeds read undecided.") == (
        'Holds on linear panels only ("every" and "some" exploratory on 12 of 12); the tally giving "holds" at 10 seeds set '
        "after reading, undecided before it; the chapter's own 3 seeds read undecided."
    )
    assert claims.statement_basis(linear_only) == "" and claims.statement_qualifier(linear_only, 10).startswith(
        "(the tally giving"
    )


def test_the_false_discovery_sentence_agrees_in_number_with_one_direction():
    from types import SimpleNamespace

    from ssa_book.verdicts.verdict import Verdict

    def board_of(verdict):
        first = (lb.scorers()[1], lb.COLUMNS[0].key)
        return SimpleNamespace(
            cell=lambda scorer, key: SimpleNamespace(verdict=verdict) if (scorer, key) == first else None
        )

    kept = Verdict("x", WORSE, treatment="SSA", adjusted_p=0.01)
    assert findings.false_discovery_sentence(board_of(kept)).endswith(
        "the 1 direction the interval and threshold decide keeps an adjusted p below 0.05 and its word."
    )
    lost = Verdict("x", UNDECIDED, treatment="SSA", uncontrolled=WORSE, adjusted_p=0.2)
    assert findings.false_discovery_sentence(board_of(lost)).endswith(
        "the 1 direction the interval and threshold decide does not keep an adjusted p below 0.05 and its word; "
        "it reads undecided: x."
    )
