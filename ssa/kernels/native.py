"""C++ kernels for SSA's element-wise work on a CPU, built on first use: the row kernels of the
direct path and the scalar tile kernels of the blockwise path (``csrc/ssa_cpu.cpp``), and the
blockwise path's float32 tile kernels vectorised for the CPU's instruction set
(``csrc/ssa_cpu_vec.cpp``).

``torch.utils.cpp_extension.load`` compiles each source once per machine (about a minute; the
build is cached in :func:`build_directory`, under ``$TORCH_EXTENSIONS_DIR`` or by default
``~/.cache/torch_extensions``) and later processes load the cached library. Where no compiler is
available, or with ``SSA_NATIVE=0``, :func:`cpu_kernels` returns ``None`` and both paths run the
same computation as PyTorch operations (the blockwise path through ``torch.compile``).

The vectorised tiles are compiled once per instruction set (:data:`TILE_VARIANTS`: AVX2 with
FMA, AVX-512) and :func:`vector_tile_kernels` loads the one that PyTorch's CPU capability names
(``torch.backends.cpu.get_cpu_capability()``, which honours ``$ATEN_CPU_CAPABILITY``), once the
CPU's flags confirm it executes it: a library compiled for instructions the CPU lacks dies with
SIGILL on import. With the capability ``DEFAULT`` (or another architecture's), for float64, or
when the build fails, the blockwise path keeps the scalar tiles.

Processes that start at once build each library once: they queue on an ``flock``, which the
operating system releases when its holder dies. PyTorch's own build lock is a file that a killed
build leaves behind, after which every later ``load`` waits on it forever; holding the ``flock``,
we know no build is running and remove such a file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import platform
import shutil
import sys
import sysconfig
import time
import warnings
from pathlib import Path

import torch

try:
    import fcntl
except ImportError:
    fcntl = None

__all__ = [
    "NATIVE_ENV",
    "TILE_VARIANTS",
    "TileVariant",
    "native_enabled",
    "cpu_kernels",
    "vector_tile_kernels",
    "tile_variant",
    "build_directory",
    "missing_build_requirements",
]

NATIVE_ENV = "SSA_NATIVE"
CSRC = Path(__file__).parent / "csrc"
SOURCE = CSRC / "ssa_cpu.cpp"
VECTOR_SOURCE = CSRC / "ssa_cpu_vec.cpp"
HEADER = CSRC / "ssa_cpu.h"  # included by both sources: an install without it cannot build them
# IEEE arithmetic: no -ffast-math, which lets GCC reorder sums, assume finite values and
# replace exp/log by approximations of its own choosing. -ffp-contract=off forbids fusing
# a * b + c, which some targets would and others could not.
# ssa_cpu.cpp is compiled for the x86-64 baseline (SSE2), not -march=native: every x86-64 CPU
# runs the same instructions, so the direct path's numbers (which cached results depend on) are
# the same on an AVX2 and an AVX-512 machine. Its element-wise work is scalar; the matrix
# products, where most of the time goes, stay in PyTorch's BLAS.
CFLAGS = ["-O3", "-fno-math-errno", "-ffp-contract=off"]
if platform.machine().lower() in {"x86_64", "amd64"}:
    CFLAGS += ["-march=x86-64", "-mtune=generic"]
LDFLAGS: list[str] = []


@dataclasses.dataclass(frozen=True)
class TileVariant:
    """The vectorised tiles compiled for one instruction set: ``capability`` as
    ``torch.backends.cpu.get_cpu_capability()`` names it, the ``/proc/cpuinfo`` flags of the
    instructions it uses, and the compiler flags: the ``CPU_CAPABILITY`` macros make ATen's
    ``Vectorized<float>`` use that set and SLEEF's exp and log for it (within 1 ulp; resolved in
    ``libtorch_cpu`` when the module loads); ``-mfma`` as in ATen's own build of that set, while
    :data:`CFLAGS`' ``-ffp-contract=off`` keeps the kernels' own products and sums unfused."""

    capability: str
    cpu_flags: tuple[str, ...]
    isa_flags: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"ssa_cpu_{self.capability.lower()}"

    @property
    def cflags(self) -> list[str]:
        # CFLAGS' -march=x86-64 first: the ISA flags add to the baseline, and -mtune stays generic.
        return [*CFLAGS, *self.isa_flags, f"-DCPU_CAPABILITY_{self.capability}", f"-DCPU_CAPABILITY={self.capability}"]

    def runs_here(self) -> bool:
        """Whether this CPU executes the variant's instructions: every flag in ``/proc/cpuinfo``;
        where that cannot be read, PyTorch's capability (which checked the CPU) is trusted."""
        flags = cpu_flags()
        return flags is None or set(self.cpu_flags) <= flags


