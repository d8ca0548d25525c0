"""``python -m ssa.alternatives regenerate --profile cpu [--task ...] [--scorers ...] [--seeds ...] [--jobs 2]``

The alternative scorers' runs, optionally for some tasks only: the same runs and code as
``python -m ssa regenerate alternative_scorers`` (:mod:`ssa.regenerate`), which is the command
the book documents. ``--no-cost`` leaves out the cost measurement; ``--scorer`` (the old
spelling of ``--scorers``) also takes ``all``.
"""

from __future__ import annotations

import argparse
import sys

from ssa import regenerate
from ssa.icl.tasks import TASKS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ssa.alternatives", description=__doc__.split("\n\n")[1])
    parser.add_argument("command", choices=("regenerate",))
    parser.add_argument("--task", nargs="+", choices=TASKS, default=list(TASKS))
    regenerate.add_run_arguments(parser)
    parser.add_argument("--scorer", nargs="+", dest="scorers", help=argparse.SUPPRESS)  # the old spelling of --scorers
    parser.add_argument("--no-cost", action="store_true", help="leave out the cost measurement")
    arguments = parser.parse_args(argv)
    chapter = regenerate.CHAPTERS["alternative_scorers"]
    try:
        scorers = chapter.published_scorers() if arguments.scorers in (None, ["all"]) else chapter.check_scorers(arguments.scorers)
        seeds = regenerate.check_seeds(arguments.seeds) if arguments.seeds else chapter.published_seeds(arguments.profile)
    except ValueError as error:
        parser.error(f"argument {error}")
    runs = chapter.runs(arguments.profile, seeds, scorers, tasks=arguments.task, cost=not arguments.no_cost)
    return regenerate.run_plan(runs, profile=arguments.profile, device=arguments.device, jobs=arguments.jobs, dry_run=arguments.dry_run,
                               stop_launching_after=arguments.stop_launching_after)


if __name__ == "__main__":
    sys.exit(main())
