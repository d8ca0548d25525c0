"""``python -m ssa_book regenerate CHAPTER``: compute every cached result a chapter reads.

    python -m ssa_book regenerate icl_linear --profile cpu               # what the chapter shows
    python -m ssa_book regenerate alternative_scorers --profile cpu --jobs 2 --dry-run
    python -m ssa_book regenerate decoder --profile cpu --seeds 2 3      # more seeds
    python -m ssa_book regenerate all --profile cpu --jobs 2             # every chapter, each run once

:data:`ssa_book.studies.CHAPTERS` maps each chapter with cached results (its notebook's name) to a
:class:`ssa_book.chapters.Chapter`, defined beside its study's code and listed with the study
(:class:`ssa_book.chapters.Study`, :data:`ssa_book.studies.STUDIES`), which lists the chapter's runs
for a profile, seeds and scorers (:func:`ssa_book.studies.plan`); a :class:`ssa_book.chapters.Run` is
one cache entry (or one group of entries made together), computed by its study's own cached function
(the study's kinds of run, :data:`ssa_book.studies.KINDS`): this module trains nothing itself.
A run already in the cache is skipped; an interrupted training resumes from its last checkpoint,
so the command can be stopped and restarted at any time. A malformed entry (one ``results
validate`` reports) is named on stderr and counts as missing: it is computed again and replaced
whole. Before the first computation the cache must be writable (else the command stops at once,
exit status 2), and the temporaries that interrupted writes left in it are removed
(:mod:`ssa_book.files` says which).

The flags mean the same in every chapter:

* ``--profile``: smoke, cpu or paper (:mod:`ssa_book.profiles`); default cpu.
* ``--seeds``: the training seeds of the chapter's models: one seed initialises one model's
  weights and draws its training data (batches, masking), and the same seed gives every scorer
  the same data, so runs pair by seed. Default: the seeds the chapter publishes at the profile.
  The performance chapter trains no model: there a seed draws the benchmark's random inputs and
  initial weights (it publishes seed 0).
* ``--scorers``: attention scorers, by their names in :func:`ssa.scoring.scorer_names`. Default:
  the scorers the chapter shows. The ICL chapters and the decoder accept softmax and ssa, the
  encoder its four variants, the performance chapter softmax and ssa (its benchmark always
  measures both); alternative_scorers accepts every registered scorer.
* ``--jobs N``: N runs at once, on a local Dask cluster of N worker processes with one torch
  thread each (:mod:`ssa_book.runner`); with ``--cluster`` a batch system, N batch jobs of one
  worker each. Measurements (the performance benchmark, the scorers' cost) always run alone first,
  in this process. With ``--jobs 1`` (the default) runs go one after the other in this process,
  also on one torch thread: the same numbers, bit for bit, as a worker's, without starting one.
* ``--cluster tcp://HOST:PORT``: the runs go to the workers of a running Dask scheduler (``dask
  scheduler``; ``dask worker tcp://HOST:PORT --nthreads 1`` on each machine); ``--cluster slurm``
  (pbs, sge, lsf, htcondor, moab, oar): to ``--jobs N`` batch jobs (dask-jobqueue, the ``[cluster]``
  extra, with the settings of ``ssa_book/jobqueue.yaml``). Workers return each run's entries;
  this command checks and writes them, the cache's only writer.
* ``--device``: where models train (auto, cpu, cuda, mps). The performance chapter's CPU
  benchmark always runs on the CPU and its GPU benchmark (profile paper) on CUDA.
* ``--dry-run``: list the runs, which are cached and which would be computed; compute nothing.
* ``--stop-launching-after MINUTES``: start no new run after that many minutes (a long sweep
  spread over sessions).
* ``--arms A ...`` (icl_study only): the study's arms to compute, by name
  (:data:`ssa_book.icl.study.ARMS`), so that any arm can be rerun with one command; with ``--seeds``,
  any of its runs.

Chapter-wide entries that belong to no seed or scorer (the scorers' cost measurement, the
encoder's corpus summary) are part of their chapter's runs whatever ``--seeds`` and
``--scorers`` say.
"""

from __future__ import annotations

import sys
import time
import traceback
from typing import Callable, Mapping, Sequence

from ssa_book import runner
from ssa_book.chapters import Run
from ssa_book.studies import KINDS, read_run
from ssa_book.data import DatasetError
from ssa_book.paths import cache_problem, training_folder_problem
from ssa_book.profiles import resolve_device
from ssa_book.results.store import remove_abandoned_temporaries
from ssa_book.runner import BATCH_SYSTEMS, Progress, cost_estimates
from ssa_book.training import single_thread


# ----------------------------------------------------------------------------------------------
# Checking the cache and computing.


def compute(run: Run, profile: str, device: str, progress: bool) -> tuple[str, float]:
    """Compute (or read) ``run``: (one line about its result, seconds)."""
    started = time.perf_counter()
    summary = KINDS[run.kind].compute(profile, device, progress, *run.arguments)
    return summary, time.perf_counter() - started


