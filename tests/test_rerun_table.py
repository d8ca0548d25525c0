"""Do reruns match the book? (ssa_book.reruns) on made-up entries, without training: the comparison of
numbers, endpoints and verdicts, the record's round trip through the cache, the tables with zero,
one and two machines, and the command line. The rerun that trains is tests/test_reruns.py's."""

import dataclasses
import json
import re
import types
from pathlib import Path

import numpy as np
import pytest

from ssa_book.reruns import bits, comparison, report
from ssa_book.studies import CHAPTERS, READERS
from ssa_book.retrieval.analysis import CHAPTER_MIN_PAIRS
from ssa_book.retrieval.experiment import SEEDS, SHORT, experiment_config
from ssa_book.reruns.comparison import SubsetRun
from synthetic_runs import provenance_with
from ssa_book.cli import reruns as cli_reruns
from ssa_book.cli import results as cli_results
from ssa_book.results.cache import cached, record_entry
from ssa_book.results.errors import CacheMissError
from ssa_book.results.keys import CACHE_SCHEMA_VERSION, code_identity, entry_path
from ssa_book.results.provenance import CodeState, instruction_sets, processor_name, run_git
from ssa_book.results.store import StoredEntry
from ssa_book.results.validate import list_entries

PROFILE = "smoke"
SIZES = (16, 64, 256)  # the smoke profile's test sizes; 16 items in training


def retrieval_result(accuracy, rng):
    """A made-up retrieval run's result: ``accuracy`` at 16 items falling by a third over the larger sizes."""
    curve = [accuracy, accuracy * 2 / 3 + 0.01 * rng.standard_normal(), accuracy / 3 + 0.01 * rng.standard_normal()]
    return {
        "sizes": list(SIZES),
        "accuracy": [round(min(1.0, max(0.0, value)), 6) for value in curve],
        "top_share": [0.9, 0.5, 0.3],
        "entropy": [0.1, 0.4, 0.6],
        "training": {"history": [[0, 2.3], [39, 0.4]], "wall_time_s": 1.5, "evaluate_seconds": 0.2},
    }


def retrieval_runs(seeds=range(6), ssa_accuracy=0.9, softmax_accuracy=0.6, seed=0):
    """``{scorer: [record of each seed]}``: SSA clearly ahead of softmax, the variants and adaptive temperature between."""
    rng = np.random.default_rng(seed)
    reader = READERS["max_retrieval"]
    levels = {
        "softmax": softmax_accuracy,
        "ssa": ssa_accuracy,
        "adaptive_temperature": softmax_accuracy,
        "softmax_ssa_slope": softmax_accuracy,
        "ssa_authors_start": ssa_accuracy,
    }
    return {
        scorer: [
            reader.record(
                SubsetRun("max_retrieval", scorer, each), retrieval_result(level + 0.02 * rng.standard_normal(), rng)
            )
            for each in seeds
        ]
        for scorer, level in levels.items()
    }


def icl_result(error_at_1, error_shifted):
    return {
        "shifts": {
            "sigma_x": {
                "sigmas": [1, 10, 29],
                "model": {"prompt_error": [error_at_1, error_shifted, error_shifted + 0.1]},
                "majority class": {"prompt_error": [0.5, 0.5, 0.5]},
            }
        },
        "length": {
            "lengths": [10, 20],
            "model": {"prompt_error": [error_at_1, error_shifted]},
            "majority class": {"prompt_error": [0.5, 0.5]},
        },
    }


def icl_runs(seed=0):
    rng = np.random.default_rng(seed)
    reader = READERS["icl_quantification"]
    return {
        task: {
            scorer: [
                reader.record(
                    SubsetRun("icl_quantification", scorer, each, task),
                    icl_result(0.02, (0.2 if scorer == "ssa" else 0.6) + 0.05 * rng.standard_normal()),
                )
                for each in range(3)
            ]
            for scorer in ("softmax", "ssa")
        }
        for task in ("every", "some")
    }


