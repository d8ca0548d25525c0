"""Each chapter's sizes at every profile, as one table: ``sizes("icl_linear")``.

A chapter's table is declared here as rows (:class:`Setting`): a name, a short description and
where the value sits in the configs the chapter's own builders make
(:meth:`ssa_book.chapters.Chapter.configs`: ``experiment_config``, ``run_config``,
``EncoderConfig.for_profile``, ``bench_config``, ...). The numbers are never written here: every
value is read from the built config, so the table cannot disagree with what runs.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from ssa_book.chapters import CHAPTERS, plan
from ssa_book.lm.model import build_model, parameter_count
from ssa_book.profiles import PROFILES, check_profile
from ssa.scoring import scorer_names

import ssa_book.studies  # noqa: F401  (registers every study, and so its chapters in CHAPTERS)


@dataclasses.dataclass(frozen=True)
class Setting:
    """One row: the value at ``path`` of a chapter's config (attribute names or dict keys joined
    by dots; ``""`` is the whole config), shown through ``show`` (default: as it is)."""

    name: str
    description: str
    path: str
    show: Callable[[Any], Any] | None = None

    def value(self, config: Any) -> Any:
        value = resolve(config, self.path)
        return value if self.show is None else self.show(value)


def resolve(config: Any, path: str) -> Any:
    """The value at ``path`` (``"train.model.n_layer"``) of ``config``; ``""`` is ``config``."""
    value = config
    for part in path.split(".") if path else ():
        value = value[part] if isinstance(value, dict) else getattr(value, part)
    return value


def _values(values) -> str:
    """A sequence as text; a long evenly spaced one as its first two values and its last."""
    values = list(values)
    if len(values) > 6 and all(b - a == values[1] - values[0] for a, b in zip(values, values[1:])):
        return f"{values[0]}, {values[1]}, …, {values[-1]} ({len(values)} values)"
    return ", ".join(map(str, values))


def _curriculum(curriculum) -> str:
    return f"{curriculum.start} -> {curriculum.end}, +{curriculum.increment} every {curriculum.interval} steps"


def _scorer_settings(kwargs) -> str:
    """``b = 2.718, n = 1.492``; with the decoder's ``learn_b``/``learn_n`` flags, which are trained."""
    kwargs = dict(kwargs)
    return ", ".join(f"{name} = {value:.4g}" + (f" ({'trained' if kwargs[f'learn_{name}'] else 'fixed'})" if f"learn_{name}" in kwargs else "")
                     for name, value in kwargs.items() if not name.startswith("learn_"))


def _attention(size) -> str:
    return f"{size.batch} x {size.heads} x {size.tokens} x {size.head_dim}"


def _decoder_parameters(run) -> str:
    return f"{parameter_count(build_model(run.model, device='meta')) / 1e6:.3g}M"


def _decoder_tokens(run) -> str:
    return f"{run.train.steps * run.train.global_batch * run.model.seq_len:,}"


ICL_SETTINGS = (
    Setting("layers", "transformer blocks (GPT-2)", "train.model.n_layer"),
    Setting("heads", "attention heads per block", "train.model.n_head"),
    Setting("width", "embedding width", "train.model.n_embd"),
    Setting("positions", "longest prompt the model takes, in points", "train.model.n_positions"),
    Setting("SSA at initialisation", "SSA's b and n before training (both are trained)", "train.model.scorer_kwargs", _scorer_settings),
    Setting("batch", "prompts per training step", "train.batch_size"),
    Setting("learning rate", "Adam", "train.learning_rate"),
    Setting("steps", "training steps", "train.train_steps"),
    Setting("curriculum", "training prompt length in points: first -> last, + increment every interval steps", "train.curriculum", _curriculum),
    Setting("test sigmas", "scales of the shifted test inputs (and functions, linear task)", "eval.sigmas", _values),
    Setting("test prompts per sigma", "test prompts (linear: functions) per scale", "eval.prompts"),
    Setting("test points per prompt", "points per prompt of the scale sweeps", "eval.points"),
    Setting("test lengths", "prompt lengths of the length sweep, in points", "eval.lengths", _values),
    Setting("prompts per length", "test prompts per length", "eval.length_prompts"),
    Setting("attention-statistics prompts", "prompts per scale for the attention statistics", "eval.diagnostic_prompts"),
)

