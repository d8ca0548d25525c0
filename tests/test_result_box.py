"""Chapters open with their result (issue 53): a box of at most three computed bullets of at most
30 words under every experimental chapter's title, and no chapter longer than about 3,000 words a
reader sees with the dropdowns closed."""

import json
from pathlib import Path

import pytest

from ssa_book import claims, front_page, page_check, result_boxes
from ssa_book.verdicts.claim import Claim
from ssa_book.verdicts.judge import judge
from ssa_book.studies import PAPER

ROOT = Path(__file__).resolve().parent.parent
# Every experimental chapter: each opens with the box.
EXPERIMENTAL = (
    "icl_quantification",
    "icl_linear",
    "icl_collapse",
    "icl_study",
    "alternative_scorers",
    "decoder",
    "encoder",
    "performance",
    "max_retrieval",
    "leaderboard",
)
ICL = (
    "4 layers of width 64, 1,000 steps at learning rate 0.001 (constant), SSA from b = 2.72, n = 1.49 (the paper: "
    "12 layers of width 256, 500,000 steps at 0.0001); 40 paired seeds a task"
)


def _judged(effects, threshold=0.05):
    claim = Claim("SSA is better", 1, threshold, "error", "a reason")
    return judge(claim, list(effects), [0.0] * len(effects))


WORSE = (-0.2, -0.25, -0.15, -0.22, -0.18, -0.21, -0.19, -0.2)


def _row(key, verdict, seeds=tuple(range(40)), **fields):
    return claims.LedgerRow(key, PAPER[key].claim, "p", "o", "cpu", seeds, verdict, None, None, **fields)


def test_a_ledger_chapters_box_says_each_claims_verdict_with_its_direction_and_seeds_in_at_most_three_short_bullets():
    worse = _judged(WORSE)
    quantification = _row(
        "quantification",
        "does not hold",
        parts=("worse", "worse", "undecided"),
        regime=ICL,
        summary="Error at sigma 10: every -0.17 [-0.27, -0.07]; 40 paired seeds.",
        finding="On every, SSA vs the sharper softmax is undecided. " + "A long sentence of many words " * 8 + ".",
        headline=(("every", worse),),
    )
    bullets = result_boxes.chapter_findings([quantification])
    assert 1 <= len(bullets) <= result_boxes.BOX_BULLETS
    assert all(front_page.words(bullet) <= front_page.BULLET_WORDS for bullet in bullets), bullets
    assert bullets[0].startswith(
        "**ICL quantification**: the paper's claim does not hold (SSA worse on 2 of 3 parts, undecided on 1); 40 seeds"
    )
    assert bullets[1] == quantification.summary
    assert (
        bullets[2] == "On every, SSA vs the sharper softmax is undecided."
    )  # the long sentence does not fit, and is left out
    # a chapter of three claims: one bullet each, the numbers left out for want of room
    decoder = [
        _row("perplexity_id", "undecided", seeds=(1, 2, 3, 4, 5, 6), summary="Perplexity 261 and 263."),
        _row("perplexity_ood", "undecided", seeds=(1, 2, 3, 4, 5, 6)),
        _row("benchmarks", "not tested", seeds=(), summary="Not measured: no lm-eval results."),
    ]
    bullets = result_boxes.chapter_findings(decoder)
    assert bullets == [
        "**Perplexity, in distribution**: undecided; 6 seeds.",
        "**Perplexity, out of distribution**: undecided; 6 seeds.",
        "**Decoder benchmarks**: not tested. Not measured: no lm-eval results.",
    ]
    # an interval that excludes the paper's gain says so beside the word, with how far the baseline is from the paper's
    gain = _judged((0.01, -0.02, 0.0, 0.015, -0.01, 0.005), threshold=0.02)
    decoder[0] = _row(
        "perplexity_id",
        "undecided",
        seeds=(1, 2, 3, 4, 5, 6),
        published_excluded=True,
        paper_effect=0.103,
        headline=(("ppl", gain),),
        baseline=("the decoder's softmax in-distribution perplexity", 261.2, 21.86),
    )
    note = (
        "the 95% interval excludes the paper's gain of 0.103 error; the decoder's softmax in-distribution perplexity is 261, "
        "the paper's 21.86"
    )
    assert result_boxes.published_excluded_note(decoder[0]) == note
    assert result_boxes.chapter_findings(decoder)[0] == f"**Perplexity, in distribution**: undecided ({note}); 6 seeds."
    assert all(note in wording for wording in result_boxes.row_findings(decoder[0])[0])
    assert result_boxes.published_excluded_note(decoder[1]) == ""
    # the book's own test is not called the paper's claim
    shifts = result_boxes.chapter_findings([_row("across_shifts", "does not hold", seeds=(1, 2, 3))])
    assert shifts[0].startswith("**Own test: two shifts**: the book's test does not hold; 3 seeds")
    with pytest.raises(ValueError, match="rows"):
        result_boxes.chapter_findings([])


