"""The leaderboard's tables: scorers x columns with each cell's verdict against softmax, the
page's sortable table with the regime and cost of each column, and the CSV of every seed."""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ssa_book.verdicts.words import (
    BETTER,
    NEGLIGIBLE,
    NOT_LEARNED,
    NOT_RUN_YET,
    PREMISE_NOT_SHOWN,
    TOO_FEW_SEEDS,
    UNDECIDED,
    WORSE,
    not_run_yet as rule_not_run_yet,
)
from ssa_book.verdicts.robustness import rests_on_words, seeds_it_rests_on
from ssa_book.alternatives.comparison import cost_entry
from ssa_book.plotting import scorer_label
from ssa_book.icl.study.design import SCHEDULE_WORDS
from ssa_book.retrieval.analysis import regime as retrieval_regime
from ssa_book.retrieval.experiment import experiment_config as retrieval_config
from ssa_book.leaderboard.board import Board, COLUMNS, Cell, Column, ICL, RETRIEVAL, icl_experiment, scorers, seeds


# --- what the page shows ----------------------------------------------------------------------

# Each benchmark's cost is measured on its own model (ssa_book.alternatives.comparison.COST_MODELS).
COST_MODEL = {ICL: "icl", RETRIEVAL: "retrieval"}


def costs(profile: str, device: str = "auto") -> dict[str, Mapping]:
    """The cost of every scorer on each benchmark's own model, ``{benchmark: cost entry}``
    (:func:`ssa_book.alternatives.comparison.cost_entry`): a training step's time and peak memory as
    multiples of softmax's, every scorer through the same attention path."""
    return {benchmark: cost_entry(profile, device, model=model) for benchmark, model in COST_MODEL.items()}


def _cost_ratios(cost: Mapping[str, Mapping] | None, benchmark: str, scorer: str) -> tuple[float | None, float | None]:
    """``scorer``'s (time, memory) ratios to softmax on ``benchmark``'s model; ``None`` where not measured."""
    found = (cost or {}).get(benchmark, {}).get("scorers", {}).get(scorer)
    if found is None:
        return None, None
    return found.get("time_ratio"), found.get("memory_ratio")


def frame(board: Board, cost: Mapping[str, Mapping] | None = None):
    """The long table, one row per scorer and column (the CSV, :func:`seed_frame`, has one per seed): the point, each
    seed's error, the mean and its 95% interval, softmax's mean, the verdict with its effect
    (softmax's error minus the scorer's: positive when the scorer is better) and interval, and the
    cost of a training step and its peak memory on the column's own model as multiples of
    softmax's (``cost``: :func:`costs`). Pending cells have no numbers and say how many seeds are
    cached."""
    import pandas as pd

    rows = []
    for scorer in scorers():
        for each in COLUMNS:
            time_ratio, memory_ratio = _cost_ratios(cost, each.benchmark, scorer)
            found, reference = board.cell(scorer, each.key), board.cell("softmax", each.key)
            cached, planned = board.seeds_cached.get((scorer, each.key), (0, 0))
            row = {
                "scorer": scorer,
                "scorer_label": scorer_label(scorer),
                "column": each.key,
                "shift": each.shift_label,
                "benchmark": each.benchmark,
                "point": each.point,
                "error": each.error,
                "seeds": planned,
                "seeds_cached": cached,
                "mean": np.nan,
                "low": np.nan,
                "high": np.nan,
                "softmax_mean": np.nan,
                "learned": None,
                "outcome": NOT_RUN_YET,
                "effect": np.nan,
                "effect_low": np.nan,
                "effect_high": np.nan,
                "pairs": 0,
                "per_seed": "",
                "time_ratio": time_ratio,
                "memory_ratio": memory_ratio,
            }
            if found is not None:
                low, high = found.interval or (np.nan, np.nan)
                row.update(
                    mean=found.mean,
                    low=low,
                    high=high,
                    learned=found.learned,
                    softmax_mean=reference.mean,
                    per_seed=" ".join(f"{seed}:{error:.6g}" for seed, error in zip(found.seeds, found.errors)),
                    outcome="reference" if found.verdict is None else found.verdict.outcome,
                )
                if found.verdict is not None and found.verdict.interval is not None:
                    row.update(
                        effect=found.verdict.effect,
                        effect_low=found.verdict.interval[0],
                        effect_high=found.verdict.interval[1],
                        pairs=found.verdict.pairs,
                    )
            rows.append(row)
    return pd.DataFrame(rows)


