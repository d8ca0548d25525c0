"""Reruns of a chapter of several setups (max retrieval's short and original ones), on made-up
entries without training: a subset run names its setup, the command that computes an
original-setup run, a record made before the original setup joined the subset, and adding only
the runs a machine's record lacks without writing into the book's cache. The rest of the reruns'
tests without training are tests/test_rerun_table.py's."""

import hashlib
import json
import shutil
import types
from pathlib import Path

import numpy as np
import pytest

from ssa_book.reruns import comparison, report
from ssa_book.reruns.comparison import SubsetRun
from ssa_book.studies import CHAPTERS
from ssa_book.retrieval.analysis import MaxRetrieval
from ssa_book.retrieval.experiment import ORIGINAL, ORIGINAL_RUNS, SEEDS, SHORT, experiment_config
from ssa_book.results.keys import entry_path
from ssa_book.results.provenance import CodeState, run_git
from test_rerun_table import cache_made_up_runs, cache_shifted

PROFILE = "smoke"
SIZES = (16, 64, 256)  # the smoke profile's test sizes in both setups
MACHINE = {"processor": "Made-up CPU", "aten_cpu_capability": "AVX2"}
SHORT_RUNS = (SubsetRun("max_retrieval", "softmax", 0), SubsetRun("max_retrieval", "ssa", 0))
ORIGINAL_SOFTMAX = SubsetRun("max_retrieval", "softmax", 0, setup=ORIGINAL)
WITH_ORIGINAL = (*SHORT_RUNS, ORIGINAL_SOFTMAX)


# ----------------------------------------------------------------------------------------------
# A subset run's setup.


def test_a_run_naming_no_setup_is_in_its_chapters_main_one():
    assert SubsetRun("max_retrieval", "softmax", 0) == SubsetRun("max_retrieval", "softmax", 0, setup=SHORT)
    assert SubsetRun("max_retrieval", "softmax", 0).setup == SHORT and SubsetRun("encoder", "ssa_n2", 0).setup is None
    # a row of a record made before the chapter had setups names none
    assert SubsetRun.of_row({"chapter": "max_retrieval", "scorer": "ssa", "seed": 0, "task": None}).setup == SHORT
    assert ORIGINAL_SOFTMAX.label == "max_retrieval (original setup) / softmax / seed 0"
    with pytest.raises(ValueError, match="setup must be one of short, original; got 'long'"):
        MaxRetrieval("long")


def test_the_subset_holds_softmax_seed_0_of_the_original_setup():
    assert ORIGINAL_SOFTMAX in comparison.SUBSET
    assert "max_retrieval (original setup): softmax, seed 0" in comparison.describe_subset()
    with pytest.raises(ValueError, match="subset: the max_retrieval runs of the original setup must be each"):
        comparison.check_parts([ORIGINAL_SOFTMAX, SubsetRun("max_retrieval", "ssa", 1, setup=ORIGINAL)])


def test_an_original_setup_run_is_the_entry_the_readers_regenerate_command_computes():
    (experiment, config) = ORIGINAL_SOFTMAX.reader.experiment(ORIGINAL_SOFTMAX, "cpu")
    assert experiment == "retrieval/original/softmax" and config == experiment_config("softmax", "cpu", 0, ORIGINAL)
    assert SHORT_RUNS[0].reader.experiment(SHORT_RUNS[0], "cpu")[0] == "retrieval/runs/softmax"
    commands = comparison.check_subset([ORIGINAL_SOFTMAX])
    assert commands == {"max_retrieval": (("softmax",), (0,), (None,))}
    assert comparison.regenerate_arguments("max_retrieval", "cpu", *commands["max_retrieval"][:2]) == (
        "regenerate max_retrieval --profile cpu --scorers softmax --seeds 0 --device cpu".split()
    )
    # the command plans that run: the chapter's runs of softmax, seed 0, in the original setup
    planned = CHAPTERS["max_retrieval"].runs("cpu", (0,), ("softmax",))
    assert ("softmax", 0, ORIGINAL) in [run.arguments for run in planned]
    # the whole subset asks the chapter's one command for the scorers of both setups
    assert comparison.check_subset(comparison.SUBSET)["max_retrieval"] == (("softmax", "ssa"), (0,), (None,))


# ----------------------------------------------------------------------------------------------
# Records: one made before the original setup joined the subset, and the runs it lacks added.


