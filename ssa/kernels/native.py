"""C++ kernels for SSA's element-wise work on a CPU (``csrc/ssa_cpu.cpp``), built on first use:
the row kernels of the direct path and the tile kernels of the blockwise path.

``torch.utils.cpp_extension.load`` compiles the source once per machine (about a minute; the
build is cached in :func:`build_directory`, under ``$TORCH_EXTENSIONS_DIR`` or by default
``~/.cache/torch_extensions``) and later processes load the cached library. Where no compiler is
available, or with ``SSA_NATIVE=0``, :func:`cpu_kernels` returns ``None`` and both paths run the
same computation as PyTorch operations (the blockwise path through ``torch.compile``).

Processes that start at once build it once: they queue on an ``flock``, which the operating
system releases when its holder dies. PyTorch's own build lock is a file that a killed build
leaves behind, after which every later ``load`` waits on it forever; holding the ``flock``, we
know no build is running and remove such a file.
"""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import sys
import time
import warnings
from pathlib import Path

try:
    import fcntl
except ImportError:
    fcntl = None

__all__ = ["NATIVE_ENV", "native_enabled", "cpu_kernels", "build_directory"]

NATIVE_ENV = "SSA_NATIVE"
SOURCE = Path(__file__).parent / "csrc" / "ssa_cpu.cpp"
# IEEE arithmetic, the same on every CPU of an architecture: no -ffast-math (which lets GCC
# reorder sums and assume finite values, and so call vector exp/log whose accuracy is the
# library's) and no -march=native (whose instructions, FMA among them, differ from CPU to CPU).
# -ffp-contract=off forbids fusing a * b + c, which some targets would and others could not.
# On x86-64 the code is compiled for the baseline ISA (SSE2), which every x86-64 CPU runs, so
# an AVX2 and an AVX-512 machine execute the same instructions. The element-wise work is then
# scalar; the matrix products, where the time goes, stay in PyTorch's BLAS.
CFLAGS = ["-O3", "-fno-math-errno", "-ffp-contract=off"]
if platform.machine().lower() in {"x86_64", "amd64"}:
    CFLAGS += ["-march=x86-64", "-mtune=generic"]
LDFLAGS: list[str] = []
# A build takes about a minute; a process that waits longer for another's build runs the
# PyTorch operations rather than hang.
BUILD_WAIT_S = 600.0


def native_enabled() -> bool:
    """``$SSA_NATIVE`` (default on); ``0`` keeps the direct and blockwise paths in PyTorch operations."""
    return os.environ.get(NATIVE_ENV, "1").strip().lower() not in {"0", "false", "no"}


def build_directory() -> Path:
    """Where the library is built and cached: one folder per Python and torch version."""
    import torch
    from torch.utils.cpp_extension import get_default_build_root

    root = os.environ.get("TORCH_EXTENSIONS_DIR") or get_default_build_root()
    version = torch.__version__.replace("+", "_")
    return Path(root) / f"ssa_cpu-py{sys.version_info.major}{sys.version_info.minor}-torch{version}"


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


@functools.lru_cache(maxsize=1)
def _build():
    from torch.utils.cpp_extension import load

    try:
        directory = build_directory()
        with exclusive_build(directory):
            return load(name="ssa_cpu", sources=[str(SOURCE)], extra_cflags=CFLAGS, extra_ldflags=LDFLAGS,
                        build_directory=str(directory), verbose=False)
    except Exception as error:  # no compiler, no headers: the PyTorch operations still work
        first_line = (str(error).strip().splitlines() or [""])[0][:300]
        warnings.warn(f"ssa: the C++ kernels could not be built ({type(error).__name__}: {first_line}); "
                      f"SSA attention uses PyTorch operations instead", RuntimeWarning, stacklevel=3)
        return None


def cpu_kernels():
    """The compiled module (``forward``, ``backward``, ``tile_forward``, ``tile_backward``), or
    ``None`` when disabled or unbuildable."""
    return _build() if native_enabled() else None
