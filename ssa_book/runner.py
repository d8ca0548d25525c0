"""How ``regenerate`` computes runs on more than one process or machine: Dask distributed.

* ``--jobs N`` (N > 1): a :class:`distributed.LocalCluster` of N worker processes on this machine,
  one thread each (nothing to set up);
* ``--cluster tcp://HOST:PORT``: a running scheduler (``dask scheduler``, with workers started as
  ``dask worker tcp://HOST:PORT --nthreads 1`` on any machines);
* ``--cluster slurm`` (or another batch system of :data:`BATCH_SYSTEMS`): ``--jobs N`` batch jobs of
  one worker each, submitted by dask-jobqueue (the ``[cluster]`` extra) with the settings of
  ``ssa_book/jobqueue.yaml``, which the user's own Dask configuration overrides.

A worker computes a run with one torch thread, as ``--jobs 1`` does in the command's own process,
so its numbers are the same bit for bit, and writes nothing to the cache: it keeps the run's
entries in memory (:func:`ssa_book.results.store.captured_writes`) and returns them
(:class:`Record`); the command checks each one as ``results validate`` would and writes it
atomically (:func:`ssa_book.results.store.store_entry_text`). Workers need no shared file system (each
needs the package and, for the chapters that read them, the datasets), and no entry is ever half
written. A worker lost mid-run has its run started again on another one, up to
:data:`ALLOWED_FAILURES` times, then the run is reported failed. An interrupted command leaves the
cache valid: a run counts once its entries are written, and the next command computes the rest.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.resources
import importlib.util
import logging
import math
import re
import socket
import sys
import time
import uuid
import warnings
from pathlib import Path
from typing import Callable, Iterator, Mapping, Sequence

from ssa_book import paths
from ssa_book.chapters import Run
from ssa_book.studies import CHAPTERS, KINDS
from ssa_book.results.cache import entries_read
from ssa_book.results.provenance import total_wall_time
from ssa_book.results.store import StoredEntry, captured_writes, store_entry_text
from ssa_book.training import single_thread

# The batch systems of dask-jobqueue --cluster may name, and its class for each.
BATCH_SYSTEMS = {
    "slurm": "SLURMCluster",
    "pbs": "PBSCluster",
    "sge": "SGECluster",
    "lsf": "LSFCluster",
    "htcondor": "HTCondorCluster",
    "moab": "MoabCluster",
    "oar": "OARCluster",
}
# How many times a run whose worker was lost is started again before it is reported failed
# (Dask's distributed.scheduler.allowed-failures, for the schedulers this command starts; a scheduler
# started by `dask scheduler` uses its own setting, 3 by default).
ALLOWED_FAILURES = 2
JOBQUEUE_CONFIG = "jobqueue.yaml"  # in the package: the batch systems' settings
EXTRA = "pip install 'ssa-book[cluster]'"
_ADDRESS = re.compile(r"(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})")


def cluster_problem(text: str) -> str | None:
    """Why ``text`` names no cluster this command can use (``None``: it names one): the
    ``tcp://HOST:PORT`` (or ``tls://``) of a running scheduler, or a batch system of
    :data:`BATCH_SYSTEMS` (only with dask-jobqueue installed)."""
    if text in BATCH_SYSTEMS:
        if importlib.util.find_spec("dask_jobqueue") is None:
            return f"{text} needs dask-jobqueue, which is not installed: {EXTRA}"
        return None
    match = _ADDRESS.fullmatch(text)
    if match is None or not 0 < int(match[3]) < 65536:
        return f"expected a scheduler's tcp://HOST:PORT or a batch system ({', '.join(BATCH_SYSTEMS)}); got {text!r}"
    return None


class ClusterError(ValueError):
    """The cluster asked for cannot be reached or started."""


def scheduler_problem(address: str, timeout_s: float = 10) -> str | None:
    """Why nothing listens at a scheduler's ``tcp://HOST:PORT`` (``None``: something does), found
    before any run starts."""
    match = _ADDRESS.fullmatch(address)
    host = match[2].strip("[]")
    try:
        socket.create_connection((host, int(match[3])), timeout=timeout_s).close()
    except OSError as error:
        return f"no Dask scheduler answers at {address} ({error.strerror or error}); start one with `dask scheduler`"
    return None


# ----------------------------------------------------------------------------------------------
# On a worker.


@dataclasses.dataclass(frozen=True)
class Record:
    """What a worker returns for one run: the line about its result, its seconds, the text of
    every entry it wrote or read (by place in the cache, ``PROFILE/EXPERIMENT/KEY.json``) and the
    worker that computed it."""

    summary: str
    seconds: float
    entries: Mapping[str, str]
    worker: str


def compute_record(run: Run, profile: str, device: str) -> Record:
    """Compute ``run`` on this worker, writing nothing to its cache: the :class:`Record` of it."""
    from distributed import get_worker

    worker = get_worker()
    if worker.state.nthreads != 1:  # torch's threads and random state belong to the process: one run at a time
        raise ValueError(
            f"worker {worker.address} runs {worker.state.nthreads} threads; start each worker with "
            "--nthreads 1 (one run at a time, one torch thread, as --jobs 1 computes it)"
        )
    single_thread()
    started = time.perf_counter()
    with captured_writes() as written, entries_read() as read:
        summary = KINDS[run.kind].compute(profile, device, False, *run.arguments)
    seconds = time.perf_counter() - started
    return Record(summary, seconds, _entry_texts(written, read), worker.address)


def _entry_texts(written: Mapping[Path, str], read: Sequence[StoredEntry]) -> dict[str, str]:
    """Place in the cache -> text of every entry written (kept in memory) or read, once each."""
    root = paths.results_dir()
    texts = {}
    for path in [*written, *(entry.path for entry in read)]:
        relative = Path(path).relative_to(root).as_posix()
        if relative not in texts:
            texts[relative] = written[path] if path in written else Path(path).read_text(encoding="utf-8")
    return texts


# ----------------------------------------------------------------------------------------------
# Estimates of the time left.


def cost_group(run: Run) -> tuple:
    """Runs whose costs are alike: the same kind, in the same part of its chapter."""
    chapter = CHAPTERS.get(run.chapters[0]) if run.chapters else None
    return run.kind, chapter.part(run) if chapter is not None else ""


def cost_estimates(runs: Sequence[Run], cached: Mapping[tuple, Sequence[StoredEntry]]) -> dict[tuple, float]:
    """Run key -> its estimated seconds: the mean compute time (from the provenance) of the cached
    runs of its :func:`cost_group` (``cached``: run key -> the entries it read); runs of a group
    with none cached have none."""
    totals: dict[tuple, list[float]] = {}
    for run in runs:
        if run.key in cached:
            totals.setdefault(cost_group(run), []).append(
                total_wall_time([entry.provenance for entry in cached[run.key]]) or 0.0
            )
    means = {group: sum(times) / len(times) for group, times in totals.items()}
    return {run.key: means[cost_group(run)] for run in runs if cost_group(run) in means}


class Progress:
    """Runs done, running and left, and the time left: the estimated seconds of the runs left
    and of what the running ones have still to do, spread over ``workers``. A run with no
    estimate counts as the mean of the runs that have one, the runs of its group computed so far
    first."""

    def __init__(self, runs: Sequence[Run], estimates: Mapping[tuple, float]):
        self.estimates = dict(estimates)
        self.left = len(runs)
        self.done = 0
        self.running: dict[tuple, tuple[Run, float]] = {}
        self.pending = {run.key: run for run in runs}
        self.measured: dict[tuple, list[float]] = {}

    def started(self, run: Run) -> None:
        self.running[run.key] = (run, time.perf_counter())
        self.pending.pop(run.key, None)

    def finished(self, run: Run, seconds: float | None) -> None:
        self.running.pop(run.key, None)
        self.pending.pop(run.key, None)
        self.done += 1
        if seconds is not None:
            self.measured.setdefault(cost_group(run), []).append(seconds)

    def _estimate(self, run: Run) -> float | None:
        measured = self.measured.get(cost_group(run))
        if measured:
            return sum(measured) / len(measured)
        if run.key in self.estimates:
            return self.estimates[run.key]
        known = [value for values in self.measured.values() for value in values] or list(self.estimates.values())
        return sum(known) / len(known) if known else None

    def seconds_left(self, workers: int) -> float | None:
        work = 0.0
        now = time.perf_counter()
        for run, since in self.running.values():
            estimate = self._estimate(run)
            if estimate is None:
                return None
            work += max(estimate - (now - since), 0.0)
        for run in self.pending.values():
            estimate = self._estimate(run)
            if estimate is None:
                return None
            work += estimate
        return work / max(workers, 1)

    def line(self, workers: int) -> str:
        left = self.seconds_left(workers)
        when = (
            "time left unknown until a run of each kind is done"
            if left is None
            else f"about {_duration(left)} left"
            if self.running or self.pending
            else ""
        )
        counts = f"{self.done} done, {len(self.running)} running, {len(self.pending)} left"
        return f"{counts}, {when}" if when else counts


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{math.ceil(seconds)} s"
    if seconds < 90 * 60:
        return f"{math.ceil(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


# ----------------------------------------------------------------------------------------------
# The client: this command.


@contextlib.contextmanager
def connect(cluster: str | None, jobs: int, device: str, log: Callable[[str], None]) -> Iterator["distributed.Client"]:  # noqa: F821
    """A Dask client of the cluster: ``cluster`` a scheduler's address, a batch system, or
    ``None`` for a local cluster of ``jobs`` worker processes of one thread each. The dashboard's
    address goes to ``log``. :class:`ClusterError` when the cluster cannot be reached or started."""
    import dask
    import distributed

    with dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES}), contextlib.ExitStack() as stack:
        if cluster is None:
            with (
                warnings.catch_warnings()
            ):  # "Port 8787 is already in use": another dashboard's; ours takes another port
                warnings.filterwarnings("ignore", message=".*[Pp]ort.*already in use")
                local = stack.enter_context(
                    distributed.LocalCluster(  # its own warnings (a worker slow to close) silenced
                        n_workers=jobs,
                        threads_per_worker=1,
                        processes=True,
                        memory_limit=0,
                        dashboard_address=":8787",
                        silence_logs=logging.ERROR,
                    )
                )
            client = stack.enter_context(distributed.Client(local))
            log(
                f"Dask: a local cluster of {jobs} worker processes, one torch thread each; dashboard {_dashboard(client)}"
            )
        elif cluster in BATCH_SYSTEMS:
            batch = stack.enter_context(batch_cluster(cluster, device))
            batch.scale(jobs=jobs)
            client = stack.enter_context(distributed.Client(batch))
            log(
                f"Dask: {jobs} {cluster} jobs of one worker each asked for ({batch.scheduler_address}); "
                f"dashboard {_dashboard(client)}"
            )
        else:
            try:
                client = stack.enter_context(distributed.Client(cluster, timeout=20))
            except (OSError, TimeoutError) as error:
                raise ClusterError(f"no Dask scheduler answers at {cluster} ({error})") from None
            workers = client.scheduler_info().get("workers", {})
            log(f"Dask: the scheduler at {cluster}, {len(workers)} workers now; dashboard {_dashboard(client)}")
            if device == "cuda" and not any(info.get("resources", {}).get("GPU") for info in workers.values()):
                log("  runs on cuda wait for workers started with --resources GPU=1")
        yield client


def _dashboard(client) -> str:
    """The address of the scheduler's dashboard, or why there is none."""
    if "dashboard" not in client.scheduler_info().get("services", {}):
        return "none (the scheduler serves no dashboard)"
    return client.dashboard_link


