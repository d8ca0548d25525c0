"""``python -m ssa.icl regenerate --profile cpu [--task ...] [--scorer ...] [--seeds ...] [--jobs 2]``

Trains and evaluates every in-context-learning experiment of the chapters that is not in the
result cache yet, and writes it there. Resumable: finished experiments are cache hits, and an
interrupted training resumes from its last checkpoint. ``--jobs N`` runs N experiments at once,
each on one torch thread.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context

# The pool's workers import these by name: functions defined in __main__ cannot cross a spawn.
from ssa.icl.experiments import CHAPTER_SCORERS, SEEDS, regenerate_one, single_thread
from ssa.icl.tasks import TASKS
from ssa.profiles import DEVICES, PROFILES
from ssa.scoring import scorer_names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ssa.icl", description=__doc__.split("\n\n")[1])
    parser.add_argument("command", choices=("regenerate",))
    parser.add_argument("--profile", choices=PROFILES, default="cpu")
    parser.add_argument("--task", nargs="+", choices=TASKS, default=list(TASKS))
    parser.add_argument("--scorer", nargs="+", default=list(CHAPTER_SCORERS), help=f"any of: {', '.join(scorer_names())}, or 'all'")
    parser.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--device", choices=DEVICES, default="auto")
    parser.add_argument("--no-progress", action="store_true")
    arguments = parser.parse_args(argv)
    scorers = list(scorer_names()) if arguments.scorer == ["all"] else arguments.scorer
    unknown = sorted(set(scorers) - set(scorer_names()))
    if unknown:
        parser.error(f"--scorer {', '.join(unknown)}: unknown; choose from {', '.join(scorer_names())} or 'all'")
    if arguments.jobs < 1:
        parser.error("--jobs must be >= 1")
    # Chapter by chapter, so that an interrupted sweep leaves whole chapters done.
    runs = [(task, scorer, seed) for task in arguments.task for seed in arguments.seeds for scorer in scorers]
    progress = not arguments.no_progress and arguments.jobs == 1
    started = time.perf_counter()
    if arguments.jobs == 1:
        single_thread()
        for task, scorer, seed in runs:
            summary, seconds = regenerate_one(task, scorer, seed, arguments.profile, arguments.device, progress)
            print(f"[{time.perf_counter() - started:7.0f} s] {summary} ({seconds:.0f} s)", flush=True)
        return 0
    failures = 0
    with ProcessPoolExecutor(arguments.jobs, mp_context=get_context("spawn"), initializer=single_thread) as pool:
        futures = {pool.submit(regenerate_one, *run, arguments.profile, arguments.device, False): run for run in runs}
        for future in as_completed(futures):
            try:
                summary, seconds = future.result()
            except Exception as error:  # report and go on: the other runs are still worth having
                failures += 1
                print(f"FAILED {'/'.join(map(str, futures[future]))}: {error!r}", flush=True)
                continue
            print(f"[{time.perf_counter() - started:7.0f} s] {summary} ({seconds:.0f} s)", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