def entry(result, processor="Made-up CPU", capability="AVX512"):
    provenance = provenance_with(
        processor=processor, instruction_sets={"aten_cpu_capability": capability, "flags": []}, git_commit="0" * 40
    )
    return StoredEntry(
        Path("entry.json"), "retrieval/demo", PROFILE, {"seed": 0}, result, provenance, None, CACHE_SCHEMA_VERSION
    )


# ----------------------------------------------------------------------------------------------
# Numbers, endpoints, verdicts.


def test_number_differences_find_the_largest_difference_and_leave_timings_out():
    cached = {
        "curve": [0.5, 0.25, float("nan")],
        "training": {"wall_time_s": 3.0, "steps_per_s": 10.0, "loss": 1.0},
        "label": "a",
    }
    same = {
        "curve": [0.5, 0.25, float("nan")],
        "training": {"wall_time_s": 9.0, "steps_per_s": 2.0, "loss": 1.0},
        "label": "a",
    }
    assert comparison.number_differences(cached, same) == {
        "largest": 0.0,
        "numbers": 3,
        "differing": 0,
        "mismatches": 0,
        "mismatched_at": [],
    }
    moved = {"curve": [0.5, 0.5, 1.0], "training": {"wall_time_s": 1.0, "loss": 0.75}, "label": "b", "extra": 1}
    found = comparison.number_differences(cached, moved)
    assert found["largest"] == 0.25 and found["numbers"] == 3 and found["differing"] == 2
    assert found["mismatches"] == 3  # the NaN against a number, the changed label, the extra key
    assert found["mismatched_at"] == ["/curve[2]", "/extra", "/label"]
    assert comparison.number_differences({}, {})["largest"] is None


def test_changed_verdicts_name_each_claim_that_moved_from_what_to_what():
    before = {"a": "SSA better", "b": "exploratory"}
    assert comparison.changed_verdicts(before, dict(before)) == []
    assert comparison.changed_verdicts(before, {"a": "undecided", "b": "exploratory", "c": "not tested"}) == [
        {"verdict": "a", "cached": "SSA better", "rerun": "undecided"},
        {"verdict": "c", "cached": "not judged", "rerun": "not tested"},
    ]


def test_a_retrieval_rerun_is_compared_on_its_endpoints_and_every_number_and_its_verdicts_rejudged():
    cached_runs = retrieval_runs()
    run = SubsetRun("max_retrieval", "softmax", 0)
    cached_result = retrieval_result(0.6, np.random.default_rng(1))
    cached_runs["softmax"][0] = READERS["max_retrieval"].record(run, cached_result)
    nudged = json.loads(json.dumps(cached_result))
    nudged["accuracy"][1] += 0.01
    nudged["training"]["wall_time_s"] = 99.0
    row = comparison.compare_run(
        run, entry(cached_result), entry(nudged, "Other CPU", "AVX2"), cached_runs, profile=PROFILE
    )
    assert (
        row["cached_on"]["processor"] == "Made-up CPU"
        and row["rerun_on"]["instruction_sets"]["aten_cpu_capability"] == "AVX2"
    )
    endpoints = {item["endpoint"]: item for item in row["endpoints"]}
    assert list(endpoints) == [
        "accuracy at 16 items",
        "accuracy at 64 items",
        "accuracy at 256 items",
        "mean accuracy over sizes > 16",
    ]
    assert endpoints["accuracy at 16 items"]["difference"] == 0.0
    assert endpoints["accuracy at 64 items"]["difference"] == pytest.approx(0.01)
    assert endpoints["mean accuracy over sizes > 16"]["difference"] == pytest.approx(0.005)
    assert (
        row["numbers"]["largest"] == pytest.approx(0.01) and row["numbers"]["differing"] == 1
    )  # the time is no number of the result
    assert row["verdicts_changed"] == []  # a hundredth moves no verdict