CHAPTER_SETTINGS: dict[str, tuple[Setting, ...]] = {
    "icl_quantification": ICL_SETTINGS,
    "icl_linear": ICL_SETTINGS,
    "icl_collapse": ICL_SETTINGS,
    # its in-context runs (SSA's; every scorer's are the same but for the scorer): no length sweep;
    # its retrieval runs are the Max retrieval chapter's, whose table has their settings
    "leaderboard": tuple(setting for setting in ICL_SETTINGS if setting.path not in ("eval.lengths", "eval.length_prompts")),
    "icl_study": ICL_SETTINGS,  # of its base arm (SSA as in the chapters); each arm's change is in the plan
    "alternative_scorers": tuple(dataclasses.replace(setting, path=f"experiment.{setting.path}") for setting in ICL_SETTINGS) + (
        Setting("cost: timing", "seconds of interleaved timing of the fastest scorer, cost measurement", "cost.min_run_time"),
        Setting("cost: task", "the task whose model and longest training batch the cost measurement times", "cost.task"),
        Setting("cost: threads", "torch threads of the cost measurement", "cost.threads"),
    ),
    "decoder": (
        Setting("layers", "decoder blocks (Nemotron)", "model.num_layers"),
        Setting("width", "hidden size", "model.hidden_size"),
        Setting("heads", "query heads per block", "model.num_heads"),
        Setting("key/value heads", "grouped-query attention: query heads share these", "model.num_kv_heads"),
        Setting("MLP width", "squared-ReLU MLP", "model.ffn_size"),
        Setting("context", "tokens per sequence, in training and evaluation", "model.seq_len"),
        Setting("vocabulary", "byte-level BPE fitted on the training text", "model.vocab_size"),
        Setting("parameters", "model parameters", "", _decoder_parameters),
        Setting("training text", "in-distribution source (training and held-out split)", "data.train_source"),
        Setting("out-of-distribution text", "source of the out-of-distribution perplexity", "data.ood_source"),
        Setting("held out per 1000", "documents kept out of training, per 1000 (by a hash of the text)", "data.held_out_per_mille"),
        Setting("training documents", "documents read for training (None: the whole source)", "data.max_train_documents"),
        Setting("tokenizer documents", "training documents the tokenizer is fitted on", "data.tokenizer_documents"),
        Setting("perplexity windows", "held-out windows of one context each", "data.eval_windows"),
        Setting("BLiMP pairs", "minimal pairs per BLiMP paradigm", "data.blimp_pairs_per_paradigm"),
        Setting("batch", "sequences per optimizer step", "train.global_batch"),
        Setting("micro-batch", "sequences per forward pass (memory only)", "train.micro_batch"),
        Setting("steps", "optimizer steps", "train.steps"),
        Setting("tokens trained", "steps x batch x context", "", _decoder_tokens),
        Setting("warm-up steps", "linear warm-up, then cosine decay", "train.warmup_steps"),
        Setting("learning rate", "peak, AdamW", "train.lr"),
        Setting("final learning rate", "fraction of the peak at the end of the decay", "train.min_lr_ratio"),
        Setting("weight decay", "on matrices only", "train.weight_decay"),
        Setting("SSA settings", "SSA's b and n at the start, and which are trained", "train.scorer_kwargs", _scorer_settings),
        Setting("curve every", "steps between held-out losses of the training curve", "train.eval_every"),
        Setting("curve windows", "held-out windows per point of the training curve", "train.eval_windows_during_training"),
        Setting("checkpoint every", "steps between checkpoints", "train.checkpoint_every"),
    ),
    "encoder": (
        Setting("layers", "transformer blocks (RoBERTa)", "num_layers"),
        Setting("heads", "attention heads per block", "num_heads"),
        Setting("width", "hidden size", "hidden_size"),
        Setting("MLP width", "feed-forward size", "ffn_size"),
        Setting("vocabulary", "BPE tokens fitted on the training utterances", "vocab_size"),
        Setting("longest utterance", "tokens; longer utterances are left out", "max_tokens"),
        Setting("dropout", "dropout probability", "dropout"),
        Setting("masked share", "share of tokens selected for prediction", "mask_probability"),
        Setting("random-token share", "share of selected tokens replaced by a random token (the others: <mask>)", "random_token_probability"),
        Setting("batch", "utterances per step", "batch_size"),
        Setting("learning rate", "peak, AdamW", "learning_rate"),
        Setting("warm-up steps", "linear warm-up, then linear decay", "warmup_steps"),
        Setting("steps", "training steps", "steps"),
        Setting("gradient clip", "largest gradient norm", "gradient_clip"),
        Setting("order", "order of the training utterances", "order"),
        Setting("utterances", "utterances used, evenly over ages (None: all)", "max_utterances"),
        Setting("held out every", "every n-th utterance is held out", "held_out_every"),
        Setting("curve every", "steps between points of the training curves", "eval_every"),
        Setting("held-out utterances", "utterances of the validation loss", "held_out_utterances"),
        Setting("curve pairs", "Zorro pairs per paradigm at each curve point", "curve_pairs"),
        Setting("probe pairs", "Zorro pairs per paradigm of the final score (None: all)", "probe_pairs"),
        Setting("pseudo-likelihood pairs", "Zorro pairs per paradigm of the pseudo-log-likelihood score", "pll_pairs"),
        Setting("checkpoint every", "steps between checkpoints", "checkpoint_every"),
    ),
    "performance": (
        Setting("ICL attention", "batch x heads x tokens x head size of the ICL model's attention", "icl", _attention),
        Setting("LM attention", "batch x heads x tokens x head size of the LM attention (tokens: swept below)", "lm_shape", _attention),
        Setting("LM lengths", "sequence lengths of the LM sweep, in tokens", "lm_tokens", _values),
        Setting("target lengths", "lengths at which the time and memory targets are checked", "lm_target_tokens", _values),
        Setting("reference up to", "longest sequence the reference path (full weight matrix) is timed at", "reference_max_tokens"),
        Setting("timing", "seconds of repeated runs per timing", "min_run_time"),
        Setting("compiled", "torch.compile in the fast paths", "compile"),
        Setting("timed training", "ICL profile whose whole training run is timed (None: not timed)", "training_profile"),
        Setting("threads", "torch threads of the CPU benchmark", "threads"),
    ),
    "max_retrieval": (
        Setting("classes", "classes an item can have (chance: one over this)", "model.classes"),
        Setting("width", "width of the items and of the head", "model.width"),
        Setting("depth", "hidden layers of the item encoder and of the readout, each", "model.depth"),
        Setting("query", "learned: one vector for every set; input: computed from the set's items", "model.query"),
        Setting("training set size", "items per training set (the largest, when the smallest is set)", "train.items"),
        Setting("smallest training set", "fewest items per training set, drawn per step (0: every set has the largest)", "train.min_items"),
        Setting("batch", "sets per step", "train.batch_size"),
        Setting("steps", "training steps", "train.steps"),
        Setting("optimizer", "Adam, or AdamW with decoupled weight decay", "train.optimizer"),
        Setting("weight decay", "AdamW's, per step", "train.weight_decay"),
        Setting("learning rate", "constant", "train.learning_rate"),
        Setting("test sizes", "items per test set", "eval.sizes", _values),
        Setting("test sets", "test sets per size, the same for every scorer and seed", "eval.sets"),
    ),
}