def not_run_yet(board: Board, scorer: str, column: str) -> str:
    """A cell whose comparison lacks runs, in the book's one wording (:func:`ssa_book.verdicts.words.not_run_yet`):
    "not run yet: 14 of 20 runs done", counting the seeds of ``scorer`` and of softmax in ``column`` (softmax's
    own for softmax's cell), so that a scorer whose seeds are all in still says what its verdict waits for."""
    counts = [board.seeds_cached[(each, column)] for each in dict.fromkeys((scorer, "softmax"))]
    return rule_not_run_yet(sum(cached for cached, _ in counts), sum(planned for _, planned in counts))


# A cell's verdict against softmax, the scorer named by its row: the book's words without the name.
# A direction keeps its subject, the row's scorer: "scorer worse than softmax", never a bare "worse".
OUTCOME_MARKS = {
    outcome: f"scorer {outcome} than softmax" if outcome in (BETTER, WORSE) else outcome
    for outcome in (BETTER, WORSE, NEGLIGIBLE, UNDECIDED, TOO_FEW_SEEDS, PREMISE_NOT_SHOWN, NOT_LEARNED)
}


def table(board: Board, cost: Mapping[str, Mapping] | None = None, digits: int = 3):
    """Scorers x columns as the page shows them: "mean [low, high]" and, below softmax, the
    verdict against it (:data:`OUTCOME_MARKS`: scorer better than softmax / scorer worse than softmax /
    no difference that matters / undecided / not learned); "not run yet: k of n runs" for a cell not
    complete; then the cost columns, each benchmark's model apart."""
    import pandas as pd

    rows = {}
    for scorer in scorers():
        row = {}
        for each in COLUMNS:
            found = board.cell(scorer, each.key)
            if found is None:
                row[each.label] = not_run_yet(board, scorer, each.key)
                continue
            interval = found.interval
            text = f"{found.mean:.{digits}f}" + (
                "" if interval is None else f" [{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]"
            )
            rests = "" if found.verdict is None else rests_on_words(seeds_it_rests_on(found.verdict, found.seeds))
            row[each.label] = (
                text
                + ("" if found.verdict is None else f" {OUTCOME_MARKS[found.verdict.outcome]}")
                + (f" ({rests})" if rests else "")
            )
        for benchmark, where in ((ICL, "in context"), (RETRIEVAL, "retrieval")):
            time_ratio, memory_ratio = _cost_ratios(cost, benchmark, scorer)
            row[f"step time / softmax, {where}"] = "n/a" if time_ratio is None else f"{time_ratio:.2f}"
            row[f"peak memory / softmax, {where}"] = "n/a" if memory_ratio is None else f"{memory_ratio:.2f}"
        rows[scorer_label(scorer)] = row
    found = pd.DataFrame.from_dict(rows, orient="index")
    found.index.name = "scorer"
    return found


# --- the regime of each column, and each cell's words against softmax ------------------------------


def regime_fields(each: Column, profile: str) -> dict:
    """The training regime of ``each``'s runs at ``profile``, field by field (every scorer's runs
    of a column share it; SSA's start is in the chapters' tables): the model's layers and width,
    training steps, learning rate and its schedule, the training scale, and the paired seeds."""
    if each.benchmark == RETRIEVAL:
        config = retrieval_config("softmax", profile, setup=each.setup)
        layers, width, steps, rate, schedule = (
            config.model.depth,
            config.model.width,
            config.train.steps,
            config.train.learning_rate,
            "constant",
        )
    else:
        train = icl_experiment(each.task, "softmax", seeds(ICL, profile)[0], profile).train
        layers, width, steps, rate, schedule = (
            train.model.n_layer,
            train.model.n_embd,
            train.train_steps,
            train.learning_rate,
            SCHEDULE_WORDS[train.schedule],
        )
    return {
        "layers": layers,
        "width": width,
        "steps": steps,
        "learning_rate": rate,
        "schedule": schedule,
        "training_scale": each.training,
        "seeds": len(seeds(each.benchmark, profile)),
    }


def regime(each: Column, profile: str) -> str:
    """``each``'s regime in words: "in context, 4 layers of width 64, 1,000 steps at learning rate
    0.001 (constant), trained at σ = 1; 10 paired seeds" (max retrieval: its chapter's words)."""
    if each.benchmark == RETRIEVAL:
        return f"max retrieval, {each.setup} setup: {retrieval_regime(profile, each.setup)}"
    fields = regime_fields(each, profile)
    return (
        f"in context, {fields['layers']} layers of width {fields['width']}, {fields['steps']:,} steps at learning rate "
        f"{fields['learning_rate']:g} ({fields['schedule']}), trained at {each.training}; {fields['seeds']} paired seeds"
    )


