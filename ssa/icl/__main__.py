"""``python -m ssa.icl regenerate --profile cpu [--task ...] [--scorer ...] [--seeds ...] [--jobs 2]``

The in-context-learning runs, chosen by task: the same runs and code as ``python -m ssa
regenerate icl_quantification | icl_linear | icl_collapse`` (:mod:`ssa.regenerate`), which is
the command the book documents. ``--scorer`` takes any registered scorer, or ``all``.
"""

from __future__ import annotations

import argparse
import sys

from ssa import regenerate
from ssa.icl.experiments import CHAPTER_SCORERS, SEEDS
from ssa.icl.tasks import TASKS
from ssa.scoring import scorer_names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ssa.icl", description=__doc__.split("\n\n")[1])
    parser.add_argument("command", choices=("regenerate",))
    parser.add_argument("--task", nargs="+", choices=TASKS, default=list(TASKS))
    regenerate.add_run_arguments(parser)
    parser.add_argument("--scorer", nargs="+", dest="scorers", help=argparse.SUPPRESS)  # the old spelling of --scorers
    parser.add_argument("--no-progress", action="store_true")
    arguments = parser.parse_args(argv)
    scorers = list(scorer_names()) if arguments.scorers == ["all"] else arguments.scorers or list(CHAPTER_SCORERS)
    try:
        regenerate.check_scorer_names(scorers)
    except ValueError as error:
        parser.error(f"argument {error}")
    runs = regenerate.icl_runs(arguments.task, scorers, arguments.seeds or SEEDS)
    return regenerate.run_plan(runs, profile=arguments.profile, device=arguments.device, jobs=arguments.jobs, dry_run=arguments.dry_run,
                               stop_launching_after=arguments.stop_launching_after, progress=False if arguments.no_progress else None)


if __name__ == "__main__":
    sys.exit(main())
