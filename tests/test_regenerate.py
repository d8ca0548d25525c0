"""``python -m ssa_book regenerate``: one command line for every chapter's cached results (ssa_book.regenerate)."""

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from ssa_book import regenerate
from ssa_book.cli import main as ssa_main
from ssa_book.chapters import RunKind, Study, index_studies
from ssa_book.studies import CHAPTERS, KINDS, ORDER, PAPER, READERS, STUDIES, chapter, is_cached, plan
from ssa_book.cli.regenerate import main
from ssa.scoring import scorer_names

CHAPTER_NAMES = (
    "icl_quantification",
    "icl_linear",
    "icl_collapse",
    "alternative_scorers",
    "icl_study",
    "decoder",
    "encoder",
    "performance",
    "max_retrieval",
    "leaderboard",
)


@pytest.fixture
def empty_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SSA_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("SSA_CHECKPOINT_DIR", str(tmp_path / "checkpoints"))
    monkeypatch.setenv("SSA_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.delenv("SSA_RESULTS_MIRROR", raising=False)
    monkeypatch.delenv("SSA_REQUIRE_CACHE", raising=False)
    return tmp_path


def test_every_chapter_with_cached_results_is_listed_with_one_help_line(capsys):
    assert tuple(CHAPTERS) == CHAPTER_NAMES
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    lines = capsys.readouterr().out.splitlines()
    for name in (*CHAPTER_NAMES, "all"):
        assert len([line for line in lines if line.startswith(f"  {name} ")]) == 1, name
    for flag in ("--profile", "--seeds", "--scorers", "--jobs", "--cluster", "--device", "--dry-run"):
        assert any(line.lstrip().startswith(flag) for line in lines), flag


@pytest.mark.parametrize(
    "argv, argument",
    [
        (["nonsense"], "argument CHAPTER: invalid choice: 'nonsense'"),
        (["decoder", "--jobs", "0"], "argument --jobs: must be >= 1; got 0"),
        (["decoder", "--seeds", "0", "-1"], "argument --seeds"),
        (["decoder", "--seeds", "x"], "argument --seeds"),
        (["icl_linear", "--scorers", "softermax"], "argument --scorers: unknown scorer 'softermax'"),
        (
            ["decoder", "--scorers", "cosformer"],
            "argument --scorers: the decoder chapter accepts only softmax, ssa; got cosformer",
        ),
        (
            ["performance", "--scorers", "sigmoid"],
            "argument --scorers: the performance chapter accepts only softmax, ssa",
        ),
        (["all", "--scorers", "softermax"], "argument --scorers: unknown scorer"),
        (["decoder", "--profile", "huge"], "argument --profile: invalid choice"),
        (["decoder", "--device", "tpu"], "argument --device: device must be one of"),
    ],
)
def test_bad_input_names_the_argument(argv, argument, capsys):
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert argument in capsys.readouterr().err


def test_the_python_api_refuses_the_same_input():
    with pytest.raises(ValueError, match="--seeds: a seed must be >= 0"):
        plan("decoder", seeds=[-3])
    with pytest.raises(ValueError, match="chapter must be one of"):
        plan("nonsense")
    with pytest.raises(ValueError, match="profile must be one of"):
        plan("decoder", "huge")
    with pytest.raises(
        ValueError, match="alternative_scorers"
    ):  # the ICL chapters say where the other scorers' runs are
        plan("icl_quantification", scorers=["cosformer"])


def test_defaults_are_each_chapters_published_seeds_and_scorers():
    from ssa_book.alternatives.comparison import chapter_seeds
    from ssa_book.encoder.experiment import VARIANTS, seeds_for
    from ssa_book.icl import experiments
    from ssa_book.lm import experiment as lm

    linear = plan("icl_linear", "cpu")
    assert {run.arguments for run in linear} == {
        ("linear", scorer, seed) for scorer in experiments.CHAPTER_SCORERS for seed in experiments.SEEDS
    }
    assert [run.arguments[1:] for run in linear[:2]] == [
        ("softmax", 0),
        ("ssa", 0),
    ]  # pairs first: a sweep cut short leaves pairs
    assert {run.arguments[0] for run in plan("icl_quantification")} == {"every", "some"}
    assert {run.arguments[0] for run in plan("icl_collapse")} == {"every", "some", "linear"}
    for profile in ("smoke", "cpu", "paper"):
        alternatives = plan("alternative_scorers", profile)
        assert alternatives[0].kind == "cost" and alternatives[0].exclusive
        assert {run.arguments for run in alternatives[1:]} == {
            (t, s, seed) for t in ("every", "some", "linear") for s in scorer_names() for seed in chapter_seeds(profile)
        }
        assert {run.arguments for run in plan("decoder", profile)} == {
            (s, seed) for s in lm.SCORERS for seed in lm.SEEDS[profile]
        }
        encoder = plan("encoder", profile)
        assert encoder[0].kind == "encoder_data"
        assert {run.arguments for run in encoder[1:]} == {(v, seed) for v in VARIANTS for seed in seeds_for(profile)}
    assert plan("alternative_scorers")[1].arguments == (
        "every",
        "softmax",
        0,
    )  # softmax, every comparison's reference, first
    assert [run.arguments for run in plan("performance", "cpu")] == [("cpu", "cpu", 0)]
    assert [run.arguments for run in plan("performance", "smoke")] == [("smoke", "cpu", 0)]
    assert [run.arguments for run in plan("performance", "paper")] == [("cpu", "cpu", 0), ("paper", "cuda", 0)]


def test_seeds_and_scorers_select_the_runs():
    assert [run.arguments for run in plan("decoder", seeds=[5, 5, 6], scorers=["ssa"])] == [("ssa", 5), ("ssa", 6)]
    assert {run.arguments for run in plan("encoder", seeds=[4], scorers=["ssa_n2"])[1:]} == {("ssa_n2", 4)}
    assert [run.arguments for run in plan("performance", seeds=[3])] == [("cpu", "cpu", 3)]


def test_all_computes_each_run_once_and_names_every_chapter_that_reads_it():
    runs = plan("all", "cpu")
    assert len({run.key for run in runs}) == len(runs)
    every_ssa = next(run for run in runs if run.key == ("icl", ("every", "ssa", 0)))
    assert every_ssa.chapters == ("icl_quantification", "icl_collapse", "alternative_scorers")
    assert {run.key for run in runs} == {run.key for name in CHAPTER_NAMES for run in plan(name, "cpu")}
    # Only the chapters that accept a scorer run it; the others are left out.
    chosen = plan("all", "cpu", scorers=["cosformer"])
    assert {chapter for run in chosen for chapter in run.chapters} == {
        "alternative_scorers",
        "max_retrieval",
        "leaderboard",
    }


def test_the_command_a_reader_is_told_to_run_is_the_chapters_regenerate():
    from ssa_book.alternatives.comparison import regenerate_command as alternatives_command
    from ssa_book.bench import REGENERATE
    from ssa_book.encoder.experiment import regenerate_command as encoder_command
    from ssa_book.icl.experiments import regenerate_command as icl_command
    from ssa_book.lm.experiment import regenerate_command as lm_command

    assert chapter("icl_linear").command("cpu") == "python -m ssa_book regenerate icl_linear --profile cpu"
    assert icl_command("cpu", "every", "ssa", 0) == "python -m ssa_book regenerate icl_quantification --profile cpu"
    assert icl_command("paper", "linear", "softmax", 1) == "python -m ssa_book regenerate icl_linear --profile paper"
    assert (
        icl_command("cpu", "some", "ssa", 7)
        == "python -m ssa_book regenerate icl_quantification --profile cpu --seeds 7"
    )
    # a scorer of no ICL chapter: the alternatives chapter (above the ICL study), with the run named
    assert (
        icl_command("cpu", "linear", "cosformer", 0)
        == "python -m ssa_book regenerate alternative_scorers --profile cpu --scorers cosformer --seeds 0"
    )
    assert (
        alternatives_command("smoke", seeds=[2])
        == "python -m ssa_book regenerate alternative_scorers --profile smoke --jobs 2 --seeds 2"
    )
    assert lm_command("cpu", "ssa", 0) == "python -m ssa_book regenerate decoder --profile cpu"
    assert encoder_command("paper", "ssa_n2", 9) == "python -m ssa_book regenerate encoder --profile paper --seeds 9"
    assert REGENERATE.format(profile="cpu") == chapter("performance").command("cpu")


def test_a_missing_entry_names_the_new_command(empty_cache, monkeypatch):
    from ssa_book.lm.experiment import result
    from ssa_book.results.errors import CacheMissError

    monkeypatch.setenv("SSA_REQUIRE_CACHE", "1")
    with pytest.raises(CacheMissError, match="python -m ssa_book regenerate decoder --profile smoke --seeds 8"):
        result("smoke", "ssa", 8)


def test_dry_run_lists_the_runs_and_computes_nothing(empty_cache, capsys):
    assert main(["decoder", "--profile", "smoke", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "4 runs at profile smoke: 0 cached, 4 to compute" in out
    assert out.count("to compute  ") == 4 and "ssa / seed 1" in out
    assert not (empty_cache / "results").exists() and not (empty_cache / "runs").exists()


def test_every_planned_run_has_a_kind_and_a_kind_belongs_to_one_study():
    planned = {run.kind for profile in ("smoke", "cpu", "paper") for run in plan("all", profile)}
    assert planned <= set(KINDS), planned - set(KINDS)
    listed = tuple(STUDIES.values())
    assert index_studies(listed, ORDER) == (STUDIES, CHAPTERS, KINDS, READERS, PAPER)
    another = Study("another", kinds={"decoder": RunKind(STUDIES["decoder"].kinds["decoder"].compute)})
    with pytest.raises(ValueError, match="run kind 'decoder' is already another study's"):
        index_studies((*listed, another), ORDER)
    with pytest.raises(ValueError, match="study 'decoder' is listed twice"):
        index_studies((*listed, Study("decoder")), ORDER)
    assert KINDS["decoder"] is STUDIES["decoder"].kinds["decoder"]


def test_every_chapter_kind_and_reader_belongs_to_exactly_one_study():
    owners = {}
    for study in STUDIES.values():
        for part in (
            [("chapter", listed.name) for listed in study.chapters]
            + [("kind", kind) for kind in study.kinds]
            + [("reader", reader.chapter) for reader in study.readers]
        ):
            assert part not in owners, (part, owners.get(part), study.name)
            owners[part] = study.name
    assert {("chapter", name) for name in CHAPTERS} | {("kind", kind) for kind in KINDS} <= set(owners)
    listed = tuple(STUDIES.values())
    with pytest.raises(ValueError, match="has no place in ORDER"):
        index_studies(
            (*listed, Study("another", chapters=(dataclasses.replace(CHAPTERS["decoder"], name="elsewhere"),))), ORDER
        )
    with pytest.raises(ValueError, match="no study defines the chapter 'decoder'"):
        index_studies([study for study in listed if study.name != "decoder"], ORDER)
    stray = dataclasses.make_dataclass("StrayReader", [("chapter", str), ("tasks", tuple)])("decoder", ())
    with pytest.raises(ValueError, match="a reader of chapter decoder, which it does not define"):
        index_studies((*listed, Study("another", readers=(stray,))), ORDER)
    with pytest.raises(
        ValueError, match="study 'another': its parts lie in ssa_book.lm, ssa_book.retrieval; a study is one package"
    ):
        index_studies(
            (
                *listed,
                Study(
                    "another",
                    kinds={
                        "new": RunKind(STUDIES["decoder"].kinds["decoder"].compute),
                        "newer": RunKind(STUDIES["max_retrieval"].kinds["retrieval"].compute),
                    },
                ),
            ),
            ORDER,
        )


def test_a_failed_run_is_reported_and_the_others_go_on(monkeypatch, capsys):
    monkeypatch.setattr(regenerate, "single_thread", lambda: None)  # this process keeps its threads

    def broken(profile, device, progress, scorer, seed):
        if seed == 0:
            raise RuntimeError("boom")
        return "fine"

    monkeypatch.setitem(regenerate.KINDS, "decoder", RunKind(broken))
    runs = plan("decoder", "smoke", scorers=["ssa"])
    done, failed, left = regenerate.execute(runs, profile="smoke", device="cpu")
    assert (done, failed, left) == (1, 1, [])
    out = capsys.readouterr().out
    assert "FAILED ssa / seed 0 (decoder): RuntimeError('boom')" in out and "ssa / seed 1: fine" in out


def test_measurements_run_first_and_a_deadline_stops_launching(monkeypatch):
    monkeypatch.setattr(regenerate, "single_thread", lambda: None)
    order = []
    monkeypatch.setitem(
        regenerate.KINDS, "icl", RunKind(lambda profile, device, progress, *arguments: order.append(arguments) or "")
    )
    monkeypatch.setitem(
        regenerate.KINDS, "cost", RunKind(lambda profile, device, progress, model: order.append("cost") or "")
    )
    runs = plan("alternative_scorers", "smoke", scorers=["softmax"])
    regenerate.execute(list(reversed(runs)), profile="smoke", device="cpu", log=lambda line: None)
    assert order[0] == "cost" and len(order) == len(runs)
    done, failed, left = regenerate.execute(
        runs, profile="smoke", device="cpu", stop_launching_after=1e-9, log=lambda line: None
    )
    assert (done, failed, len(left)) == (0, 0, len(runs))
    with pytest.raises(ValueError, match="--jobs"):
        regenerate.execute(runs, profile="smoke", device="cpu", jobs=0)


def test_one_command_line_and_no_other_entry_point(capsys):
    import importlib.util

    for package in ("ssa_book.icl", "ssa_book.alternatives", "ssa_book.encoder", "ssa_book.lm"):
        assert importlib.util.find_spec(f"{package}.__main__") is None, package
    for command in ("decoder", "encoder", "code-versions", "paper-check", "bench", "book", "results", "data", "reruns"):
        with pytest.raises(SystemExit) as exited:
            ssa_main([command, "--help"])
        assert exited.value.code == 0, command
        assert f"python -m ssa_book {command}" in capsys.readouterr().out, command
    # no module but the package's own __main__ runs as a script: every command goes through ssa_book.cli
    root = Path(ssa_main.__code__.co_filename).parents[1]
    scripts = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if path.name != "__main__.py" and 'if __name__ == "__main__"' in path.read_text(encoding="utf-8")
    ]
    assert scripts == []


def test_python_m_ssa_dispatches(capsys):
    with pytest.raises(SystemExit) as exited:
        ssa_main(["regenerate", "--help"])
    assert exited.value.code == 0 and "python -m ssa_book regenerate" in capsys.readouterr().out
    assert ssa_main([]) == 2 and "regenerate CHAPTER" in capsys.readouterr().err
    assert ssa_main(["nope"]) == 2 and "argument COMMAND: invalid choice: 'nope'" in capsys.readouterr().err
    assert ssa_main(["--help"]) == 0
    out = capsys.readouterr().out
    from ssa_book.cli import COMMANDS

    listed = {line.split()[0] for line in out.splitlines() if line.startswith("  ") and line.strip()}
    assert listed == set(COMMANDS)  # --help lists exactly the commands the command line dispatches


def test_the_study_plans_its_arms_tasks_and_seeds_primary_question_first():
    from ssa_book.icl.study.conduct import StudyCache, plan as study_plan
    from ssa_book.icl.study.design import FIRST_SEED, runs as study_runs

    smoke = plan("icl_study", "smoke")
    assert [run.arguments for run in smoke[:2]] == [
        ("ssa", "every", FIRST_SEED),
        ("softmax", "every", FIRST_SEED),
    ]
    assert {run.arguments[2] for run in smoke} == set(range(FIRST_SEED, FIRST_SEED + 6))
    cpu = plan("icl_study", "cpu")
    # the plan with the contingent comparison once the cache says its condition holds
    assert [run.arguments for run in cpu] == study_runs(study_plan("cpu", cache=StudyCache("cpu", train=False)))
    assert set(study_runs()) <= {run.arguments for run in cpu}
    assert {run.arguments[0] for run in plan("icl_study", "cpu", scorers=["temperature_softmax"])} == {"softmax_slope"}
    assert {run.arguments[2] for run in plan("icl_study", "cpu", seeds=[101, 5])} == {101}
    assert (
        chapter("icl_study").command("cpu", seeds=[101])
        == "python -m ssa_book regenerate icl_study --profile cpu --jobs 2"
    )
    # Any arm, or any run of it, with one command.
    one_arm = plan("icl_study", "cpu", arms=["ssa_b1"], seeds=[104])
    assert [run.arguments for run in one_arm] == [("ssa_b1", "every", 104), ("ssa_b1", "some", 104)]
    assert (
        chapter("icl_study").command("cpu", arms=["ssa_b1"])
        == "python -m ssa_book regenerate icl_study --profile cpu --jobs 2 --arms ssa_b1"
    )
    with pytest.raises(ValueError, match="--arms: unknown arm 'ssa_turbo'; choose from softmax, ssa"):
        plan("icl_study", "cpu", arms=["ssa_turbo"])
    with pytest.raises(ValueError, match="--arms: only the study chapters \\(icl_study\\) have arms; decoder has none"):
        plan("decoder", "cpu", arms=["ssa"])
    assert plan("icl_study", "cpu", arms=["ssa_b1"], scorers=["softmax"]) == []  # ssa_b1 is an SSA arm


def test_a_missing_study_run_is_not_cached_and_names_the_study_command(empty_cache):
    from ssa_book.icl.study.conduct import StudyCache, load_run
    from ssa_book.icl.study.design import FIRST_SEED
    from ssa_book.results.cache import cache_required
    from ssa_book.results.errors import CacheMissError

    assert StudyCache("cpu").run("ssa", "every", FIRST_SEED) is None
    assert not is_cached(regenerate.Run("icl_study", ("ssa", "every", FIRST_SEED), "x"), "smoke", "cpu")
    with (
        cache_required(),
        pytest.raises(
            CacheMissError,
            match="python -m ssa_book regenerate icl_study --profile smoke --jobs 2 --arms softmax_slope",
        ),
    ):
        load_run("softmax_slope", "some", FIRST_SEED, profile="smoke")
    with pytest.raises(ValueError, match="arm must be one of"):
        load_run("ssa_turbo", "every", FIRST_SEED, profile="smoke")
    assert not (empty_cache / "results").exists() or not any((empty_cache / "results").rglob("*.json"))


def test_no_module_is_imported_for_a_side_effect_and_a_study_alone_needs_no_list_of_studies():
    """The indexes are derived from the list in ssa_book.studies, never filled by an import: no
    module of the package imports another only to run it (an unused import kept with ``noqa:
    F401``, a package's ``__init__`` showing its face apart), and a study's modules work without
    ssa_book.studies, which a study must not import."""
    root = Path(regenerate.__file__).parent
    unused = [
        f"{path.relative_to(root)}: {line.strip()}"
        for path in sorted(root.rglob("*.py"))
        if path.name != "__init__.py"
        for line in path.read_text(encoding="utf-8").splitlines()
        if "noqa: F401" in line and "lm_eval_adapter" not in line
    ]
    assert unused == []
    code = (
        "import sys, ssa_book.retrieval.experiment as experiment; "
        "print('ssa_book.studies' in sys.modules, experiment.regenerate_command('cpu', 'ssa', 999))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert found.returncode == 0, found.stderr[-2000:]
    assert (
        found.stdout.split("\n")[0]
        == "False python -m ssa_book regenerate max_retrieval --profile cpu --jobs 2 --seeds 999"
    )