def test_a_check_the_parts_do_not_all_pass_stays_beside_the_word_and_no_shorter_wording_leaves_a_bracket_open():
    note = "a distribution-free check keeps 1 of 4 decided directions"
    finding = (
        "On every, these comparisons do not separate SSA's form from its starting slope: SSA vs the sharper softmax is "
        "undecided (+0.08 [-0.00, +0.16]); the decided ones are consistent with its starting slope (the sharper softmax vs "
        "softmax: sharper softmax worse -0.25 [-0.35, -0.16], SSA from b = 1: no difference that matters; see above)."
    )
    quantification = _row(
        "quantification",
        "does not hold",
        parts=("worse", "worse", "undecided"),
        regime=ICL,
        parts_note=note,
        finding=finding,
    )
    found = result_boxes.row_findings(quantification)
    assert all(f"({note})" in wording or f"; {note})" in wording for wording in found[0])
    # where the claim's words do not fit, its tally goes on beside the word before only the note does
    assert (
        found[0][-2]
        == f"**ICL quantification**: does not hold (SSA worse on 2 of 3 parts, undecided on 1; {note}); 40 seeds."
    )
    slope = found[-1]
    assert slope[-1] == (
        "On every, these comparisons do not separate SSA's form from its starting slope: SSA vs the sharper "
        "softmax is undecided (+0.08 [-0.00, +0.16])."
    )
    assert all(wording.count("(") == wording.count(")") for wording in slope)


def test_a_bullet_too_long_for_the_box_falls_back_to_its_shorter_wording_and_a_box_that_cannot_fit_is_refused():
    long = "word " * (front_page.BULLET_WORDS + 1)
    assert result_boxes.result_box([[long.strip() + ".", "short."], "two."]) == "- short.\n- two."
    with pytest.raises(ValueError, match="bullets make a result box with a bullet of 31 words"):
        result_boxes.result_box([long])
    with pytest.raises(ValueError, match="4 bullets"):
        result_boxes.result_box(["a.", "b.", "c.", "d."])
    with pytest.raises(ValueError, match="no bullet"):
        result_boxes.result_box([])


def test_chapter_rows_refuses_a_chapter_that_tests_no_claim():
    with pytest.raises(ValueError, match="chapter must test a claim of the ledger"):
        result_boxes.chapter_rows("performance")


def test_the_performance_box_reads_the_targets_checks():
    checks = [
        {"what": "attention time", "size": "lm", "tokens": 1024, "ratio": 1.18, "at most": 1.0, "met": False},
        {"what": "attention peak memory", "size": "lm", "tokens": 1024, "ratio": 1.0, "at most": 1.2, "met": True},
        {"what": "attention peak memory", "size": "icl", "tokens": 82, "ratio": 2.92, "at most": 1.2, "met": False},
        {
            "what": "in-context training time",
            "size": "icl training",
            "tokens": None,
            "ratio": 1.12,
            "at most": 1.05,
            "met": False,
        },
    ]
    box = result_boxes.result_box(result_boxes.performance_findings(checks, 1024))
    assert "SSA takes 1.18 times softmax's time and 1.00 times its peak memory" in box
    assert (
        "**A whole in-context training run**, estimated from timed training steps weighted by the curriculum: SSA's would take 1.12 times softmax's time."
        in box
    )
    assert (
        "**Targets**: 1 of 4 met; the furthest, attention peak memory at 82 tokens: 2.92 times softmax's, against at most 1.2."
        in box
    )
    with pytest.raises(ValueError, match="tokens must be a length the checks measure"):
        result_boxes.performance_findings(checks, 512)


def test_the_max_retrieval_box_names_the_direction_and_the_paired_seeds_once():
    worse = _judged(WORSE * 3)  # 24 pairs: decided
    few = _judged(WORSE[:4] * 2)  # 8 pairs
    box = result_boxes.result_box(
        result_boxes.retrieval_findings({"ssa": worse}, {"ssa": worse}, {"ssa": few}, few, few)
    )
    lines = box.splitlines()
    assert len(lines) == 3 and all(front_page.words(line[2:]) <= front_page.BULLET_WORDS for line in lines), box
    assert lines[0].startswith(
        "- **Short setup**, SSA against softmax on accuracy beyond the training sizes: SSA worse (24 paired seeds)"
    )
    assert "(24 paired seeds)" in lines[0] and "SSA worse" in lines[0]
    with pytest.raises(ValueError, match="accuracy must judge SSA"):
        result_boxes.retrieval_findings({}, {}, {}, few, few)