def short_regime(each: Column, profile: str) -> str:
    """``each``'s regime in a few words for the table: "in context, 4 × 64, 1,000 steps, lr 0.001"
    (layers × width)."""
    fields = regime_fields(each, profile)
    where = "in context" if each.benchmark == ICL else f"retrieval, {each.setup}"
    return f"{where}, {fields['layers']} × {fields['width']}, {fields['steps']:,} steps, lr {fields['learning_rate']:g}"


_DIRECTION = re.compile(r"\b(better|worse)\b")


def rests_on(cell: Cell) -> str:
    """The seeds whose pair, left out alone, moves the cell's decided verdict, in words: "rests on
    seed 102" ("" when it survives leaving any one out, or is open)."""
    return "" if cell.verdict is None else rests_on_words(seeds_it_rests_on(cell.verdict, cell.seeds))


def against_softmax(cell: Cell) -> str:
    """The cell's verdict against softmax with its subject, never a bare direction, and beside it
    the seed it rests on: "sigmoid better than softmax (rests on seed 102)", "SSA worse than
    softmax", "no difference that matters; SSA slightly better than softmax", "exploratory (3
    pairs)", "not learned"; "reference" for softmax itself."""
    if cell.verdict is None:
        return "reference"
    fragile = rests_on(cell)
    return _DIRECTION.sub(r"\1 than softmax", cell.verdict.label()) + (f" ({fragile})" if fragile else "")


def columns_table():
    """The columns as declared: shift, benchmark, training scale, point, error, and the threshold
    of the verdict against softmax with its reason."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "column": each.label,
                "kind of shift": each.shift_label,
                "benchmark": each.benchmark,
                "training": each.training,
                "error read": each.error,
                "threshold": each.claim.threshold,
                "why this threshold": each.claim.reason,
            }
            for each in COLUMNS
        ]
    ).set_index("column")


BOARD_COST_COLUMNS = ("step time / softmax", "peak memory / softmax")


def board_frame(board: Board, cost: Mapping[str, Mapping] | None = None, digits: int = 3):
    """The page's table: one row per scorer and column, so that it fits the text column and sorts
    and filters by any of them: the scorer, the column (its shift and point), its regime in short
    (:func:`short_regime`), the mean error over seeds with its 95% interval, the verdict against
    softmax with its subject (:func:`against_softmax`; "not run yet: k of n runs" for a cell not
    complete), and the cost of a training step and its peak memory on the column's own model as
    multiples of softmax's (:data:`BOARD_COST_COLUMNS`)."""
    import pandas as pd

    rows = []
    for scorer in scorers():
        for each in COLUMNS:
            found = board.cell(scorer, each.key)
            time_ratio, memory_ratio = _cost_ratios(cost, each.benchmark, scorer)
            row = {
                "scorer": scorer_label(scorer),
                "column": each.label,
                "regime": short_regime(each, board.profile),
                "mean error": np.nan,
                "95% interval": "",
                "against softmax": "",
            }
            if found is None:
                row["against softmax"] = not_run_yet(board, scorer, each.key)
            else:
                row["mean error"] = round(found.mean, digits)
                if found.interval is not None:
                    row["95% interval"] = f"[{found.interval[0]:.{digits}f}, {found.interval[1]:.{digits}f}]"
                row["against softmax"] = against_softmax(found)
            row.update(
                zip(
                    BOARD_COST_COLUMNS,
                    (np.nan if ratio is None else round(float(ratio), 2) for ratio in (time_ratio, memory_ratio)),
                )
            )
            rows.append(row)
    return pd.DataFrame(rows)


ROWS_PER_PAGE = 14  # one scorer's six columns fit twice and a third of a screen


