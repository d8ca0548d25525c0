"""Bitwise reproducibility: short runs trained again and again, each in a fresh process, under
settings that pin ATen's and MKL's kernels, and which of them give the same bits."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from ssa_book.profiles import check_profile
from ssa_book.results.cache import record_entry
from ssa_book.results.keys import canonical_json
from ssa_book.results.provenance import instruction_sets
from ssa_book.results.store import StoredEntry, read_entry
from ssa_book.reruns.comparison import (
    difference_text,
    fresh_folder,
    listed,
    machine_identity,
    number_differences,
    package_root,
    record_machine,
    regenerate_arguments,
    stored_records,
    throwaway_environment,
    timeless,
    training_command,
    written_entries,
)


BITWISE = "reruns/bitwise"  # the cache folder of the bitwise records
# Smoke results are never committed (.gitignore) and `make clean` deletes them, but the bitwise
# record is what the book shows: it lives beside the committed cpu cache, whatever the profile of
# the short runs it measured (stored in its config as ``runs_profile``).
BITWISE_RECORD_PROFILE = "cpu"


# ----------------------------------------------------------------------------------------------
# Bitwise reproducibility.


@dataclasses.dataclass(frozen=True)
class BitwiseSetting:
    """A way to start the training runs: extra environment variables, whether
    ``torch.use_deterministic_algorithms(True)`` is set, and the CPU flags it needs."""

    name: str
    description: str
    environment: Mapping[str, str] = dataclasses.field(default_factory=dict)
    deterministic: bool = False
    needs_flags: tuple[str, ...] = ()


DEFAULT_SETTING = "default"
ATEN_SCALAR = "aten scalar"
_PINNED = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}
BITWISE_SETTINGS: tuple[BitwiseSetting, ...] = (
    BitwiseSetting(DEFAULT_SETTING, "PyTorch's defaults: ATen's and MKL's vector code chosen for this CPU"),
    BitwiseSetting(ATEN_SCALAR, "ATen's scalar kernels, which any x86-64 CPU runs", {"ATEN_CPU_CAPABILITY": "default"}),
    BitwiseSetting("aten avx2", "ATen's AVX2 kernels", {"ATEN_CPU_CAPABILITY": "avx2"}, needs_flags=("avx2", "fma")),
    BitwiseSetting(
        "aten avx512",
        "ATen's AVX-512 kernels",
        {"ATEN_CPU_CAPABILITY": "avx512"},
        needs_flags=("avx512f", "avx512dq", "avx512bw", "avx512vl"),
    ),
    BitwiseSetting(
        "aten scalar + mkl compatible",
        "ATen's scalar kernels and MKL's conditional numerical reproducibility "
        "in its compatible mode (the same code path on every x86-64 CPU)",
        _PINNED,
    ),
    BitwiseSetting(
        "aten scalar + mkl compatible + deterministic",
        "as above, with torch.use_deterministic_algorithms(True), "
        "set by the command before it runs the reader's command in the same process (torch reads no "
        "environment variable for it)",
        _PINNED,
        deterministic=True,
    ),
)
# The short runs the bitwise check trains: SSA, seed 0, one of each chapter of the subset.
BITWISE_RUNS: tuple[tuple[str, str, int], ...] = (("icl_quantification", "ssa", 0), ("max_retrieval", "ssa", 0))


def weights_digest(path: Path) -> str:
    """SHA-256 of the bits of a training checkpoint's model and optimizer tensors (in key order)."""
    state = torch.load(path, map_location="cpu", weights_only=True)
    digest = hashlib.sha256()

    def feed(value: Any, where: str) -> None:
        if isinstance(value, torch.Tensor):
            digest.update(where.encode())
            digest.update(value.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
        elif isinstance(value, Mapping):
            for key in sorted(value, key=str):
                feed(value[key], f"{where}/{key}")
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                feed(item, f"{where}[{index}]")

    feed({"model": state["model"], "optimizer": state["optimizer"]}, "")
    return digest.hexdigest()


# What the bitwise check compares: the chapters round the numbers they store to 6 decimals, so the
# in-context run's trained weights are compared too (max retrieval keeps no checkpoint).
BITWISE_COMPARED = (
    "each run's stored entries (config and result, timings apart; the chapters store their numbers rounded "
    "to 6 decimals) and the in-context run's final checkpoint (its model and optimizer tensors), bit for bit"
)


def _train_once(
    setting: BitwiseSetting, chapter: str, scorer: str, seed: int, profile: str
) -> tuple[dict[str, Any], float]:
    """Train one run in a fresh process and folder under ``setting``: ({entry path: its config,
    timeless result, wall time and ATen's CPU capability; checkpoint path: its :func:`weights_digest`},
    seconds the process took)."""
    with fresh_folder() as work:
        environment = {**throwaway_environment(work), **setting.environment}
        started = time.perf_counter()
        done = subprocess.run(
            training_command(regenerate_arguments(chapter, profile, [scorer], [seed]), setting.deterministic),
            cwd=package_root(),
            env=environment,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            raise RuntimeError(
                f"{setting.name}: {chapter} failed (exit {done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-4000:]}"
            )
        entries: dict[str, Any] = {}
        for relative, path in written_entries(work, profile).items():
            stored = read_entry(path)
            capability = (stored.provenance.instruction_sets or {}).get("aten_cpu_capability", "")
            entries[relative] = {
                "config": stored.config,
                "result": timeless(stored.result),
                "wall_time_s": stored.provenance.wall_time_s,
                "aten_cpu_capability": capability,
            }
        checkpoints = work / "checkpoints"
        entries.update(
            {
                path.relative_to(work).as_posix(): {"weights": weights_digest(path)}
                for path in sorted(checkpoints.rglob("*.pt"))
            }
            if checkpoints.is_dir()
            else {}
        )
    if not entries:
        raise RuntimeError(f"{setting.name}: {chapter} wrote no entry")
    return entries, seconds


def _same_bits(first: Mapping[str, Any], second: Mapping[str, Any]) -> bool:
    """Whether two runs' entries hold the same configs and results, bit for bit (timings apart)."""

    def bits(entries):
        return canonical_json(
            {path: [entry.get("config"), entry.get("result"), entry.get("weights")] for path, entry in entries.items()}
        )

    return bits(first) == bits(second)


def _largest_difference(first: Mapping[str, Any], second: Mapping[str, Any]) -> float | None:
    """The largest difference between two runs' stored results (their weights are bits, not numbers here)."""
    found = number_differences(
        {path: entry["result"] for path, entry in first.items() if "result" in entry},
        {path: entry["result"] for path, entry in second.items() if "result" in entry},
    )
    return found["largest"]


def matmul_library() -> dict:
    """Which library does this machine's float32 matrix products: torch's build (BLAS_INFO) and
    the calls a small linear layer's forward and backward make, counted from MKL's and oneDNN's
    verbose output in a fresh process (with and without ``MKL_CBWR=COMPATIBLE``)."""
    probe = (
        "import torch; torch.manual_seed(0); layer = torch.nn.Linear(64, 64); "
        "x = torch.randn(8, 16, 64, requires_grad=True); layer(x).sum().backward(); "
        "(torch.randn(4, 2, 16, 8) @ torch.randn(4, 2, 8, 16)).sum()"
    )
    build = torch.__config__.show()
    blas = next(
        (part.split("=", 1)[1] for part in build.replace(",", " ").split() if part.startswith("BLAS_INFO=")), "unknown"
    )
    found = {"blas": blas}
    for mode, extra in (("default", {}), ("MKL_CBWR=COMPATIBLE", {"MKL_CBWR": "COMPATIBLE"})):
        environment = {**os.environ, "MKL_VERBOSE": "1", "ONEDNN_VERBOSE": "1", "OMP_NUM_THREADS": "1", **extra}
        lines = subprocess.run(
            [sys.executable, "-c", probe], env=environment, capture_output=True, text=True, check=True
        ).stdout.splitlines()
        calls = [line for line in lines if line.startswith("MKL_VERBOSE S")]
        found[mode] = {
            "mkl_sgemm_calls": len(calls),
            "onednn_calls": sum(line.startswith("onednn_verbose,") for line in lines),
            "mkl_cnr": sorted(
                {part.split(":", 1)[1] for line in calls for part in line.split() if part.startswith("CNR:")}
            ),
        }
    return found


def _cpu_flags() -> set[str]:

    return set((instruction_sets("cpu") or {}).get("flags", []))


def bitwise(
    profile: str = "smoke",
    *,
    repeats: int = 2,
    settings: Sequence[BitwiseSetting] = BITWISE_SETTINGS,
    runs: Sequence[tuple[str, str, int]] = BITWISE_RUNS,
    results_dir: str | Path | None = None,
    log: Callable[[str], None] = print,
):
    """Train each of ``runs`` at ``profile`` ``repeats`` times under each of ``settings``, each
    time in a fresh process and folder, and store which settings give the same bits as the
    default and as ATen's scalar kernels, with their times, as this machine's bitwise record
    (under :data:`BITWISE_RECORD_PROFILE`; the stored entry). A setting that needs a vector unit
    this CPU lacks is skipped, saying so. One untimed run first builds the C++ kernels."""

    check_profile(profile)
    if not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be an int >= 1; got {repeats!r}")
    names = [setting.name for setting in settings]
    if DEFAULT_SETTING not in names or ATEN_SCALAR not in names:
        raise ValueError(f"settings must include {DEFAULT_SETTING!r} and {ATEN_SCALAR!r}, the references")
    flags = _cpu_flags()
    machine = machine_identity()

    def compute() -> dict:
        load_before = os.getloadavg()
        log("warming up (builds the C++ kernels if needed)")
        for chapter, scorer, seed in runs:
            _train_once(settings[names.index(DEFAULT_SETTING)], chapter, scorer, seed, profile)
        measured: dict[str, list[dict[str, Any]]] = {}
        seconds: dict[str, list[float]] = {}
        training: dict[str, list[float]] = {}
        runnable = [setting for setting in settings if set(setting.needs_flags) <= flags]
        for repeat in range(repeats):  # settings interleaved, so that a change of load falls on all of them
            for setting in runnable:
                entries, total = {}, 0.0
                for chapter, scorer, seed in runs:
                    found, spent = _train_once(setting, chapter, scorer, seed, profile)
                    entries.update(found)
                    total += spent
                measured.setdefault(setting.name, []).append(entries)
                seconds.setdefault(setting.name, []).append(total)
                training.setdefault(setting.name, []).append(
                    sum(entry["wall_time_s"] for entry in entries.values() if "wall_time_s" in entry)
                )
                log(f"repeat {repeat + 1}/{repeats}, {setting.name}: {total:.1f} s")
        default, scalar = measured[DEFAULT_SETTING][0], measured[ATEN_SCALAR][0]
        rows = []
        for setting in settings:
            row = {
                "setting": setting.name,
                "description": setting.description,
                "environment": dict(setting.environment),
                "deterministic": setting.deterministic,
            }
            if setting.name not in measured:
                missing = sorted(set(setting.needs_flags) - flags)
                rows.append({**row, "skipped": f"this CPU lacks {', '.join(missing)}"})
                continue
            found = measured[setting.name]
            capabilities = sorted(
                {
                    entry["aten_cpu_capability"]
                    for entries in found
                    for entry in entries.values()
                    if "aten_cpu_capability" in entry
                }
            )
            rows.append(
                {
                    **row,
                    "skipped": None,
                    "aten_cpu_capability": capabilities,
                    "repeats_identical": all(_same_bits(found[0], other) for other in found[1:])
                    if len(found) > 1
                    else None,
                    "same_bits_as_default": _same_bits(found[0], default),
                    "same_bits_as_aten_scalar": _same_bits(found[0], scalar),
                    "largest_difference_from_default": _largest_difference(default, found[0]),
                    "wall_time_s": round(statistics.mean(seconds[setting.name]), 3),
                    "entry_wall_time_s": round(statistics.mean(training[setting.name]), 3),
                }
            )
        load_after = os.getloadavg()
        cpus = os.cpu_count() or 1
        loaded = max(load_before[0], load_after[0]) > 0.5
        return {
            "runs_profile": profile,
            "repeats": repeats,
            "compared": BITWISE_COMPARED,
            "runs": [{"chapter": chapter, "scorer": scorer, "seed": seed} for chapter, scorer, seed in runs],
            "commands": [
                " ".join(["python -m ssa_book", *regenerate_arguments(chapter, profile, [scorer], [seed])])
                for chapter, scorer, seed in runs
            ],
            "settings": rows,
            "matmul": matmul_library(),
            "load_average": {"before": round(load_before[0], 2), "after": round(load_after[0], 2), "cpus": cpus},
            "timing_note": (
                f"timed on a loaded machine (load average {max(load_before[0], load_after[0]):.1f} on {cpus} "
                "CPUs, other jobs running): the times compare the settings with each other, measured "
                "interleaved, not with other machines"
                if loaded
                else "timed on an idle machine"
            ),
        }

    return record_entry(
        BITWISE,
        {"machine": machine, "runs_profile": profile},
        compute,
        profile=BITWISE_RECORD_PROFILE,
        results_dir=results_dir,
        device="cpu",
    )


def bitwise_records(results_dir: str | Path | None = None) -> list[StoredEntry]:
    """Every machine's bitwise record (the stored entries)."""
    return stored_records(BITWISE_RECORD_PROFILE, BITWISE, results_dir)


def _yes_no(value: bool | None) -> str:
    return "—" if value is None else "yes" if value else "no"


def bitwise_table(results_dir: str | Path | None = None):
    """One row per machine x setting of the bitwise records: the environment it sets, whether its
    repeats gave the same bits, whether it gave the default's and ATen's scalar kernels' bits,
    the largest difference from the default, and the time per pair of runs (and against the
    default's). An empty frame (with these columns) when there is no record."""
    import pandas as pd

    columns = [
        "machine",
        "runs",
        "setting",
        "environment",
        "repeats: same bits",
        "same bits as default",
        "same bits as ATen scalar",
        "largest absolute difference from default",
        "seconds per pair of runs",
        "× default's time",
    ]
    rows = []
    for record in bitwise_records(results_dir):
        result = record.result
        timed = {row["setting"]: row.get("wall_time_s") for row in result["settings"]}
        for row in result["settings"]:
            environment = " ".join(f"{name}={value}" for name, value in row["environment"].items())
            environment += " + use_deterministic_algorithms" if row["deterministic"] else ""
            common = {
                "machine": record_machine(record),
                "runs": f"{result['runs_profile']}, {result['repeats']} × each",
                "setting": row["setting"],
                "environment": environment.strip() or "(none)",
            }
            if row["skipped"]:
                rows.append(
                    {
                        **common,
                        "repeats: same bits": f"skipped: {row['skipped']}",
                        "same bits as default": "—",
                        "same bits as ATen scalar": "—",
                        "largest absolute difference from default": "—",
                        "seconds per pair of runs": "—",
                        "× default's time": "—",
                    }
                )
                continue
            rows.append(
                {
                    **common,
                    "repeats: same bits": _yes_no(row["repeats_identical"]),
                    "same bits as default": _yes_no(row["same_bits_as_default"]),
                    "same bits as ATen scalar": _yes_no(row["same_bits_as_aten_scalar"]),
                    "largest absolute difference from default": difference_text(row["largest_difference_from_default"]),
                    "seconds per pair of runs": f"{row['wall_time_s']:.1f}",
                    "× default's time": f"{row['wall_time_s'] / timed[DEFAULT_SETTING]:.2f}",
                }
            )
    return pd.DataFrame(rows, columns=columns)


def bitwise_summary(results_dir: str | Path | None = None) -> str:
    """One sentence per machine's record, read from it: whether each setting repeated its bits,
    which gave the default's bits and which ATen's scalar kernels', and what the pinned setting
    (ATen's scalar kernels and MKL's compatible mode) costs."""
    records = bitwise_records(results_dir)
    if not records:
        return "No machine has measured bitwise reproducibility yet."
    sentences = []
    for record in records:
        result = record.result
        measured = [row for row in result["settings"] if not row["skipped"]]
        if result["repeats"] == 1:
            parts = ["each setting ran once"]
        elif all(row["repeats_identical"] for row in measured):
            parts = ["every setting gave the same bits each time"]
        else:
            parts = [
                f"{listed([row['setting'] for row in measured if not row['repeats_identical']])} gave other bits from one "
                "repeat to the next"
            ]
        others = [row for row in measured if row["setting"] != DEFAULT_SETTING]
        same = [row["setting"] for row in others if row["same_bits_as_default"]]
        differ = [row for row in others if not row["same_bits_as_default"]]
        clause = f"{listed(same) or 'no other setting'} gave the default's bits"
        if differ:
            largest = max((row["largest_difference_from_default"] or 0.0 for row in differ), default=0.0)
            clause += (
                f", {listed([row['setting'] for row in differ])} did not (their stored numbers differ from the default's by "
                f"up to {largest:.3g})"
            )
        parts.append(clause)
        scalar = [
            row["setting"] for row in measured if row["setting"] != ATEN_SCALAR and row["same_bits_as_aten_scalar"]
        ]
        parts.append(f"{listed(scalar) or 'no other setting'} gave the bits of ATen's scalar kernels")
        timed = {row["setting"]: row["wall_time_s"] for row in measured}
        pinned = next(
            (row["setting"] for row in measured if dict(row["environment"]) == _PINNED and not row["deterministic"]),
            None,
        )
        if pinned:
            parts.append(f"{pinned} took {timed[pinned] / timed[DEFAULT_SETTING]:.2f} × the default's time")
        sentences.append(
            f"On {record_machine(record)} ({result['runs_profile']} runs, {result['repeats']} × each, each in a fresh "
            f"process), {'; '.join(parts)} ({result['timing_note']})."
        )
    return " ".join(sentences)