def chapter_configs(chapter: str, profile: str) -> dict[str, Any]:
    """The configs chapter ``chapter`` builds at ``profile``, by its own builders
    (:meth:`ssa_book.chapters.Chapter.configs`): one per task for the in-context-learning chapters
    (``{task: config}``), else ``{"": config}``."""
    check_profile(profile)
    if chapter not in CHAPTER_SETTINGS:
        raise ValueError(f"chapter must be one of {', '.join(CHAPTER_SETTINGS)}; got {chapter!r}")
    return CHAPTERS[chapter].configs(profile)


def size_rows(chapter: str) -> list[tuple[str, Setting, tuple[str, ...]]]:
    """``(row name, setting, config groups)`` of :func:`sizes`: one row per setting, or one per
    group of tasks that differ in it (``"steps (every, some)"``, ``"steps (linear)"``)."""
    configs = {profile: chapter_configs(chapter, profile) for profile in PROFILES}
    groups = tuple(configs[PROFILES[0]])
    rows = []
    for setting in CHAPTER_SETTINGS[chapter]:
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
    rows = [{"setting": name, "description": setting.description,
             **{profile: setting.value(configs[profile][groups[0]]) for profile in PROFILES}}
            for name, setting, groups in size_rows(chapter)]
    regenerated = CHAPTERS[chapter]
    scorers = regenerated.published_scorers()
    registered = [name for name in scorers if name in scorer_names()]
    variants = [name for name in scorers if name not in registered]  # settings of a scorer run as one (max retrieval's)
    named = ", ".join(scorers) if len(scorers) <= 4 else f"all {len(registered)} registered" + (f", and {', '.join(variants)}" if variants else "")
    rows += [
        {"setting": "seeds", "description": ("seeds of the benchmark's random inputs" if chapter == "performance" else
                                             "training seeds: each initialises a model and draws its data"),
         **{profile: ", ".join(map(str, regenerated.published_seeds(profile))) for profile in PROFILES}},
        {"setting": "scorers", "description": "attention scorers",
         **{profile: named for profile in PROFILES}},
        {"setting": "runs", "description": f"runs `python -m ssa_book regenerate {chapter}` plans (`--dry-run` lists them)",
         **{profile: len(plan(chapter, profile)) for profile in PROFILES}},
    ]
    return pd.DataFrame(rows, columns=["setting", "description", *PROFILES]).set_index("setting")
