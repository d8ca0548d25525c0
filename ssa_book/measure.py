"""Measuring one callable: its median time under a shared machine's load, and its peak memory.

The benchmark (:mod:`ssa_book.bench`) and the scorers' cost (:mod:`ssa_book.alternatives.cost`)
measure with these, so that their ratios to softmax mean the same thing.

Peak memory. CUDA: ``torch.cuda.max_memory_allocated`` during the call minus the memory
allocated before it. CPU: there is no allocator peak counter, so the call runs once under
``torch.profiler`` with ``profile_memory=True``, which records every allocation and free of
the CPU allocator with the allocator's running total; the largest running total, less its
value before the call's first allocation, is the peak.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile
from torch.utils import benchmark


def interleaved_medians(
    functions: dict, min_run_time: float, threads: int, min_rounds: int = 3, max_rounds: int = 25
) -> dict:
    """Median seconds per call of each function, timed in interleaved rounds (one call of each
    per round, with ``torch.utils.benchmark``) so that every function sees the same load of a
    shared machine. Rounds continue until the fastest function has run ``min_run_time`` seconds
    in total (at least ``min_rounds``, at most ``max_rounds``). Returns name -> (median, calls)."""
    timers = {
        name: benchmark.Timer("function()", globals={"function": function}, num_threads=threads)
        for name, function in functions.items()
    }
    times = {name: [] for name in functions}
    while True:
        for name, timer in timers.items():
            times[name].append(timer.timeit(1).median)
        rounds = len(times[next(iter(times))])
        fastest_total = min(sum(samples) for samples in times.values())
        if rounds >= max_rounds or (rounds >= min_rounds and fastest_total >= min_run_time):
            return {name: (statistics.median(samples), len(samples)) for name, samples in times.items()}


@contextlib.contextmanager
def _native_stderr_silenced():
    """File descriptor 2 sent to the null device for the duration: it silences what C++ code
    writes there, which ``sys.stderr`` cannot catch."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def peak_memory_bytes(function, device: str, setup=None) -> int:
    """Peak bytes allocated during one call beyond what existed before it (see the module doc).
    ``setup`` runs first, outside the measurement (e.g. freeing the previous call's gradients,
    which would otherwise lower the peak)."""
    if setup is not None:
        setup()
    if device == "cuda":
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        function()
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - before
    profiler = profile(activities=[ProfilerActivity.CPU], profile_memory=True)
    with _native_stderr_silenced():  # the profiler's C++ side prints a line as it starts and as it stops
        profiler.__enter__()
    try:
        function()
    finally:
        with _native_stderr_silenced():
            profiler.__exit__(None, None, None)
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "trace.json"
        profiler.export_chrome_trace(str(trace))
        events = json.loads(trace.read_text())["traceEvents"]
    memory = sorted(
        (event for event in events if event.get("name") == "[memory]" and event["args"].get("Device Type") == 0),
        key=lambda event: event["ts"],
    )
    if not memory:
        return 0
    # The allocator's running total starts from whatever earlier profiled allocations left in it
    # (blocks freed while no profiler ran are never subtracted): measure from its value before
    # the first event.
    baseline = memory[0]["args"]["Total Allocated"] - memory[0]["args"]["Bytes"]
    return max(0, max(event["args"]["Total Allocated"] for event in memory) - baseline)