def test_a_rerun_that_moves_a_seed_far_enough_changes_the_verdicts_the_chapter_computes():
    # the fewest pairs the chapter decides from, SSA ahead by little more than the threshold, so that one seed can move it
    cached_runs = retrieval_runs(seeds=range(CHAPTER_MIN_PAIRS), ssa_accuracy=0.72)
    reader = READERS["max_retrieval"]
    before = reader.verdicts(cached_runs, PROFILE)
    assert before["accuracy vs softmax: ssa"] == "SSA better"
    run = SubsetRun("max_retrieval", "softmax", 0)
    cached_result = retrieval_result(0.6, np.random.default_rng(1))
    far = retrieval_result(1.0, np.random.default_rng(1))
    far["accuracy"] = [1.0, 1.0, 1.0]  # this seed's softmax now retrieves every set right
    row = comparison.compare_run(run, entry(cached_result), entry(far), cached_runs, profile=PROFILE)
    changed = {item["verdict"]: item for item in row["verdicts_changed"]}
    assert changed["accuracy vs softmax: ssa"] == {
        "verdict": "accuracy vs softmax: ssa",
        "cached": "SSA better",
        "rerun": changed["accuracy vs softmax: ssa"]["rerun"],
    }
    assert changed["accuracy vs softmax: ssa"]["rerun"] != "SSA better"
    # The swap replaced seed 0 alone: the cached runs are untouched.
    assert reader.verdicts(cached_runs, PROFILE) == before


def test_an_in_context_rerun_is_read_at_sigma_10_and_over_the_shifted_sigmas():
    cached_runs = icl_runs()
    run = SubsetRun("icl_quantification", "ssa", 0, "every")
    reader = READERS["icl_quantification"]
    cached, rerun = icl_result(0.02, 0.2), icl_result(0.02, 0.25)
    cached_runs["every"]["ssa"][0] = reader.record(run, cached)
    row = comparison.compare_run(run, entry(cached), entry(rerun), cached_runs, profile=PROFILE)
    endpoints = {item["endpoint"]: item for item in row["endpoints"]}
    assert endpoints["prompt error at σ 10"] == {
        "endpoint": "prompt error at σ 10",
        "cached": 0.2,
        "rerun": 0.25,
        "difference": pytest.approx(0.05),
    }
    assert endpoints["mean prompt error over σ > 1"]["difference"] == pytest.approx(0.05)
    assert row["verdicts_changed"] == []  # three seeds: too few to decide, before and after
    unlearned = comparison.compare_run(run, entry(cached), entry(icl_result(0.9, 0.9)), cached_runs, profile=PROFILE)
    outcomes = {item["verdict"]: (item["cached"], item["rerun"]) for item in unlearned["verdicts_changed"]}
    assert outcomes["\"every\": SSA's mean prompt error over the shifted scales (σ > 1) is lower than softmax's"] == (
        "exploratory (3 pairs)",
        "not learned",
    )
    assert not any(claim.startswith('"some"') for claim in outcomes)  # the other task's verdicts did not move


def test_the_swap_refuses_a_seed_the_cache_lacks():
    cached_runs = retrieval_runs(seeds=range(2))
    record = READERS["max_retrieval"].record(
        SubsetRun("max_retrieval", "ssa", 7), retrieval_result(0.9, np.random.default_rng(0))
    )
    with pytest.raises(ValueError, match="records: no cached ssa run of seed 7"):
        READERS["max_retrieval"].swapped(cached_runs, [record])


def test_a_config_that_differs_is_refused():
    run = SubsetRun("max_retrieval", "ssa", 0)
    other = dataclasses.replace(entry({}), config={"seed": 1})
    with pytest.raises(ValueError, match="rerun_entry"):
        comparison.compare_run(run, entry({}), other, retrieval_runs(), profile=PROFILE)


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"chapter": "decoder", "scorer": "ssa", "seed": 0}, "chapter must be one of"),
        ({"chapter": "max_retrieval", "scorer": "ssa", "seed": -1}, "seed must be an int >= 0"),
        (
            {"chapter": "icl_quantification", "scorer": "ssa", "seed": 0},
            "task: the icl_quantification chapter's runs need",
        ),
        (
            {"chapter": "max_retrieval", "scorer": "ssa", "seed": 0, "task": "every"},
            "task: the max_retrieval chapter's runs have none",
        ),
        (
            {"chapter": "encoder", "scorer": "ssa", "seed": 0, "setup": "original"},
            "setup: the encoder chapter's runs have none",
        ),
        (
            {"chapter": "max_retrieval", "scorer": "ssa", "seed": 0, "setup": "long"},
            "setup: the max_retrieval chapter's runs are in one of short, original; got 'long'",
        ),
    ],
)
def test_a_subset_run_names_the_bad_argument(arguments, message):
    with pytest.raises(ValueError, match=message):
        SubsetRun(**arguments)