TILE_VARIANTS = {
    variant.capability: variant
    for variant in (
        TileVariant("AVX2", ("avx2", "fma"), ("-mavx2", "-mfma")),
        TileVariant(
            "AVX512",
            ("avx512f", "avx512bw", "avx512vl", "avx512dq", "fma"),
            ("-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mfma"),
        ),
    )
}

# A build takes about a minute; a process that waits longer for another's build runs the
# PyTorch operations rather than hang.
BUILD_WAIT_S = 600.0


def native_enabled() -> bool:
    """``$SSA_NATIVE`` (default on); ``0`` keeps the direct and blockwise paths in PyTorch operations."""
    return os.environ.get(NATIVE_ENV, "1").strip().lower() not in {"0", "false", "no"}


def build_directory(name: str = "ssa_cpu") -> Path:
    """Where library ``name`` is built and cached: one folder per library, Python and torch version."""
    from torch.utils.cpp_extension import get_default_build_root

    root = os.environ.get("TORCH_EXTENSIONS_DIR") or get_default_build_root()
    version = torch.__version__.replace("+", "_")
    return Path(root) / f"{name}-py{sys.version_info.major}{sys.version_info.minor}-torch{version}"


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str] | None:
    """The CPU's feature flags from ``/proc/cpuinfo`` (Linux), or ``None`` where it cannot be read;
    read once (every blockwise call asks)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


@contextlib.contextmanager
def exclusive_build(directory: Path, wait_s: float = BUILD_WAIT_S):
    """Hold the build lock of ``directory`` (an ``flock``, released by the operating system if
    this process dies); raise ``TimeoutError`` after ``wait_s`` seconds of waiting for another
    process's build. On entry, PyTorch's lock file in ``directory`` is stale and is removed."""
    directory.mkdir(parents=True, exist_ok=True)
    if fcntl is None:  # no flock (Windows): PyTorch's lock file alone
        yield
        return
    with open(directory / "ssa_build.lock", "a") as lock:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"another process has been building in {directory} for over {wait_s:.0f} s")
                time.sleep(0.2)
        try:
            (directory / "lock").unlink(missing_ok=True)
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _ninja_beside_python() -> Path | None:
    """The ``ninja`` that ``pip install ninja`` put beside this Python (a virtual environment's
    ``bin``), or ``None``. PyTorch runs ``ninja`` from ``$PATH``, which lacks that folder when the
    environment's Python runs without the environment being activated."""
    scripts = Path(sysconfig.get_path("scripts"))
    for name in ("ninja", "ninja.exe"):
        if (scripts / name).is_file():
            return scripts
    return None


def _find_ninja() -> bool:
    """Whether ``ninja`` can be run; puts the environment's own ``ninja`` on ``$PATH`` if needed."""
    if shutil.which("ninja") is not None:
        return True
    scripts = _ninja_beside_python()
    if scripts is None:
        return False
    os.environ["PATH"] = os.pathsep.join([str(scripts), os.environ.get("PATH", "")])
    return True


