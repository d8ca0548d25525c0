"""Each chapter's sizes at every profile, as one table: ``sizes("icl_linear")``.

A chapter declares its table as rows (:class:`ssa_book.chapters.Setting`, from
:meth:`ssa_book.chapters.Chapter.settings`): a name, a short description and where the value sits in
the configs the chapter's own builders make (:meth:`ssa_book.chapters.Chapter.configs`:
``experiment_config``, ``run_config``, ``EncoderConfig.for_profile``, ``bench_config``, ...). The
numbers are never written in a setting: every value is read from the built config, so the table
cannot disagree with what runs.
"""

from __future__ import annotations

from typing import Any

from ssa_book.chapters import Setting
from ssa_book.studies import CHAPTERS, chapter as registered_chapter, plan
from ssa_book.profiles import PROFILES, check_profile
from ssa.scoring import scorer_names


def chapter_configs(chapter: str, profile: str) -> dict[str, Any]:
    """The configs chapter ``chapter`` builds at ``profile``, by its own builders
    (:meth:`ssa_book.chapters.Chapter.configs`): one per task for the in-context-learning chapters
    (``{task: config}``), else ``{"": config}``."""
    check_profile(profile)
    return registered_chapter(chapter).configs(profile)


def size_rows(chapter: str) -> list[tuple[str, Setting, tuple[str, ...]]]:
    """``(row name, setting, config groups)`` of :func:`sizes`: one row per setting, or one per
    group of tasks that differ in it (``"steps (every, some)"``, ``"steps (linear)"``)."""
    configs = {profile: chapter_configs(chapter, profile) for profile in PROFILES}
    groups = tuple(configs[PROFILES[0]])
    rows = []
    for setting in CHAPTERS[chapter].settings():
        by_values: dict[tuple, list[str]] = {}
        for group in groups:
            values = tuple(repr(setting.value(configs[profile][group])) for profile in PROFILES)
            by_values.setdefault(values, []).append(group)
        for members in by_values.values():
            name = setting.name if len(by_values) == 1 else f"{setting.name} ({', '.join(members)})"
            rows.append((name, setting, tuple(members)))
    return rows


def sizes(chapter: str):
    """Chapter ``chapter``'s settings at each profile: a ``pandas.DataFrame`` with one row per
    setting (index ``setting``), its ``description``, and columns ``smoke``, ``cpu``, ``paper``;
    then the seeds, scorers and number of runs ``python -m ssa_book regenerate CHAPTER`` computes.
    Every value is read from the configs the chapter's code builds (:func:`chapter_configs`)."""
    import pandas as pd

    configs = {profile: chapter_configs(chapter, profile) for profile in PROFILES}
    rows = [
        {
            "setting": name,
            "description": setting.description,
            **{profile: setting.value(configs[profile][groups[0]]) for profile in PROFILES},
        }
        for name, setting, groups in size_rows(chapter)
    ]
    regenerated = CHAPTERS[chapter]
    scorers = regenerated.published_scorers()
    registered = [name for name in scorers if name in scorer_names()]
    variants = [name for name in scorers if name not in registered]  # settings of a scorer run as one (max retrieval's)
    named = (
        ", ".join(scorers)
        if len(scorers) <= 4
        else f"all {len(registered)} registered" + (f", and {', '.join(variants)}" if variants else "")
    )
    rows += [
        {
            "setting": "seeds",
            "description": regenerated.seeds_meaning,
            **{profile: ", ".join(map(str, regenerated.published_seeds(profile))) for profile in PROFILES},
        },
        {"setting": "scorers", "description": "attention scorers", **{profile: named for profile in PROFILES}},
        # in words: a reader's page shows no command (the reproducing page gives each chapter's)
        {
            "setting": "runs",
            "description": "runs that regenerating the chapter computes (the reproducing page gives the command)",
            **{profile: len(plan(chapter, profile)) for profile in PROFILES},
        },
    ]
    return pd.DataFrame(rows, columns=["setting", "description", *PROFILES]).set_index("setting")