def test_the_subset_is_what_one_regenerate_command_per_chapter_computes():
    assert comparison.check_subset(comparison.SUBSET) == {
        "icl_quantification": (("softmax", "ssa"), (0,), ("every",)),
        "max_retrieval": (("softmax", "ssa"), (0,), (None,)),
        "encoder": (("softmax", "ssa_n1.5", "ssa_n2"), (0,), (None,)),
    }
    with pytest.raises(ValueError, match="subset: the max_retrieval runs of the short setup must be each"):
        comparison.check_subset([SubsetRun("max_retrieval", "ssa", 0), SubsetRun("max_retrieval", "softmax", 1)])
    assert comparison.regenerate_arguments("max_retrieval", "cpu", ["softmax", "ssa"], [0], jobs=2) == [
        "regenerate",
        "max_retrieval",
        "--profile",
        "cpu",
        "--scorers",
        "softmax",
        "ssa",
        "--seeds",
        "0",
        "--device",
        "cpu",
        "--jobs",
        "2",
    ]


def test_a_rerun_never_reads_the_books_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("SSA_REQUIRE_CACHE", "1")
    monkeypatch.setenv("SSA_RESULTS_MIRROR", "/somewhere")
    environment = comparison.throwaway_environment(tmp_path)
    assert "SSA_REQUIRE_CACHE" not in environment and "SSA_RESULTS_MIRROR" not in environment
    assert environment["SSA_RESULTS_DIR"] == str(tmp_path) and environment["SSA_CHECKPOINT_DIR"] == str(
        tmp_path / "checkpoints"
    )
    assert environment["OMP_NUM_THREADS"] == "1"


# ----------------------------------------------------------------------------------------------
# The record's round trip and the tables.


@pytest.fixture
def book_cache(tmp_path, monkeypatch):
    """A book cache at the smoke profile holding every max-retrieval run its verdicts read (made up),
    computed (so the entries say) from a clean tree at this checkout's commit."""
    head = run_git("rev-parse", "HEAD")
    if head is None:
        pytest.skip("needs the git checkout")
    for module in ("cache", "provenance"):  # the code state before the computation, and after it
        monkeypatch.setattr(f"ssa_book.results.{module}.code_state", lambda: CodeState(head, False))
    root = tmp_path / "book"
    runs = [
        (scorer, seed, SHORT) for scorer in CHAPTERS["max_retrieval"].published_scorers() for seed in SEEDS[PROFILE]
    ]
    cache_made_up_runs(root, runs, np.random.default_rng(0))
    return root


def cache_made_up_runs(root, runs, rng):
    """A made-up result (:func:`retrieval_result`) cached under ``root`` for each ``(scorer, seed, setup)`` of ``runs``."""
    for scorer, seed, setup in runs:
        experiment = experiment_config(scorer, PROFILE, seed, setup)
        cached(
            experiment.name,
            experiment,
            lambda: retrieval_result(0.8, rng),
            profile=PROFILE,
            regenerate="made up",
            results_dir=root,
        )


def fake_regenerate(shift):
    """A stand-in for the started regenerate command: it writes the book's entries, each accuracy moved by ``shift``."""

    def run(command, env):
        assert command[1:3] == ["-m", "ssa_book"] and "--device" in command and env["OMP_NUM_THREADS"] == "1"
        scorers = command[command.index("--scorers") + 1 : command.index("--seeds")]
        seeds = [int(seed) for seed in command[command.index("--seeds") + 1 : command.index("--device")]]
        for scorer in scorers:
            for seed in seeds:
                cache_shifted(BOOK[0], env["SSA_RESULTS_DIR"], experiment_config(scorer, PROFILE, seed), shift)

    return run


