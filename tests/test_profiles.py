import pytest

from ssa_book.profiles import DEVICES, PROFILES, check_profile, resolve_device


@pytest.mark.parametrize("profile", PROFILES)
def test_known_profiles_pass(profile):
    assert check_profile(profile) == profile


def test_unknown_profile_names_the_parameter_and_choices():
    with pytest.raises(ValueError, match=r"profile must be one of smoke, cpu, paper; got 'fast'"):
        check_profile("fast")


def test_unknown_device_names_the_parameter_and_choices():
    with pytest.raises(ValueError, match=r"device must be one of auto, cpu, cuda, mps; got 'tpu'"):
        resolve_device("tpu")


def test_auto_prefers_cuda_then_mps_then_cpu(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert resolve_device("auto") == "cpu"
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert resolve_device("auto") == "mps"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == "cuda"


def test_explicit_unavailable_device_is_an_error(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="device='cuda'"):
        resolve_device("cuda")
    assert resolve_device("cpu") == "cpu"
    assert set(DEVICES) == {"auto", "cpu", "cuda", "mps"}


# ----------------------------------------------------------------------------------------------
# ssa_book.sizes: each chapter's settings at every profile, read from its own config builders.

import dataclasses  # noqa: E402

from ssa_book.chapters import resolve  # noqa: E402
from ssa_book.studies import CHAPTERS  # noqa: E402
from ssa_book.sizes import size_rows, sizes  # noqa: E402


def _icl(profile, task):
    from ssa_book.icl.experiments import experiment_config

    return experiment_config(task, "ssa", profile)


def _alternatives(profile, task):
    from ssa_book.alternatives.cost import cost_config

    return {"experiment": _icl(profile, task), "cost": cost_config(profile, "cpu")}


def _study(profile, task):
    from ssa_book.icl.study.design import ARMS, FIRST_SEED

    return ARMS["ssa"].experiment(task, FIRST_SEED, profile)


def _leaderboard(profile, task):
    from ssa_book.leaderboard.board import ICL_SEEDS, icl_experiment

    return icl_experiment(task, "ssa", ICL_SEEDS[profile][0], profile)


def _decoder(profile, _):
    from ssa_book.lm.config import run_config

    return run_config(profile, "ssa")


def _encoder(profile, _):
    from ssa_book.encoder.model import EncoderConfig

    return EncoderConfig.for_profile(profile)


def _performance(profile, _):
    from ssa_book.bench import bench_config

    return bench_config(profile, "cpu")


def _retrieval(profile, setup):
    from ssa_book.retrieval.experiment import experiment_config

    return experiment_config("softmax", profile, setup=setup)


# The config builders the chapters' code calls, written out here independently of ssa_book.sizes.
BUILDERS = {
    "icl_quantification": _icl,
    "icl_linear": _icl,
    "icl_collapse": _icl,
    "icl_study": _study,
    "alternative_scorers": _alternatives,
    "decoder": _decoder,
    "encoder": _encoder,
    "performance": _performance,
    "max_retrieval": _retrieval,
    "leaderboard": _leaderboard,
}
# Fields that differ between profiles but are not sizes (why, for each).
NOT_SIZES = {
    "train.log_every": "how often the training loss is logged, steps / 20",
    "experiment.train.log_every": "the same",
    "train.seed": "the decoder's default seed: the seeds row shows the chapter's seeds",
    "cost.profile": "the column itself",
    "profile": "the column itself",
}


def test_every_chapter_has_a_table_with_the_three_profiles():
    assert set(CHAPTERS) == set(BUILDERS)
    for chapter in CHAPTERS:
        table = sizes(chapter)
        assert list(table.columns) == ["description", "smoke", "cpu", "paper"], chapter
        assert table.index.is_unique and table.index.name == "setting"
        assert {"seeds", "scorers", "runs"} <= set(table.index)
        assert table["description"].map(bool).all()


@pytest.mark.parametrize("chapter", sorted(BUILDERS))
def test_the_table_equals_what_the_config_builders_produce(chapter):
    table = sizes(chapter)
    rows = size_rows(chapter)
    assert [name for name, _, _ in rows] == list(table.index[: len(rows)])
    for name, setting, groups in rows:
        for profile in PROFILES:
            built = [setting.value(BUILDERS[chapter](profile, group)) for group in groups]
            assert all(value == built[0] for value in built), (chapter, name, profile)  # merged groups agree
            assert table.loc[name, profile] == built[0], (chapter, name, profile)


def test_spot_checks_against_the_builders_attributes():
    from ssa_book.alternatives.comparison import chapter_seeds
    from ssa_book.encoder.model import EncoderConfig
    from ssa_book.icl.experiments import experiment_config
    from ssa_book.lm.config import run_config

    assert sizes("icl_linear").loc["steps", "cpu"] == experiment_config("linear", "ssa", "cpu").train.train_steps
    assert sizes("icl_quantification").loc["steps", "cpu"] == experiment_config("every", "ssa", "cpu").train.train_steps
    collapse = sizes("icl_collapse")
    assert collapse.loc["steps (every, some)", "cpu"] == experiment_config("some", "ssa", "cpu").train.train_steps
    assert collapse.loc["steps (linear)", "cpu"] == experiment_config("linear", "ssa", "cpu").train.train_steps
    assert collapse.loc["layers", "paper"] == experiment_config("every", "ssa", "paper").train.model.n_layer
    assert sizes("decoder").loc["layers", "paper"] == run_config("paper").model.num_layers
    assert sizes("decoder").loc["seeds", "paper"] == "1234"
    assert sizes("encoder").loc["steps", "smoke"] == EncoderConfig.for_profile("smoke").steps
    assert sizes("encoder").loc["learning rate", "cpu"] == EncoderConfig.for_profile("cpu").learning_rate
    assert sizes("alternative_scorers").loc["seeds", "smoke"] == ", ".join(map(str, chapter_seeds("smoke")))
    assert sizes("performance").loc["runs", "paper"] == 2  # the CPU and the GPU benchmark


def _leaves(value, path=""):
    """``{path: value}`` of every field, recursing into dataclasses and dicts."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        children = {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
    elif isinstance(value, dict):
        children = value
    else:
        return {path: value}
    found = {}
    for name, child in children.items():
        found.update(_leaves(child, f"{path}.{name}" if path else name))
    return found


@pytest.mark.parametrize("chapter", sorted(BUILDERS))
def test_every_setting_that_differs_between_profiles_is_in_the_table(chapter):
    from ssa_book.sizes import chapter_configs

    paths = [setting.path for setting in CHAPTERS[chapter].settings() if setting.path]
    for group in chapter_configs(chapter, "cpu"):
        leaves = {profile: _leaves(BUILDERS[chapter](profile, group)) for profile in PROFILES}
        for path in leaves["cpu"]:
            if len({repr(leaves[profile].get(path)) for profile in PROFILES}) == 1 or path in NOT_SIZES:
                continue
            assert any(path == shown or path.startswith(f"{shown}.") for shown in paths), (
                f"{chapter}: {path} differs by profile"
            )


def test_resolve_and_unknown_chapter():
    assert resolve({"a": {"b": 3}}, "a.b") == 3 and resolve(5, "") == 5
    with pytest.raises(ValueError, match="chapter must be one of"):
        sizes("theory")