def execute(
    runs: Sequence[Run],
    *,
    profile: str,
    device: str,
    jobs: int = 1,
    cluster: str | None = None,
    progress: bool = False,
    stop_launching_after: float | None = None,
    log: Callable[[str], None] = print,
    estimates: Mapping[tuple, float] | None = None,
) -> tuple[int, int, list[Run]]:
    """Compute ``runs``: the exclusive ones (measurements) first, one at a time in this process,
    then the others: with ``jobs == 1`` and no ``cluster``, one after the other in this process
    (one torch thread); else on Dask workers (:mod:`ssa_book.runner`: a local cluster of ``jobs``
    processes, or ``cluster``), this process writing the entries they return. A failed run is
    reported and the others go on; after each run, the runs done, running and left and the time
    left, from ``estimates`` (run key -> seconds). Returns (runs done, runs failed, runs not
    started because of ``stop_launching_after`` minutes)."""
    if jobs < 1:
        raise ValueError(f"--jobs must be >= 1; got {jobs}")
    started = time.perf_counter()
    deadline = None if stop_launching_after is None else started + 60 * stop_launching_after
    pending = [run for run in runs if run.exclusive] + [run for run in runs if not run.exclusive]
    tracker = Progress(pending, estimates or {})
    done = failed = 0

    def report(run: Run, outcome: Callable[[], tuple[str, float]]) -> bool:
        try:
            summary, seconds = outcome()
        except (DatasetError, ValueError) as error:  # a message that says what to do: no traceback
            log(f"FAILED {run.label} ({', '.join(run.chapters)}): {error}")
            return False
        except Exception as error:  # report and go on: the other runs are still worth having
            log(f"FAILED {run.label} ({', '.join(run.chapters)}): {error!r}")
            traceback.print_exception(error, file=sys.stderr)
            return False
        log(f"[{time.perf_counter() - started:7.0f} s] {run.label}: {summary} ({seconds:.0f} s)")
        return True

    def open_window() -> bool:
        return deadline is None or time.perf_counter() < deadline

    in_process = jobs == 1 and cluster is None
    while pending and (pending[0].exclusive or in_process) and open_window():
        if not pending[0].exclusive:
            single_thread()
        run = pending.pop(0)
        tracker.started(run)
        measured: list[float] = []
        succeeded = report(run, lambda: _timed(compute(run, profile, device, progress), measured))
        tracker.finished(run, measured[0] if measured else None)
        log(f"  {tracker.line(1)}")
        done, failed = done + succeeded, failed + (not succeeded)
    if pending and not in_process and open_window():
        with runner.connect(cluster, jobs, device, log) as client:
            done_there, failed_there, pending = runner.compute_on_cluster(
                client,
                pending,
                profile=profile,
                device=device,
                remote=cluster is not None,
                progress=tracker,
                report=report,
                open_window=open_window,
                log=log,
            )
        done, failed = done + done_there, failed + failed_there
    return done, failed, pending


def _timed(outcome: tuple[str, float], measured: list[float]) -> tuple[str, float]:
    measured.append(outcome[1])
    return outcome


class CacheNotWritableError(ValueError):
    """Runs are to be computed, but the result cache cannot store them."""


class TrainingFolderError(ValueError):
    """Runs are to be computed, but training cannot write its checkpoints (the message names the
    folder and the variable that moves it)."""


def run_plan(
    runs: Sequence[Run],
    *,
    profile: str,
    device: str = "auto",
    jobs: int = 1,
    cluster: str | None = None,
    dry_run: bool = False,
    stop_launching_after: float | None = None,
    progress: bool | None = None,
    log: Callable[[str], None] = print,
) -> int:
    """Say what ``runs`` hold (cached or to compute), then compute the missing ones unless
    ``dry_run`` (``jobs`` at a time, or on ``cluster``: :func:`execute`). The exit status: 0, or 1
    if a run failed. :class:`CacheNotWritableError` before any computation when there is one to
    make and the cache cannot store its result, :class:`TrainingFolderError` when training
    cannot write its checkpoints; :class:`ssa_book.runner.ClusterError` when the
    cluster cannot be reached."""
    device = resolve_device(device)
    read = {run.key: read_run(run, profile, device) for run in runs}
    cached = [read[run.key] is not None for run in runs]
    todo = [run for run, hit in zip(runs, cached) if not hit]
    where = (
        f" (on {cluster})"
        if cluster is not None and cluster not in BATCH_SYSTEMS
        else f" ({jobs} at a time)"
        if jobs > 1
        else ""
    )
    log(
        f"{len(runs)} runs at profile {profile}: {len(runs) - len(todo)} cached, {len(todo)} to compute"
        + (where if todo else "")
    )
    if dry_run:
        width = max((len(run.label) for run in runs), default=0)
        for run, hit in zip(runs, cached):
            log(f"  {'cached    ' if hit else 'to compute'}  {run.label:{width}}  {', '.join(run.chapters)}")
        return 0
    if not todo:
        return 0
    problem = cache_problem(profile)
    if problem is not None:  # found now, not after the first training whose result could not be stored
        raise CacheNotWritableError(problem)
    problem = training_folder_problem() if cluster is None else None  # a cluster's workers write in their own
    if problem is not None:
        raise TrainingFolderError(problem)
    remove_abandoned_temporaries()
    progress = jobs == 1 and cluster is None and sys.stderr.isatty() if progress is None else progress
    estimates = cost_estimates(runs, {key: entries for key, entries in read.items() if entries is not None})
    done, failed, left = execute(
        todo,
        profile=profile,
        device=device,
        jobs=jobs,
        cluster=cluster,
        progress=progress,
        stop_launching_after=stop_launching_after,
        log=log,
        estimates=estimates,
    )
    log(f"{done} runs computed, {failed} failed, {len(left)} not started")
    return 1 if failed else 0