def cache_shifted(book, results_dir, experiment, shift):
    """``experiment``'s entry in ``book`` cached again under ``results_dir``, each accuracy moved by ``shift``."""
    stored = json.loads(entry_path(experiment.name, experiment, profile=PROFILE, results_dir=book).read_text())[
        "result"
    ]
    stored["accuracy"] = [value + shift for value in stored["accuracy"]]
    cached(experiment.name, experiment, lambda: stored, profile=PROFILE, regenerate="made up", results_dir=results_dir)


BOOK = [None]
RETRIEVAL_ONLY = (SubsetRun("max_retrieval", "softmax", 0), SubsetRun("max_retrieval", "ssa", 0))


def _rerun(monkeypatch, book_cache, shift, machine=("Made-up CPU", "AVX2")):
    BOOK[0] = book_cache
    monkeypatch.setattr(comparison, "run_reader_command", fake_regenerate(shift))
    monkeypatch.setattr(
        comparison, "machine_identity", lambda: {"processor": machine[0], "aten_cpu_capability": machine[1]}
    )
    return comparison.rerun(PROFILE, subset=RETRIEVAL_ONLY, results_dir=book_cache, log=lambda line: None)


def test_the_record_round_trips_through_the_cache_and_replaces_the_machines_old_one(monkeypatch, book_cache):
    stored = _rerun(monkeypatch, book_cache, 0.0)
    assert stored.path.parent == book_cache / PROFILE / "reruns" / "compared"
    written = json.loads(stored.path.read_text())
    assert written["config"] == {"machine": {"processor": "Made-up CPU", "aten_cpu_capability": "AVX2"}}
    assert written["result"]["subset"] == [run.as_dict() for run in RETRIEVAL_ONLY]
    assert written["result"]["code_versions"] == {"retrieval": code_identity("retrieval")["version"]}
    assert written["result"]["commands"] == [
        "python -m ssa_book regenerate max_retrieval --profile smoke --scorers softmax ssa --seeds 0 --device cpu"
    ]
    assert [row["numbers"]["largest"] for row in written["result"]["rows"]] == [0.0, 0.0]
    provenance = written["provenance"]
    assert {"processor", "instruction_sets", "git_commit", "wall_time_s"} <= set(provenance)
    # A valid cache entry, with no code version asked of it even by --clean.
    listed = {entry.path: entry for entry in list_entries(book_cache, clean=True)}
    assert listed[stored.path].problems == ()
    assert cli_results.main(["validate", "--results-dir", str(book_cache)]) == 0
    again = _rerun(monkeypatch, book_cache, 0.001)
    assert again.path == stored.path and len(list(stored.path.parent.glob("*.json"))) == 1
    assert json.loads(again.path.read_text())["result"]["rows"][0]["numbers"]["largest"] == pytest.approx(0.001)