def interactive_table(table, rows: int = ROWS_PER_PAGE) -> str:
    """``table`` (a DataFrame, without its index) as an interactive HTML table (itables, DataTables):
    sorting by any column, a search box that filters the rows, and pages of ``rows`` rows. It works
    offline: DataTables' JavaScript and CSS travel inside the HTML (itables' offline mode), never
    from a CDN; without JavaScript the table's first rows show as plain HTML."""
    from itables import options
    from itables.javascript import generate_init_offline_itables_html, to_html_datatable

    # "compact" without "nowrap": cells wrap, so that the table fits the text column
    found = to_html_datatable(
        table,
        connected=False,
        showIndex=False,
        classes="display compact",
        pageLength=rows,
        lengthMenu=[rows, 2 * rows, len(table)],
        style="width:100%",
        autoWidth=False,
        layout={"topStart": "pageLength", "topEnd": "search", "bottomStart": "info", "bottomEnd": "paging"},
    )
    return generate_init_offline_itables_html(options.dt_bundle) + found


CSV_NAME = "ssa-leaderboard.csv"
CSV_DIGITS = 6  # significant digits of the CSV's numbers (a float's binary noise left out)


def seed_frame(board: Board, cost: Mapping[str, Mapping] | None = None):
    """The leaderboard in long format, the CSV the page offers: one row per scorer, column and
    seed of every filled cell (a seed per row, so that each pair with softmax can be re-judged from
    the file), with the column's regime (in words, and field by field: :func:`regime_fields`), the
    scorer's and softmax's error at that seed, the cell's verdict against softmax with its subject
    (:func:`against_softmax`: "SSA worse than softmax") with its effect and interval (softmax's
    error minus the scorer's: positive when the scorer is better), and the cost of a training step
    and its peak memory on the column's own model as multiples of softmax's. Numbers are kept to
    :data:`CSV_DIGITS` significant digits."""
    import pandas as pd

    rows = []
    for scorer in scorers():
        for each in COLUMNS:
            time_ratio, memory_ratio = _cost_ratios(cost, each.benchmark, scorer)
            found, reference = board.cell(scorer, each.key), board.cell("softmax", each.key)
            if found is None:
                continue
            verdict = found.verdict
            softmax_errors = dict(zip(reference.seeds, reference.errors))
            decided = verdict is not None and verdict.interval is not None
            fields = {f"regime_{name}": value for name, value in regime_fields(each, board.profile).items()}
            words, outcome = regime(each, board.profile), against_softmax(found)
            for seed, error in zip(found.seeds, found.errors):
                rows.append(
                    {
                        "scorer": scorer,
                        "scorer_label": scorer_label(scorer),
                        "column": each.key,
                        "shift": each.shift_label,
                        "benchmark": each.benchmark,
                        "point": each.point,
                        "regime": words,
                        **fields,
                        "error_measure": each.error,
                        "seed": seed,
                        "error": error,
                        "softmax_error": softmax_errors.get(seed, np.nan),
                        "outcome": outcome,
                        "effect": verdict.effect if decided else np.nan,
                        "effect_low": verdict.interval[0] if decided else np.nan,
                        "effect_high": verdict.interval[1] if decided else np.nan,
                        "pairs": verdict.pairs if decided else 0,
                        "time_ratio": np.nan if time_ratio is None else time_ratio,
                        "memory_ratio": np.nan if memory_ratio is None else memory_ratio,
                    }
                )
    return significant(pd.DataFrame(rows), CSV_DIGITS)


def significant(table, digits: int = CSV_DIGITS):
    """``table`` with every float rounded to ``digits`` significant digits, so that its CSV reads
    -0.278516, not -0.27851560000000003."""
    found = table.copy()
    for name in found.columns:
        if found[name].dtype.kind == "f":
            found[name] = [value if not np.isfinite(value) else float(f"{value:.{digits}g}") for value in found[name]]
    return found


def download_link(
    table, folder: str | Path | None = None, filename: str = CSV_NAME, text: str = "Download the leaderboard as CSV"
) -> str:
    """An HTML link that downloads ``table`` (a DataFrame) as a CSV file. With ``folder`` (the
    book's downloads folder, which the build copies to the site's root: a stable address,
    ``<site>/<filename>``), the file is written there and the link points at it from a chapter
    page; without one (a notebook opened alone), the file travels inside the link (a data URI)."""
    rows = f" ({len(table)} rows: one per scorer, column and seed)"
    if folder is not None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        table.to_csv(folder / filename, index=False)
        return f'<a download="{html.escape(filename)}" href="../{html.escape(filename)}">{html.escape(text)}</a>{rows}'
    payload = base64.b64encode(table.to_csv(index=False).encode("utf-8")).decode("ascii")
    return f'<a download="{html.escape(filename)}" href="data:text/csv;charset=utf-8;base64,{payload}">{html.escape(text)}</a>{rows}'