def test_the_max_retrieval_box_says_every_exploratory_verdict_in_one_form_with_its_estimate_and_note():
    from ssa_book.retrieval import analysis

    def exploratory(claim, differences):  # 10 pairs, under the chapter's 20: a direction only at the rule's own 6
        return judge(claim, list(differences), [0.0] * len(differences))

    ssa = exploratory(analysis.SHIFTED_ACCURACY, (WORSE + WORSE)[:10])
    gains = [0.1 + 0.01 * (seed % 3) for seed in range(10)]
    short, original = (
        exploratory(analysis.ADAPTIVE_TEMPERATURE_REPLICATION, gains),
        exploratory(analysis.ADAPTIVE_TEMPERATURE_REPLICATION, [gain + 0.05 for gain in gains]),
    )
    lines = result_boxes.result_box(
        result_boxes.retrieval_findings({"ssa": ssa}, {"ssa": ssa}, {"ssa": ssa}, short, original)
    ).splitlines()
    assert len(lines) == 3 and all(front_page.words(line[2:]) <= front_page.BULLET_WORDS for line in lines), lines
    form = f"exploratory (10 of {analysis.CHAPTER_MIN_PAIRS} pairs)"
    assert lines[0].endswith(f": {form}, {ssa.estimate()}; pair minimum set after reading, SSA worse before it.")
    assert (
        lines[1]
        == f"- **Original setup**, the same comparison: {form}, {ssa.estimate()}; pair minimum set after reading, SSA worse before it."
    )
    assert lines[2] == (
        f"- **Adaptive temperature** against its authors' published gain: {form}, short {short.estimate()}, original "
        f"{original.estimate()}; pair minimum set after reading, adaptive temperature better before it."
    )
    # one note, once, and no bracket group after another
    assert all(line.count("set after reading") == 1 and ") (" not in line for line in lines)


@pytest.mark.parametrize("name", EXPERIMENTAL)
def test_every_experimental_chapter_opens_with_its_result_box_before_any_section(name):
    notebook = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))
    first = "".join(notebook["cells"][0]["source"])
    title, rest = first.split("\n", 1)
    assert title.startswith("# ")
    assert rest.lstrip().startswith(":::{admonition} What this chapter found"), f"{name}: the box must follow the title"
    assert "```{glue:md} result_box" in rest.split("## ", 1)[0]
    glued = [
        cell
        for cell in notebook["cells"]
        if cell["cell_type"] == "code" and 'glue("result_box"' in "".join(cell["source"])
    ]
    assert len(glued) == 1 and "result_boxes.result_box(" in "".join(glued[0]["source"]), f"{name}: one computed box"


def test_visible_words_count_dropdown_titles_and_not_their_bodies():
    html = (
        "<main><article><h1>Title<a class='headerlink'>#</a></h1><p>one two three</p>"
        "<details><summary>the title</summary><p>many hidden words here</p></details>"
        "<span class='math'>\\(x + y\\)</span></article><div>sidebar words</div></main>"
    )
    assert page_check.visible_words(html) == 6


def test_long_pages_lists_the_chapters_over_the_limit_and_leaves_the_appendix_pages_out(tmp_path):
    def page(name, count):
        (tmp_path / name).write_text(
            f"<article><p>{'word ' * count}</p><details><summary>t</summary>{'x ' * 5000}</details></article>"
        )

    page("short.html", 10)
    page("long.html", page_check.CHAPTER_WORDS + 1)
    page("reproducing.html", page_check.CHAPTER_WORDS * 3)
    assert page_check.long_pages(tmp_path, ["short.html", "long.html", "reproducing.html"]) == {
        "long.html": page_check.CHAPTER_WORDS + 2
    }
    with pytest.raises(ValueError, match="limit must be a positive number"):
        page_check.long_pages(tmp_path, ["short.html"], limit=0)


def test_a_claim_of_many_parts_keeps_its_tally_beside_the_word_with_the_brief_note_where_it_fits():
    def shifts(parts):
        return _row(
            "across_shifts",
            "does not hold",
            seeds=tuple(range(10)),
            parts=parts,
            word_note="linear panels only",
            after_reading=(("set-size minimum", "SSA worse"), ("prompt-error minimum", "SSA worse on 1 of 2")),
        )

    many = shifts(("exploratory",) * 4 + ("no difference that matters",) * 2)
    # the direction the minimums moved stays in every form, whichever way it cut
    assert many.note(short=True) == (
        "linear panels only; set-size and prompt-error minimums set after reading, SSA worse before them"
    )
    assert many.note(brief=True) == "linear panels only; minimums set after reading, SSA worse before them"
    found = result_boxes.row_findings(many)[0]
    tallied = (
        "**Own test: two shifts**: does not hold (exploratory on 4 of 6 parts, no difference that matters on 2; "
        "linear panels only; minimums set after reading, SSA worse before them); 10 seeds."
    )
    assert tallied in found and found.index(tallied) < len(found) - 1  # before the word with its note alone
    # too long for the box: the word with its note, the direction before the minimums kept
    chosen = result_boxes.chapter_findings([many])[0]
    assert chosen == found[-1] and "SSA worse before them" in chosen
    # a shorter tally fits beside the short note
    few = shifts(("exploratory", "exploratory"))
    assert result_boxes.chapter_findings([few])[0] == (
        "**Own test: two shifts**: does not hold (exploratory on 2 of 2 parts; linear panels only; set-size and "
        "prompt-error minimums set after reading, SSA worse before them); 10 seeds."
    )