def test_the_table_has_no_row_one_machines_rows_or_two_machines_rows(monkeypatch, book_cache):
    assert report.rerun_table(PROFILE, book_cache, RETRIEVAL_ONLY).empty
    assert list(report.rerun_table(PROFILE, book_cache, RETRIEVAL_ONLY).columns)[:3] == [
        "machine",
        "reran commit",
        "chapter",
    ]
    assert report.rerun_summary(PROFILE, book_cache, RETRIEVAL_ONLY).startswith(
        "No machine has rerun the subset at profile smoke yet"
    )
    _rerun(monkeypatch, book_cache, 0.0)
    one = report.rerun_table(PROFILE, book_cache, RETRIEVAL_ONLY)
    assert list(one["scorer"]) == ["softmax", "ssa"] and set(one["machine"]) == {"Made-up CPU (AVX2)"}
    assert set(one["largest absolute difference"]) == {"0 (same bits)"} and set(
        one["verdicts changed (today's rule)"]
    ) == {"none"}
    assert report.rerun_summary(PROFILE, book_cache, RETRIEVAL_ONLY) == (
        "On 1 machine (Made-up CPU (AVX2)), the 2 reruns gave the cached results bit for bit (timings apart); judged again by "
        "today's rule, with one rerun or all of a machine's in place of the cached seeds, no verdict the chapters compute changed "
        "(2 of the reruns gave the cached numbers, which no rule can read otherwise)."
    )
    assert one["cached on"].iloc[0] == processor_name("cpu") + f" ({instruction_sets('cpu')['aten_cpu_capability']})"
    _rerun(monkeypatch, book_cache, 0.02, machine=("Another CPU", "AVX512"))
    two = report.rerun_table(PROFILE, book_cache, RETRIEVAL_ONLY)
    assert list(two["machine"]) == ["Another CPU (AVX512)"] * 2 + ["Made-up CPU (AVX2)"] * 2
    assert two["endpoint differences (rerun − cached)"].iloc[0] == (
        "accuracy at 16 items: +0.02; accuracy at 64 items: +0.02; "
        "accuracy at 256 items: +0.02; mean accuracy over sizes > 16: +0.02"
    )
    assert report.rerun_summary(PROFILE, book_cache, RETRIEVAL_ONLY).count("bit for bit") == 0
    summary = report.rerun_summary(PROFILE, book_cache, RETRIEVAL_ONLY)
    assert summary.startswith(
        "On 2 machines (Another CPU (AVX512), Made-up CPU (AVX2)), the 4 reruns moved one seed's "
        "endpoint by at most 0.02"
    )
    # the smoke chapter's verdicts that read only the stored endpoints are judged again, and the others said not to be
    assert re.search(r"were judged again \((none|\d+) of them decided[^)]*\), the other \d+ cannot be", summary)
    assert summary.count(".") >= 1 and summary.endswith(".")


def test_a_rerun_stops_before_training_when_the_books_cache_lacks_a_run_the_verdicts_read(monkeypatch, tmp_path):
    monkeypatch.setattr(
        comparison, "run_reader_command", lambda *a: pytest.fail("trained although the cache lacks a run")
    )
    with pytest.raises(CacheMissError, match="python -m ssa_book regenerate max_retrieval --profile smoke"):
        comparison.rerun(PROFILE, subset=RETRIEVAL_ONLY, results_dir=tmp_path, log=lambda line: None)


def test_a_measurement_is_stored_only_in_a_measurement_folder(tmp_path):
    with pytest.raises(ValueError, match="experiment must lie under one of reruns/"):
        record_entry("icl/every/ssa", {"seed": 0}, dict, profile=PROFILE, results_dir=tmp_path)


def bitwise_record(tmp_path, monkeypatch):
    for module in ("cache", "provenance"):  # the code state before the computation, and after it
        monkeypatch.setattr(f"ssa_book.results.{module}.code_state", lambda: CodeState("f" * 40, False))
    settings = []
    for setting in bits.BITWISE_SETTINGS:
        row = {
            "setting": setting.name,
            "description": setting.description,
            "environment": dict(setting.environment),
            "deterministic": setting.deterministic,
        }
        if "avx512" in setting.name:
            settings.append({**row, "skipped": "this CPU lacks avx512f"})
            continue
        scalar = (
            "ATEN_CPU_CAPABILITY" in setting.environment and setting.environment["ATEN_CPU_CAPABILITY"] == "default"
        )
        settings.append(
            {
                **row,
                "skipped": None,
                "aten_cpu_capability": ["DEFAULT" if scalar else "AVX2"],
                "repeats_identical": True,
                "same_bits_as_default": not scalar,
                "same_bits_as_aten_scalar": setting.name == bits.ATEN_SCALAR,
                "largest_difference_from_default": 0.0 if not scalar else 0.003,
                "wall_time_s": 20.0 if not scalar else 30.0,
                "entry_wall_time_s": 5.0,
            }
        )
    result = {
        "runs_profile": "smoke",
        "repeats": 2,
        "runs": [],
        "commands": [],
        "settings": settings,
        "matmul": {"blas": "mkl"},
        "load_average": {"before": 2.0, "after": 2.0, "cpus": 2},
        "timing_note": "timed on a loaded machine",
    }
    return record_entry(
        bits.BITWISE,
        {"machine": {"processor": "Made-up CPU", "aten_cpu_capability": "AVX2"}, "runs_profile": "smoke"},
        lambda: result,
        profile=bits.BITWISE_RECORD_PROFILE,
        results_dir=tmp_path,
    )


