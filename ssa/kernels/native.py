"""C++ kernels for SSA's element-wise work on a CPU (``csrc/ssa_cpu.cpp``), built on first use:
the row kernels of the direct path and the tile kernels of the blockwise path.

``torch.utils.cpp_extension.load`` compiles the source once per machine (about a minute; the
build is cached under ``$TORCH_EXTENSIONS_DIR``, by default ``~/.cache/torch_extensions``) and
later processes load the cached library. Where no compiler is available, or with
``SSA_NATIVE=0``, :func:`cpu_kernels` returns ``None`` and both paths run the same computation
as PyTorch operations (the blockwise path through ``torch.compile``).
"""

from __future__ import annotations

import functools
import os
import warnings
from pathlib import Path

__all__ = ["NATIVE_ENV", "native_enabled", "cpu_kernels"]

NATIVE_ENV = "SSA_NATIVE"
SOURCE = Path(__file__).parent / "csrc" / "ssa_cpu.cpp"
# -ffast-math lets GCC call glibc's vector log and exp (libmvec); -march=native is safe because
# the library is built on the machine that runs it.
CFLAGS = ["-O3", "-ffast-math", "-march=native"]
LDFLAGS = ["-lmvec"]


def native_enabled() -> bool:
    """``$SSA_NATIVE`` (default on); ``0`` keeps the direct and blockwise paths in PyTorch operations."""
    return os.environ.get(NATIVE_ENV, "1").strip().lower() not in {"0", "false", "no"}


@functools.lru_cache(maxsize=1)
def _build():
    from torch.utils.cpp_extension import load

    try:
        return load(name="ssa_cpu", sources=[str(SOURCE)], extra_cflags=CFLAGS, extra_ldflags=LDFLAGS, verbose=False)
    except Exception as error:  # no compiler, no headers: the PyTorch operations still work
        first_line = (str(error).strip().splitlines() or [""])[0][:300]
        warnings.warn(f"ssa: the C++ kernels could not be built ({type(error).__name__}: {first_line}); "
                      f"SSA attention uses PyTorch operations instead", RuntimeWarning, stacklevel=3)
        return None


def cpu_kernels():
    """The compiled module (``forward``, ``backward``, ``tile_forward``, ``tile_backward``), or
    ``None`` when disabled or unbuildable."""
    return _build() if native_enabled() else None
