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

from ssa.icl.experiments import CHAPTER_SCORERS, SEEDS, cached_run, experiment_config
from ssa.icl.tasks import TASKS
from ssa.profiles import DEVICES, PROFILES
from ssa.scoring import scorer_names


def _one_thread() -> None:
    import torch

    torch.set_num_threads(1)


def _run_one(task: str, scorer: str, seed: int, profile: str, device: str, progress: bool) -> tuple[str, float]:
    started = time.perf_counter()
    result = cached_run(experiment_config(task, scorer, profile, seed), profile=profile, device=device, progress=progress)
    training = result["training"]
    summary = (
        f"{task}/{scorer}/seed{seed}: {training['steps']} steps in {training['wall_time_s']:.0f} s training; "
        f"in-distribution prompt error {result['shifts']['sigma_x']['model']['prompt_error'][0]:.4g}"
    )
    return summary, time.perf_counter() - started


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
        _one_thread()
        for task, scorer, seed in runs:
            summary, seconds = _run_one(task, scorer, seed, arguments.profile, arguments.device, progress)
            print(f"[{time.perf_counter() - started:7.0f} s] {summary} ({seconds:.0f} s)", flush=True)
        return 0
    failures = 0
    with ProcessPoolExecutor(arguments.jobs, mp_context=get_context("spawn"), initializer=_one_thread) as pool:
        futures = {pool.submit(_run_one, *run, arguments.profile, arguments.device, False): run for run in runs}
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