@pytest.fixture(scope="module")
def made_up_book(tmp_path_factory):
    """A book cache at the smoke profile holding every max-retrieval run the verdicts of both setups
    read (made up), computed (so the entries say) from a clean tree at this checkout's commit."""
    head = run_git("rev-parse", "HEAD")
    if head is None:
        pytest.skip("needs the git checkout")
    root = tmp_path_factory.mktemp("made_up") / "book"
    runs = [
        (scorer, seed, setup)
        for setup, scorers in ((SHORT, CHAPTERS["max_retrieval"].published_scorers()), (ORIGINAL, ORIGINAL_RUNS))
        for scorer in scorers
        for seed in SEEDS[PROFILE]
    ]
    with pytest.MonkeyPatch.context() as patch:
        for module in ("cache", "provenance"):  # the code state before the computation, and after it
            patch.setattr(f"ssa_book.results.{module}.code_state", lambda: CodeState(head, False))
        cache_made_up_runs(root, runs, np.random.default_rng(0))
    return root, head


@pytest.fixture
def book_cache(made_up_book, tmp_path, monkeypatch):
    """A copy of :func:`made_up_book` of this test's own, on this machine (:data:`MACHINE`)."""
    source, head = made_up_book
    for module in ("cache", "provenance"):
        monkeypatch.setattr(f"ssa_book.results.{module}.code_state", lambda: CodeState(head, False))
    monkeypatch.setattr(comparison, "machine_identity", lambda: dict(MACHINE))
    return Path(shutil.copytree(source, tmp_path / "book"))


def fake_regenerate(book, shift, commands):
    """A stand-in for the started regenerate command of max retrieval: like the real one, it
    computes the runs of the scorers and seeds it names in the short setup and, for those the
    original setup runs, in the original one; each entry the book's with its accuracies moved by
    ``shift``. Each command it is given goes into ``commands``."""

    def run(command, env):
        commands.append(command[3:])
        scorers = command[command.index("--scorers") + 1 : command.index("--seeds")]
        seeds = [int(seed) for seed in command[command.index("--seeds") + 1 : command.index("--device")]]
        for scorer in scorers:
            for setup in (SHORT, ORIGINAL) if scorer in ORIGINAL_RUNS else (SHORT,):
                for seed in seeds:
                    cache_shifted(book, env["SSA_RESULTS_DIR"], experiment_config(scorer, PROFILE, seed, setup), shift)

    return run


def older_record(book_cache, monkeypatch, shift=0.01):
    """This machine's record as made before the original setup joined the subset: the short
    setup's two runs, its rows and subset naming no setup and no commit of their own."""
    monkeypatch.setattr(comparison, "run_reader_command", fake_regenerate(book_cache, shift, []))
    stored = comparison.rerun(PROFILE, subset=SHORT_RUNS, results_dir=book_cache, log=lambda line: None)
    written = json.loads(stored.path.read_text())
    for item in (*written["result"]["rows"], *written["result"]["subset"]):
        del item["setup"]
        item.pop("rerun_commit", None)
    stored.path.write_text(json.dumps(written, separators=(",", ":"), sort_keys=True), encoding="utf-8")
    return stored


def book_files(book_cache):
    """Every file of the book's cache but the rerun records, with a digest of its bytes."""
    return {
        path.relative_to(book_cache).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(book_cache.rglob("*"))
        if path.is_file() and "reruns" not in path.relative_to(book_cache).parts
    }


def test_an_older_record_reports_the_run_it_lacks_as_not_in_its_subset(book_cache, monkeypatch):
    older_record(book_cache, monkeypatch)
    table = report.rerun_table(PROFILE, book_cache, WITH_ORIGINAL)
    assert list(table["chapter"]) == ["max_retrieval (short setup)"] * 2 + ["max_retrieval (original setup)"]
    lacking = table.iloc[2]
    assert lacking["largest absolute difference"] == "not in this record's subset"
    assert {lacking[column] for column in ("reran commit", "cached on", "endpoint differences (rerun − cached)")} == {
        "—"
    }
    assert lacking["verdicts changed (today's rule)"] == "—"
    # the older rows are judged again as the short setup's, at the record's commit
    assert table.iloc[0]["largest absolute difference"] == "0.01" and table.iloc[0]["reran commit"] != "—"
    summary = report.rerun_summary(PROFILE, book_cache, WITH_ORIGINAL)
    assert summary.startswith("On 1 machine (Made-up CPU (AVX2)), the 2 reruns moved")
    assert (
        "the record of Made-up CPU (AVX2) holds no rerun of max_retrieval (original setup) / softmax / seed 0: "
        "not in this record's subset"
    ) in summary
    assert report.rerun_sentence("max_retrieval", PROFILE, book_cache).startswith("Rerun on another machine")
    assert report.rerun_sentence("max_retrieval", PROFILE, book_cache, setup=ORIGINAL) == ""