def missing_build_requirements(source: Path = SOURCE) -> list[str]:
    """What the build of ``source`` needs and this machine lacks, each with how to get it
    (empty when everything is there): the kernel sources, a C++ compiler, ``ninja``, Python's
    and PyTorch's headers."""
    from torch.utils.cpp_extension import get_cxx_compiler, include_paths

    missing = [
        f"the kernel source {path.name} (not in {CSRC}: reinstall ssa-book from a wheel or sdist that ships it)"
        for path in (source, HEADER)
        if not path.is_file()
    ]
    compiler = get_cxx_compiler()
    if shutil.which(compiler) is None:
        missing.append(
            f"a C++ compiler ({compiler!r}, or the one $CXX names; e.g. `apt install g++`, "
            "`xcode-select --install` on macOS, or `conda install gxx`)"
        )
    if not _find_ninja():
        missing.append("the ninja build tool (`pip install ninja` in this environment, or `apt install ninja-build`)")
    python_headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not python_headers.is_file():
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        missing.append(f"Python's headers ({python_headers}; e.g. `apt install python{version}-dev`)")
    if not any((Path(folder) / "torch" / "extension.h").is_file() for folder in include_paths()):
        missing.append("PyTorch's C++ headers (torch/extension.h; reinstall torch from an official wheel)")
    return missing


def _warn_unbuilt(name: str, source: Path, reason: str) -> None:
    """The one warning of a build that did not happen: what was missing, and what it costs."""
    if source == VECTOR_SOURCE:
        instead = (
            "the scalar tile kernels instead, whose float32 numbers differ in their last bits from the "
            "vectorised kernels'"
        )
    else:
        instead = (
            "PyTorch operations instead, whose numbers differ in their last bits from the C++ kernels' "
            "and so from the SSA book's cached results"
        )
    warnings.warn(
        f"ssa: the C++ kernels {name} cannot be built: {reason}. SSA attention on the CPU uses {instead} "
        f"(set {NATIVE_ENV}=0 to choose that without this warning)",
        RuntimeWarning,
        stacklevel=4,
    )


@functools.lru_cache(maxsize=None)
def _build(name: str, source: Path, cflags: tuple[str, ...]):
    from torch.utils.cpp_extension import load

    missing = missing_build_requirements(source)
    if missing:
        _warn_unbuilt(name, source, "this machine lacks " + "; ".join(missing))
        return None
    try:
        directory = build_directory(name)
        with exclusive_build(directory):
            return load(
                name=name,
                sources=[str(source)],
                extra_cflags=list(cflags),
                extra_ldflags=LDFLAGS,
                build_directory=str(directory),
                verbose=False,
            )
    except Exception as error:  # a failed compilation or link: the scalar kernels or PyTorch operations still work
        first_line = (str(error).strip().splitlines() or [""])[0][:300]
        _warn_unbuilt(name, source, f"{type(error).__name__}: {first_line}")
        return None


def cpu_kernels():
    """The compiled module (``forward``, ``backward``, ``tile_forward``, ``tile_backward``), or
    ``None`` when disabled or unbuildable."""
    return _build("ssa_cpu", SOURCE, tuple(CFLAGS)) if native_enabled() else None


def tile_variant() -> TileVariant | None:
    """The vectorised tiles for this CPU: the variant of PyTorch's CPU capability, if it has one
    and the CPU's flags confirm it; ``None`` (the scalar tiles) otherwise."""
    variant = TILE_VARIANTS.get(torch.backends.cpu.get_cpu_capability())
    return variant if variant is not None and variant.runs_here() else None


def load_tile_variant(variant: TileVariant):
    """The module of ``variant`` (``tile_forward``, ``tile_backward`` for float32 tensors;
    ``instruction_set``), built on first use, or ``None`` if unbuildable. Refuses a variant this
    CPU cannot execute: importing it would kill the process."""
    if not variant.runs_here():
        raise RuntimeError(
            f"ssa: this CPU lacks {', '.join(sorted(set(variant.cpu_flags) - cpu_flags()))}: "
            f"the {variant.capability} tile kernels cannot run here"
        )
    return _build(variant.name, VECTOR_SOURCE, tuple(variant.cflags))


def vector_tile_kernels():
    """The float32 tile kernels vectorised for this CPU (:func:`tile_variant`), or ``None`` when
    disabled, unbuildable or without a variant for this CPU."""
    if not native_enabled():
        return None
    variant = tile_variant()
    return None if variant is None else load_tile_variant(variant)
