"""What an entry records of how, where and when its result was computed (:class:`Provenance`), how
a new record is made (:func:`new_provenance`: the code state, the processor and its instruction
sets), and the questions asked of the records (:func:`total_wall_time`)."""

from __future__ import annotations

import dataclasses
import datetime
import platform
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

from ssa_book import paths
from ssa_book.results.errors import EntryError


def run_git(*arguments: str) -> str | None:
    root = paths.repository_root()
    if root is None:
        return None
    try:
        completed = subprocess.run(
            ["git", *arguments], cwd=root, capture_output=True, text=True, timeout=30, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return completed.stdout.strip()


@dataclasses.dataclass(frozen=True)
class CodeState:
    """The checkout's commit and whether its code differs from it (``None``: no git checkout)."""

    commit: str | None
    dirty: bool | None


def code_state() -> CodeState:
    """The commit and whether tracked files outside ``results/`` differ from it: the cache is
    what a run writes (a forced rerun replaces its old entry), not the code it ran."""
    status = run_git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)results")
    return CodeState(run_git("rev-parse", "HEAD"), None if status is None else bool(status))


def processor_name(device: str | None) -> str:
    """The model of the processor a computation ran on, as the system names it: the GPU's on
    ``cuda``, else the CPU's (Linux's ``/proc/cpuinfo``, else :func:`platform.processor`); ``""``
    when neither says. Wall times are comparable only between entries of one processor."""
    if device is not None and str(device).startswith("cuda"):
        import torch

        return torch.cuda.get_device_name(torch.device(device)) if torch.cuda.is_available() else ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor()


# The x86-64 instruction-set extensions that change which kernels PyTorch, MKL and oneDNN run, and
# so the rounding of a float32 computation: two CPUs that differ here may give other bits.
NUMERIC_CPU_FLAGS = (
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512dq",
    "avx512bw",
    "avx512vl",
    "avx512_vnni",
    "avx512_bf16",
    "avx512_fp16",
    "amx_tile",
    "amx_bf16",
)


def instruction_sets(device: str | None) -> dict | None:
    """What a CPU computation's rounding can depend on: the vector code PyTorch's ATen chose for
    this CPU (``torch.backends.cpu.get_cpu_capability``) and which of :data:`NUMERIC_CPU_FLAGS`
    the CPU has (Linux's ``/proc/cpuinfo``); ``None`` on a GPU."""
    if device is not None and not str(device).startswith("cpu"):
        return None
    import torch

    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("flags"):
                    flags = set(line.partition(":")[2].split())
                    break
    except OSError:
        pass
    return {
        "aten_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "flags": [flag for flag in NUMERIC_CPU_FLAGS if flag in flags],
    }


def new_provenance(config: dict, device: str | None, wall_time_s: float, before: CodeState) -> dict:
    """``before``: the code state when the computation started; the entry is clean only if the
    code was clean, at one commit, from start to end."""
    import torch  # the chapters use torch anyway; imported late to keep this module light
    import transformers

    after = code_state()
    dirty = (
        None
        if before.dirty is None or after.dirty is None
        else (before.dirty or after.dirty or before.commit != after.commit)
    )
    device = device if device is not None else config.get("device")
    return {
        "seed": config.get("seed"),
        "git_commit": before.commit,
        "git_dirty": dirty,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "device": device if device is not None else "unspecified",
        # platform.platform() names the OS and architecture, not the host.
        "platform": platform.platform(),
        "processor": processor_name(device),
        "instruction_sets": instruction_sets(device),
        "wall_time_s": round(wall_time_s, 3),
        "created_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


# The provenance fields of every entry, with the JSON types each may hold.
_PROVENANCE_FIELDS = {
    "seed": (int, type(None)),
    "git_commit": (str, type(None)),
    "git_dirty": (bool, type(None)),
    "torch": (str,),
    "transformers": (str,),
    "python": (str,),
    "device": (str,),
    "platform": (str,),
    "wall_time_s": (int, float),
    "created_utc": (str,),
}
# Fields only some entries hold: the processor and instruction sets are recorded by entries written
# since they were added, and key_version_added is a note on the entries moved under a versioned key.
_OPTIONAL_PROVENANCE_FIELDS = {"processor": (str,), "instruction_sets": (dict,), "key_version_added": (str,)}


@dataclasses.dataclass(frozen=True)
class Provenance:
    """How, where and when an entry's result was computed, as :func:`new_provenance` stores it: the
    config's seed, the commit and whether the tree was dirty (``None``: no git checkout), the
    library versions, the device, platform and processor, the instruction sets a CPU's rounding
    depends on (:func:`instruction_sets`), the wall time of the computation and when it ended.
    An optional field is ``None`` where the entry does not hold it."""

    seed: int | None
    git_commit: str | None
    git_dirty: bool | None
    torch: str
    transformers: str
    python: str
    device: str
    platform: str
    wall_time_s: float
    created_utc: str
    processor: str | None = None
    instruction_sets: dict | None = None
    key_version_added: str | None = None
    # The optional fields stored as null (a GPU entry's instruction_sets), so that to_dict() tells
    # them from the fields an older entry lacks, and gives back exactly the stored dict.
    stored_nulls: frozenset[str] = frozenset()

    @classmethod
    def from_dict(cls, stored: Mapping[str, Any]) -> "Provenance":
        """The provenance of an entry's stored ``provenance`` dict; :class:`EntryError` naming the
        field that is missing, unknown or of the wrong type."""
        if not isinstance(stored, Mapping):
            raise EntryError(f"provenance is a {type(stored).__name__}, not a dict")
        unknown = sorted(set(stored) - set(_PROVENANCE_FIELDS) - set(_OPTIONAL_PROVENANCE_FIELDS))
        if unknown:
            raise EntryError(f"provenance has unknown field {unknown[0]!r}")
        missing = [name for name in _PROVENANCE_FIELDS if name not in stored]
        if missing:
            raise EntryError(f"provenance lacks the field {missing[0]!r}")
        for name, types in {**_PROVENANCE_FIELDS, **_OPTIONAL_PROVENANCE_FIELDS}.items():
            value = stored.get(name)
            optional_null = name in _OPTIONAL_PROVENANCE_FIELDS and value is None
            if not optional_null and (not isinstance(value, types) or (isinstance(value, bool) and bool not in types)):
                raise EntryError(
                    f"provenance field {name!r} is {value!r}, not a {' or '.join(t.__name__ for t in types)}"
                )
        stored_nulls = frozenset(
            name for name in _OPTIONAL_PROVENANCE_FIELDS if name in stored and stored[name] is None
        )
        return cls(**stored, stored_nulls=stored_nulls)

    def to_dict(self) -> dict:
        """The ``provenance`` dict as stored in the entry."""
        stored = {name: getattr(self, name) for name in _PROVENANCE_FIELDS}
        stored.update(
            {
                name: getattr(self, name)
                for name in _OPTIONAL_PROVENANCE_FIELDS
                if getattr(self, name) is not None or name in self.stored_nulls
            }
        )
        return stored


def total_wall_time(provenances: Sequence[Provenance | None]) -> float | None:
    """The compute time in seconds of the entries of ``provenances``, summed (``None`` ones left out;
    ``None`` when none is left)."""
    times = [provenance.wall_time_s for provenance in provenances if provenance is not None]
    return float(sum(times)) if times else None
