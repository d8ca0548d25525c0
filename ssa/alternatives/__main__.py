"""``python -m ssa.alternatives regenerate --profile cpu [--task ...] [--scorer ...] [--seeds ...] [--jobs 2]``

Trains and evaluates every scorer's in-context-learning runs that are not cached yet (the ICL
chapters' experiments, so ``python -m ssa.icl regenerate`` makes the same entries), and measures
the cost of every scorer in one run. Prints the plan (runs, cached, to do, estimated time)
first. Resumable: finished runs are cache hits and an interrupted training resumes from its
checkpoint. Runs go task by task, and within a task scorer by scorer with all its seeds (the
alternatives the paper tried first), so a sweep cut short leaves whole groups. By default softmax
and SSA are left to the ICL chapters' command (the chapter reads their entries); ``--scorer all``
includes them. ``--stop-launching-after MINUTES`` starts no new run after that many minutes, so
a sweep can be spread over sessions.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from multiprocessing import get_context

from ssa.alternatives.comparison import PAPER_ALTERNATIVES, chapter_seeds, cost_entry, is_cached, measured_run_seconds, plan, regenerate_command
from ssa.icl import experiments
from ssa.icl.tasks import TASKS
from ssa.profiles import DEVICES, PROFILES
from ssa.scoring import scorer_names


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def _report(future, run: tuple, started: float) -> bool:
    """Print one finished run's summary line (or its failure: the other runs are still worth having)."""
    try:
        summary, seconds = future.result()
    except Exception as error:
        print(f"FAILED {'/'.join(map(str, run))}: {error!r}", flush=True)
        return False
    print(f"[{time.perf_counter() - started:7.0f} s] {summary} ({seconds:.0f} s)", flush=True)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ssa.alternatives", description=__doc__.split("\n\n")[1])
    parser.add_argument("command", choices=("regenerate",))
    parser.add_argument("--profile", choices=PROFILES, default="cpu")
    parser.add_argument("--task", nargs="+", choices=TASKS, default=list(TASKS))
    parser.add_argument("--scorer", nargs="+", help=f"any of: {', '.join(scorer_names())}, or 'all' (default: all but "
                        f"{', '.join(experiments.CHAPTER_SCORERS)}, which python -m ssa.icl regenerate trains)")
    parser.add_argument("--seeds", nargs="+", type=int)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--device", choices=DEVICES, default="auto")
    parser.add_argument("--no-cost", action="store_true", help="skip the cost measurement")
    parser.add_argument("--dry-run", action="store_true", help="print the plan and stop")
    parser.add_argument("--stop-launching-after", type=float, metavar="MINUTES", help="start no new run after this many minutes")
    arguments = parser.parse_args(argv)
    if arguments.scorer in (None, ["all"]):
        everything = list(scorer_names())
        scorers = everything if arguments.scorer else [s for s in everything if s not in experiments.CHAPTER_SCORERS]
        # The alternatives the paper tried first: a sweep cut short still tests its statement.
        scorers.sort(key=lambda name: name not in PAPER_ALTERNATIVES)
    else:
        scorers = arguments.scorer
    unknown = sorted(set(scorers) - set(scorer_names()))
    if unknown:
        parser.error(f"--scorer {', '.join(unknown)}: unknown; choose from {', '.join(scorer_names())} or 'all'")
    if arguments.jobs < 1:
        parser.error("--jobs must be >= 1")
    profile = arguments.profile
    seeds = arguments.seeds if arguments.seeds else list(chapter_seeds(profile))

    runs = plan(arguments.task, scorers, seeds)
    todo = [run for run in runs if not is_cached(*run, profile)]
    per_task = {task: measured_run_seconds(task, profile) for task in arguments.task}
    estimate = sum(per_task[task] for task, _, _ in todo) / min(arguments.jobs, max(1, len(todo)))
    print(f"{len(runs)} runs planned ({len(arguments.task)} tasks x {len(scorers)} scorers x {len(seeds)} seeds), "
          f"{len(runs) - len(todo)} cached, {len(todo)} to run; about "
          + ", ".join(f"{task} {_minutes(seconds)}" for task, seconds in per_task.items())
          + f" per run: about {_minutes(estimate)} with --jobs {arguments.jobs}", flush=True)
    chapter = plan(TASKS, scorer_names(), chapter_seeds(profile))
    icl_missing = [run for run in chapter if run[1] in experiments.CHAPTER_SCORERS and not is_cached(*run, profile)]
    if icl_missing and set(scorers) & set(experiments.CHAPTER_SCORERS) != set(experiments.CHAPTER_SCORERS):
        print(f"note: {len(icl_missing)} softmax/SSA runs the chapter needs are not cached yet: "
              f"{experiments.regenerate_command(profile)}", flush=True)
    if arguments.dry_run:
        return 0

    started = time.perf_counter()
    if not arguments.no_cost:
        cost = cost_entry(profile, arguments.device)["scorers"]
        print(f"[{time.perf_counter() - started:7.0f} s] cost (time, memory / softmax): "
              + ", ".join(f"{s} {v['time_ratio']:.2f}/{v['memory_ratio'] or float('nan'):.2f}" for s, v in cost.items()), flush=True)
    deadline = None if arguments.stop_launching_after is None else started + 60 * arguments.stop_launching_after
    pending, failures, done = list(todo), 0, 0
    progress = arguments.jobs == 1
    with ProcessPoolExecutor(arguments.jobs, mp_context=get_context("spawn"), initializer=experiments.single_thread) as pool:
        running = {}
        while pending or running:
            # Keep exactly `jobs` runs in flight, in plan order, until the launch deadline.
            while pending and len(running) < arguments.jobs and (deadline is None or time.perf_counter() < deadline):
                run = pending.pop(0)
                running[pool.submit(experiments.regenerate_one, *run, profile, arguments.device, progress)] = run
            if not running:
                break
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                succeeded = _report(future, running.pop(future), started)
                done, failures = done + succeeded, failures + (not succeeded)
    if pending:
        left = sorted({(task, scorer) for task, scorer, _ in pending})
        print(f"stopped launching: {len(pending)} runs left; finish with:\n    "
              + regenerate_command(profile, sorted({t for t, _ in left}, key=TASKS.index), sorted({s for _, s in left}, key=scorer_names().index)),
              flush=True)
    print(f"{done} runs finished, {failures} failed, {len(pending)} not started", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