def test_the_bitwise_table_reads_the_record(tmp_path, monkeypatch):
    assert bits.bitwise_table(tmp_path).empty
    assert bits.bitwise_summary(tmp_path).startswith("No machine has measured bitwise reproducibility yet")
    stored = bitwise_record(tmp_path, monkeypatch)
    assert stored.path.parent == tmp_path / "cpu" / "reruns" / "bitwise"
    table = bits.bitwise_table(tmp_path).set_index("setting")
    assert table.loc["aten avx512", "repeats: same bits"] == "skipped: this CPU lacks avx512f"
    assert (
        table.loc["aten scalar", "same bits as default"] == "no"
        and table.loc["aten avx2", "same bits as default"] == "yes"
    )
    assert table.loc["aten scalar + mkl compatible", "× default's time"] == "1.50"
    summary = bits.bitwise_summary(tmp_path)
    assert "aten avx2 gave the default's bits" in summary and "took 1.50 × the default's time" in summary
    assert "timed on a loaded machine" in summary


def test_deterministic_algorithms_are_set_by_the_command_that_runs_the_readers_command():
    plain = comparison.training_command(["regenerate", "max_retrieval"])
    assert plain[1:] == ["-m", "ssa_book", "regenerate", "max_retrieval"]
    deterministic = comparison.training_command(["regenerate", "max_retrieval"], deterministic=True)
    assert deterministic[1] == "-c" and "use_deterministic_algorithms(True)" in deterministic[2]
    assert deterministic[3:] == ["regenerate", "max_retrieval"]


# ----------------------------------------------------------------------------------------------
# The command line.


def test_the_command_line_parses_its_commands_and_names_a_bad_argument(capsys):
    parser = cli_reruns.parser()
    assert parser.parse_args(["run", "--profile", "cpu", "--jobs", "2"]).jobs == 2
    assert parser.parse_args(["table"]).profile == "cpu"
    assert (
        parser.parse_args(["bitwise"]).profile == "smoke"
        and parser.parse_args(["bitwise", "--repeats", "3"]).repeats == 3
    )
    for argv, name in (
        (["run", "--jobs", "0"], "--jobs"),
        (["table", "--profile", "gpu"], "--profile"),
        (["bitwise", "--repeats", "x"], "--repeats"),
        (["rerun"], "COMMAND"),
    ):
        with pytest.raises(SystemExit):
            parser.parse_args(argv)
        assert name in capsys.readouterr().err