def test_missing_reruns_only_the_runs_the_record_lacks_and_keeps_its_other_rows(book_cache, monkeypatch):
    before = older_record(book_cache, monkeypatch)
    files = book_files(book_cache)
    commands = []
    monkeypatch.setattr(comparison, "run_reader_command", fake_regenerate(book_cache, 0.02, commands))
    stored = comparison.rerun(
        PROFILE, subset=WITH_ORIGINAL, results_dir=book_cache, log=lambda line: None, missing=True
    )
    assert commands == [
        ["regenerate", "max_retrieval", "--profile", "smoke", "--scorers", "softmax", "--seeds", "0", "--device", "cpu"]
    ]
    assert stored.path == before.path and len(list(stored.path.parent.glob("*.json"))) == 1
    assert book_files(book_cache) == files  # the rerun wrote nothing into the book's cache but its record
    result = json.loads(stored.path.read_text())["result"]
    assert [SubsetRun.of_row(row) for row in result["rows"]] == list(WITH_ORIGINAL)
    kept, added = result["rows"][:2], result["rows"][2]
    assert [row["numbers"]["largest"] for row in kept] == [pytest.approx(0.01)] * 2  # the older session's
    assert {row["rerun_commit"] for row in kept} == {before.provenance.git_commit}
    assert added["setup"] == ORIGINAL and added["numbers"]["largest"] == pytest.approx(0.02)
    assert added["entry"].startswith(f"{PROFILE}/retrieval/original/softmax/")
    assert result["subset"] == [ORIGINAL_SOFTMAX.as_dict()]
    assert [item["subset"] for item in result["kept_from"]] == [
        [{key: value for key, value in run.as_dict().items() if key != "setup"} for run in SHORT_RUNS]
    ]
    assert "not in this record's subset" not in set(
        report.rerun_table(PROFILE, book_cache, WITH_ORIGINAL)["largest absolute difference"]
    )
    # a record that lacks nothing trains nothing
    monkeypatch.setattr(
        comparison, "run_reader_command", lambda *arguments: pytest.fail("reran a run the record holds")
    )
    again = comparison.rerun(PROFILE, subset=WITH_ORIGINAL, results_dir=book_cache, log=lambda line: None, missing=True)
    assert again.path == stored.path and json.loads(again.path.read_text())["result"] == result


def test_a_part_is_rerun_whole_when_a_row_of_it_stands_for_another_entry_or_code_version():
    rows = []
    for run in SHORT_RUNS:
        experiment, config = run.reader.experiment(run, PROFILE)
        rows.append(
            {**run.as_dict(), "entry": entry_path(experiment, config, profile=PROFILE, results_dir=".").as_posix()}
        )
    versions = comparison._code_versions(SHORT_RUNS, PROFILE)
    record = types.SimpleNamespace(result={"rows": rows, "code_versions": versions})
    assert comparison.lacking(record, WITH_ORIGINAL, PROFILE) == ((ORIGINAL_SOFTMAX,), tuple(rows))
    assert comparison.lacking(None, WITH_ORIGINAL, PROFILE) == (WITH_ORIGINAL, ())
    moved = types.SimpleNamespace(
        result={
            "rows": [{**rows[0], "entry": "smoke/retrieval/runs/softmax/0.json"}, rows[1]],
            "code_versions": versions,
        }
    )
    assert comparison.lacking(moved, WITH_ORIGINAL, PROFILE) == (WITH_ORIGINAL, ())
    older = types.SimpleNamespace(
        result={"rows": rows, "code_versions": {name: number - 1 for name, number in versions.items()}}
    )
    assert comparison.lacking(older, WITH_ORIGINAL, PROFILE) == (WITH_ORIGINAL, ())
