"""The record of post hoc changes: complete for the study's amendments, and its versions of the
rule reproduce what each version said."""

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest

from ssa_book import analysis_changes as changes, changed_readings, claims

ROOT = Path(__file__).resolve().parent.parent


def _first_commit_with(path: str, marker: str) -> str | None:
    """The commit that first added ``marker`` to ``path`` (the one that added ``path`` when ``marker`` is empty)."""
    command = (
        ["git", "log", "--diff-filter=A", "--format=%h", "--abbrev=7", "--", path]
        if not marker
        else ["git", "log", "-S", marker, "--format=%h", "--abbrev=7", "--", path]
    )
    found = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return found[-1] if found else None


def test_every_plan_step_and_change_after_a_reading_is_the_commit_that_made_it():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    if _first_commit_with("ssa/icl/study.py", "") is None:
        pytest.skip("a shallow clone without the plan's first commit")
    for step in changes.PLAN_STEPS:
        assert _first_commit_with(step.path, step.marker) == step.commit, step.what
    after_reading = {change.commit for change in changes.CHANGES if change.after_reading}
    for commit, (path, marker) in changes.PLAN_CHANGE_MARKERS.items():
        assert commit in after_reading
        assert _first_commit_with(path, marker) == commit, marker


def test_every_recorded_commit_exists_and_the_dates_run_forward():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for change in changes.CHANGES:
        found = subprocess.run(["git", "cat-file", "-t", change.commit], cwd=ROOT, capture_output=True, text=True)
        if found.returncode != 0:
            pytest.skip("a shallow clone without the recorded commits")
        date = subprocess.run(
            ["git", "show", "-s", "--format=%ad", "--date=short", change.commit],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert date == change.date, change.commit
    assert [c.date for c in changes.CHANGES] == sorted(c.date for c in changes.CHANGES)


@pytest.mark.parametrize(
    "parts, expected",
    [
        # SSA against softmax on five kinds of shift, as the leaderboard read it
        (
            ("worse", "undecided", "no difference that matters", "worse", "no difference that matters"),
            ("holds in part", "holds in part", "no difference that matters", "does not hold", "does not hold"),
        ),
        # five endpoints against the claim, one undecided
        (
            ("worse",) * 5 + ("undecided",),
            ("holds in part", "holds in part", "worse", "does not hold", "does not hold"),
        ),
        (("premise not shown", "undecided"), ("holds in part", "undecided", "undecided", "undecided", "undecided")),
        (("better", "worse"), ("holds in part",) * 4 + ("mixed",)),
        (("better", "better"), ("better",) * 5),
    ],
)
def test_each_version_of_combine_gives_what_it_gave(parts, expected):
    assert tuple(version(parts) for _, version in changes.COMBINE_VERSIONS) == expected


def test_combine_versions_lists_only_rows_whose_parts_differ():
    def row(key, verdict, parts):
        return claims.LedgerRow(key, key, "p", "o", "cpu", (), verdict, None, None, parts=parts)

    frame = changes.combine_versions(
        [
            row("one", "better", ()),
            row("same", "undecided", ("undecided",) * 2),
            row("across_shifts", "does not hold", ("worse", "exploratory")),
        ]
    )
    assert list(frame["claim"]) == ["across_shifts"]
    assert frame.loc[0, "parts"] == "SSA worse on 1 of 2, exploratory on 1"
    assert frame.loc[0, "as planned"] == "holds in part" and frame.loc[0, "after c05e175"] == "SSA worse"
    assert frame.loc[0, "after fe32bcd"] == frame.loc[0, "now: parts decided both ways read mixed"] == "does not hold"


def test_the_replication_change_shows_both_verdicts_of_adaptive_temperature(monkeypatch):
    from ssa_book.retrieval import analysis as retrieval

    from test_retrieval import _sized_run

    seeds = range(retrieval.CHAPTER_MIN_PAIRS)
    runs = {
        "softmax": [_sized_run("softmax", s, [0.95, 0.4, 0.25, 0.2 + 0.01 * s]) for s in seeds],
        "adaptive_temperature": [
            _sized_run("adaptive_temperature", s, [0.95, 0.44 + 0.002 * (s % 3), 0.29, 0.24 + 0.01 * s]) for s in seeds
        ],
    }
    # the short setup's runs cached, the original's not: its rows are left out
    monkeypatch.setattr(
        retrieval,
        "load_whole_seeds",
        lambda profile, scorers, device, setup: runs if setup == "short" else {name: [] for name in scorers},
    )
    monkeypatch.setattr(retrieval, "train_items", lambda profile, setup: 16)
    frame = changed_readings.replication_changes("cpu")
    assert list(frame["setup"]) == ["short", "short"]
    assert list(frame["threshold"]) == ["0.05 accuracy", "0.024 accuracy"]
    assert frame.loc[0, "verdict"].startswith("no difference that matters")
    assert frame.loc[1, "verdict"].startswith("adaptive temperature better") and frame.loc[1, "verdict"].endswith(
        f"({len(seeds)} pairs)"
    )


def test_a_verdict_moved_by_the_symmetric_rule_reads_after_as_its_chapters_family_reads_it():
    from ssa_book.verdicts.claim import Claim
    from ssa_book.verdicts.judge import judge, judged
    from ssa_book.verdicts.families import control_false_discoveries

    claim = Claim("a small loss", 1, 0.1, "error", "a tenth of the scale")
    with judged() as found:
        small = judge(claim, [-0.05, -0.04, -0.06, -0.045, -0.055, -0.052], [0.0] * 6)
        other = judge(
            Claim("no loss", 1, 0.1, "error", "a tenth"), [0.01, -0.01, 0.02, -0.02, 0.005, -0.006], [0.0] * 6
        )
        assert (
            small.label() == "no difference that matters; SSA slightly worse"
        )  # alone, the signed-rank test at 5% says so
        family = control_false_discoveries([small, other])
    assert family[0].label() == "no difference that matters"  # its family's adjusted p does not
    moved = changed_readings.symmetric_rule_changes(found).set_index("claim")
    assert list(moved.index) == ["a small loss"]
    assert (
        moved.loc["a small loss", "before"] == "SSA worse"
        and moved.loc["a small loss", "why"] == "the threshold for worse"
    )
    assert moved.loc["a small loss", "after"] == family[0].label()


def test_the_overview_counts_what_was_declared_before_reading_and_what_after():
    after = changes.CHANGES[:3]  # two to the rule, one to thresholds
    assert changes.declared_sentence(after, changes.PLAN_STEPS[:2]) == (
        "Declared before the results they judge were read: the 2 plan steps listed last on this page. Made after results "
        "were read: all 3 changes listed below, to the rule (2) and thresholds (1), each with the readings it changed."
    )
    before = dataclasses.replace(after[0], after_reading=False)
    sentence = changes.declared_sentence([before, *after[1:]], changes.PLAN_STEPS[:2])
    assert "the 2 plan steps listed last on this page and 1 of the changes below." in sentence
    assert "Made after results were read: 2 changes listed below, to the rule (1) and thresholds (1)," in sentence
    assert changes.declared_sentence([before], changes.PLAN_STEPS[:1]).endswith(
        "No change was made after results were read."
    )


def test_the_leaderboard_cells_the_prompt_error_minimum_left_exploratory_are_listed_with_their_word_before_it():
    frame = changed_readings.leaderboard_flip_minimum_changes("cpu")
    assert len(frame), "the cpu cache holds prompt-error cells at 10 pairs that read a direction before the minimum"
    for row in frame.to_dict("records"):
        assert row["pairs"] < 36 and row["now"].startswith("exploratory")
        assert row["before"].startswith(f"{row['scorer']} worse") or row["before"].startswith(f"{row['scorer']} better")