def test_the_table_command_prints_the_summary_when_there_is_no_record(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SSA_RESULTS_DIR", str(tmp_path))
    assert cli_reruns.main(["table", "--profile", "smoke"]) == 0
    assert "No machine has rerun the subset at profile smoke yet" in capsys.readouterr().out


def test_the_library_does_not_import_the_reruns():
    import ssa

    package = Path(ssa.__file__).parent
    library = [
        package / "scoring.py",
        package / "attention.py",
        package / "hf.py",
        *sorted((package / "kernels").rglob("*.py")),
    ]
    for path in library:
        text = path.read_text(encoding="utf-8")
        assert "ssa_book.reruns" not in text and "import reruns" not in text, (
            f"{path.name} imports the book layer's reruns"
        )


def test_a_page_says_how_far_reruns_moved_and_each_verdict_todays_rule_changes(monkeypatch):
    row = {
        "chapter": "max_retrieval",
        "scorer": "softmax",
        "seed": 0,
        "numbers": {"largest": 0.09, "mismatches": 0},
        "endpoints": [{"endpoint": "accuracy", "cached": 0.42, "rerun": 0.33, "difference": -0.09}],
    }
    record = types.SimpleNamespace(
        config={"machine": {"processor": "Made-up CPU", "aten_cpu_capability": "AVX2"}}, result={"rows": [row]}
    )
    change = {"verdict": "accuracy vs softmax: entmax15", "cached": "1.5-entmax better", "rerun": "undecided"}
    alone = [(change,)]
    monkeypatch.setattr(report, "rerun_records", lambda profile, results_dir=None: [record])
    monkeypatch.setattr(
        report,
        "judged_today",
        lambda record, profile, results_dir=None: {
            ("max_retrieval", "short"): report.ChapterToday("max_retrieval", (row,), tuple(alone), (), 5, 7)
        },
    )
    sentence = report.rerun_sentence("max_retrieval", PROFILE)
    assert sentence.startswith(
        "Rerun on another machine (Made-up CPU (AVX2); the reproducing page has the reruns), softmax seed 0 "
        "of this page moved by up to 0.09 (softmax seed 0's accuracy, "
    )
    assert (
        '1.5-entmax\'s accuracy against softmax reads "1.5-entmax better" with the cached seeds and "undecided" with softmax '
        "seed 0 rerun on Made-up CPU (AVX2) in its place"
    ) in sentence
    assert "of the max retrieval chapter moved" in report.rerun_sentence(
        "max_retrieval", PROFILE, where="the max retrieval chapter"
    )
    assert report.rerun_sentence("icl_quantification", PROFILE) == ""
    alone[0] = ()
    assert report.rerun_sentence("max_retrieval", PROFILE).endswith(
        "none of the 5 verdicts that read only the endpoints the record keeps changes (the other 2 cannot be judged again)."
    )
    alone[0] = None
    assert report.rerun_sentence("max_retrieval", PROFILE).endswith(
        "whether a verdict changes cannot be said: the record keeps the endpoints only."
    )


def test_a_rerun_that_could_move_no_decided_verdict_says_so_rather_than_that_none_changes(monkeypatch):
    row = {
        "chapter": "max_retrieval",
        "scorer": "ssa",
        "seed": 0,
        "numbers": {"largest": 0.1, "mismatches": 0},
        "endpoints": [{"endpoint": "accuracy", "cached": 0.5, "rerun": 0.4, "difference": -0.1}],
    }
    record = types.SimpleNamespace(
        config={"machine": {"processor": "Made-up CPU", "aten_cpu_capability": "AVX2"}}, result={"rows": [row]}
    )
    decided = [0]
    monkeypatch.setattr(report, "rerun_records", lambda profile, results_dir=None: [record])
    monkeypatch.setattr(
        report,
        "judged_today",
        lambda record, profile, results_dir=None: {
            ("max_retrieval", "short"): report.ChapterToday("max_retrieval", (row,), ((),), (), 5, 7, decided[0], 4)
        },
    )
    assert report.rerun_sentence("max_retrieval", PROFILE).endswith(
        "the 5 verdicts that read only the endpoints the record keeps include no decided one (4 are exploratory), so the "
        "check cannot move a decided verdict (the other 2 cannot be judged again)."
    )
    decided[0] = 1
    assert report.rerun_sentence("max_retrieval", PROFILE).endswith(
        "none of the 5 verdicts that read only the endpoints the record keeps changes (the other 2 cannot be judged again)."
    )


def test_a_verdicts_words_are_decided_only_for_a_direction_or_no_difference_that_matters():
    for label in ("SSA better", "sharper softmax worse", "no difference that matters; SSA slightly worse", "its form"):
        assert report.is_decided(label), label
    for label in (
        "exploratory (10 pairs)",
        "undecided",
        "not learned",
        "not tested",
        "no difference",
        "not run yet: 3 of 8 runs done",
    ):
        assert not report.is_decided(label), label