def batch_cluster(system: str, device: str):
    """A dask-jobqueue cluster of ``system`` with the settings of ``ssa_book/jobqueue.yaml`` (the
    user's own Dask configuration overriding them); a run on cuda asks each job for a GPU."""
    import dask
    import dask_jobqueue
    import yaml

    settings = yaml.safe_load(
        importlib.resources.files("ssa_book").joinpath(JOBQUEUE_CONFIG).read_text(encoding="utf-8")
    )
    dask.config.update_defaults({"jobqueue": settings["jobqueue"]})
    options = {}
    if device == "cuda":
        options["worker_extra_args"] = [
            *dask.config.get(f"jobqueue.{system}.worker-extra-args", []),
            "--resources",
            "GPU=1",
        ]
        if settings["gpu-directives"][system]:
            options["job_extra_directives"] = [
                *dask.config.get(f"jobqueue.{system}.job-extra-directives", []),
                *settings["gpu-directives"][system],
            ]
    return getattr(dask_jobqueue, BATCH_SYSTEMS[system])(**options)


def compute_on_cluster(
    client,
    runs: Sequence[Run],
    *,
    profile: str,
    device: str,
    remote: bool,
    progress: Progress,
    report: Callable[[Run, Callable[[], tuple[str, float]]], bool],
    open_window: Callable[[], bool],
    log: Callable[[str], None],
) -> tuple[int, int, list[Run]]:
    """Compute ``runs`` on ``client``'s workers, as many at a time as they have threads, in plan
    order, until ``open_window()`` says no more may start; the entries each returns written here.
    ``report(run, outcome)`` says how each went. Returns (done, failed, not started)."""
    from distributed import KilledWorker

    pending, running, done, failed = list(runs), {}, 0, 0
    resources = {"GPU": 1} if remote and device == "cuda" else None
    live = sys.stderr.isatty()

    def outcome(future, run):
        def written() -> tuple[str, float]:
            try:
                record = future.result()
            except KilledWorker as error:  # the scheduler's allowed-failures reached
                raise RuntimeError(f"its worker was lost each time it was started, not tried again ({error})") from None
            for relative, text in record.entries.items():
                store_entry_text(relative, text)
            progress.finished(run, record.seconds)
            return f"{record.summary}; on {record.worker}", record.seconds

        return written

    try:
        while pending or running:
            workers = sum(client.nthreads().values())
            while pending and len(running) < max(workers, 1) and open_window():
                run = pending.pop(0)
                key = f"{run.kind}-{'-'.join(map(str, run.arguments))}-{uuid.uuid4().hex[:8]}"
                running[
                    client.submit(compute_record, run, profile, device, key=key, pure=False, resources=resources)
                ] = run
                progress.started(run)
            if not running:
                break
            finished = [future for future in running if future.done()]
            if not finished:
                if live:
                    print(f"\r{progress.line(workers)}\033[K", end="", file=sys.stderr, flush=True)
                time.sleep(0.2)
                continue
            for future in finished:
                run = running.pop(future)
                if live:
                    print("\r\033[K", end="", file=sys.stderr, flush=True)
                succeeded = report(run, outcome(future, run))
                if not succeeded:
                    progress.finished(run, None)
                log(f"  {progress.line(workers)}")
                done, failed = done + succeeded, failed + (not succeeded)
    except KeyboardInterrupt:
        client.cancel(list(running))
        log(
            f"interrupted: {done} runs computed and stored; the {len(running)} running are abandoned "
            "(nothing of theirs was written); the same command computes what is missing"
        )
        raise
    return done, failed, pending
