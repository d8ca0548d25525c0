"""The ``paper`` profile's configurations train, checkpoint and cache: two optimizer steps of
every chapter's paper-sized models (:mod:`ssa_book.paper_check`, which says what shrinks).

The training tests (marker ``paper_profile``) are not part of the default run (5 minutes on two
CPU cores, 4 GB of memory for the 114M decoder); the default run checks only, in a second, that
the check changes nothing else of the paper configurations:

    OMP_NUM_THREADS=1 python -m pytest -m paper_profile tests/test_paper_profile.py -s

``SSA_PAPER_CHECK_DEVICE=cuda`` runs them on a GPU. Each chapter runs in its own process; ``-s``
shows its wall time and peak memory.
"""

from __future__ import annotations

import os
import shutil

import pytest

from ssa_book import paper_check


def _changed(paper: dict, checked: dict, where: str = "") -> set[str]:
    """The dotted names of the fields whose values differ."""
    names = set()
    for key in paper:
        if isinstance(paper[key], dict) and isinstance(checked[key], dict):
            names |= _changed(paper[key], checked[key], f"{where}{key}.")
        elif paper[key] != checked[key]:
            names.add(f"{where}{key}")
    return names


def test_the_check_changes_only_steps_batch_evaluation_and_text():
    """Fast, in the default run: what the check trains is the paper configuration but for these."""
    import dataclasses

    from ssa_book.encoder.model import EncoderConfig
    from ssa_book.icl.experiments import experiment_config
    from ssa_book.lm.config import run_config

    assert _changed(run_config("paper", "ssa", 1234).to_dict(), paper_check.lm_run("ssa").to_dict()) == {
        "train.micro_batch",
        "train.global_batch",
        "train.eval_windows_during_training",
        "data.eval_windows",
        "data.blimp_pairs_per_paradigm",
        "data.train_source",
        "data.ood_source",
    }
    assert paper_check.lm_run("ssa", "paper").train.micro_batch == run_config("paper").train.micro_batch
    for task in ("every", "linear"):
        paper, checked = (
            dataclasses.asdict(experiment)
            for experiment in (experiment_config(task, "ssa", "paper"), paper_check.icl_experiment(task, "ssa"))
        )
        assert {name for name in _changed(paper, checked) if not name.startswith("eval.")} == {"train.log_every"}
    assert _changed(
        dataclasses.asdict(EncoderConfig.for_profile("paper")), dataclasses.asdict(paper_check.encoder_config())
    ) == {
        "eval_every",
        "held_out_utterances",
        "curve_pairs",
        "probe_pairs",
        "pll_pairs",
    }


@pytest.mark.paper_profile
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("chapter", list(paper_check.CHAPTERS))
def test_two_steps_of_the_paper_configuration_train_checkpoint_and_cache(chapter, tmp_path):
    report = paper_check.run_chapter(chapter, tmp_path, device=os.environ.get("SSA_PAPER_CHECK_DEVICE", "cpu"))
    print("\n" + paper_check.format_report([report]))
    failures = [
        f"{unit['unit']}: {unit['error']}\n{unit['traceback']}" for unit in report["units"] if not unit["passed"]
    ]
    assert report["passed"], "\n".join(failures) or report.get("error")
    assert report["units"], f"{chapter}: no model was checked"
    shutil.rmtree(report["work_dir"])  # the decoder's checkpoints alone are 2.7 GB; a failure keeps them
