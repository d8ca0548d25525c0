"""The numbers half of scripts/check_wheel.sh, run by two interpreters: the fresh environment that
installed the wheel and the checkout's editable .venv.

    python check_wheel_numbers.py compute OUT.pt [--expect-site-packages]
    python check_wheel_numbers.py compare A.pt B.pt

``compute`` first requires the C++ kernels to load (the row and scalar tile kernels, and the
vectorised tiles where this CPU has a variant): a failed build only warns and falls back to
PyTorch operations, whose numbers differ in their last bits, so the warning is an error here.
It then stores SSA attention's output and gradients (queries, keys, values, b, n) for fixed
seeded inputs on the direct path (short rows) and the blockwise path (long rows), as ``auto``
chooses them. ``compare`` exits non-zero unless every tensor of the two files is bit-identical.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import torch

import ssa
from ssa.kernels import choose_path, native

# (name, batch, heads, tokens, head dim, dtype, causal, the path auto must choose)
CASES = [
    ("direct float32 causal", 2, 3, 40, 16, torch.float32, True, "direct"),
    ("direct float64 padded", 2, 3, 40, 16, torch.float64, False, "direct"),
    ("blockwise float32 causal", 1, 2, 300, 16, torch.float32, True, "blockwise"),
    ("blockwise float32 padded", 2, 2, 200, 8, torch.float32, False, "blockwise"),
]


def require_native_kernels() -> None:
    """Raise unless the row kernels and (where this CPU has a variant) the vectorised tiles load."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # a fallback warns: here it fails
        if native.cpu_kernels() is None:
            raise SystemExit(f"the C++ kernels are off (${native.NATIVE_ENV}={native.native_enabled()})")
        variant = native.tile_variant()
        if variant is not None and native.vector_tile_kernels() is None:
            raise SystemExit(f"the {variant.capability} tile kernels did not load")
    print(
        f"kernels: row and scalar tiles loaded; vectorised tiles: {variant.capability if variant else 'none for this CPU'}"
    )


def padding_mask(batch: int, tokens: int) -> torch.Tensor:
    """Item i has its last 7 i keys hidden, as a padded batch has: (B, 1, 1, K)."""
    lengths = torch.tensor([tokens - 7 * item for item in range(batch)])
    return (torch.arange(tokens)[None, :] < lengths[:, None])[:, None, None, :]


def case_results(batch, heads, tokens, head_dim, dtype, causal, expected_path, seed) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    q, k, v = (
        torch.randn(batch, heads, tokens, head_dim, generator=generator, dtype=dtype).requires_grad_() for _ in range(3)
    )
    scorer = ssa.make_scorer("ssa").to(dtype)
    path = choose_path(q, k)
    if path != expected_path:
        raise SystemExit(f"auto chose {path} for {tuple(q.shape)}, expected {expected_path}")
    mask = None if causal else padding_mask(batch, tokens)
    output = ssa.attention(q, k, v, scorer, causal=causal, mask=mask)
    weights = torch.randn(output.shape, generator=generator, dtype=dtype)
    (output * weights).sum().backward()
    return {
        "output": output.detach(),
        "grad q": q.grad,
        "grad k": k.grad,
        "grad v": v.grad,
        "grad b": scorer.b_param.raw.grad,
        "grad n": scorer.n_param.raw.grad,
    }


def compute(out: Path, expect_site_packages: bool) -> None:
    location = Path(ssa.__file__).resolve()
    print(f"ssa from {location}")
    if expect_site_packages and "site-packages" not in location.parts:
        raise SystemExit(f"ssa was imported from {location}, not from the installed wheel")
    require_native_kernels()
    torch.save({name: case_results(*case, seed=seed) for seed, (name, *case) in enumerate(CASES)}, out)


def compare(first: Path, second: Path) -> None:
    a, b = torch.load(first), torch.load(second)
    differences = []
    for case, tensors in a.items():
        for name, tensor in tensors.items():
            other = b[case][name]
            if tensor.dtype != other.dtype or tensor.shape != other.shape or not torch.equal(tensor, other):
                gap = (tensor.double() - other.double()).abs().max().item() if tensor.shape == other.shape else "shape"
                differences.append(f"{case}, {name}: largest difference {gap}")
    if differences:
        raise SystemExit("not bit-identical:\n  " + "\n  ".join(differences))
    print(f"bit-identical: {sum(len(tensors) for tensors in a.values())} tensors of {len(a)} cases")


if __name__ == "__main__":
    command, *arguments = sys.argv[1:]
    if command == "compute":
        compute(Path(arguments[0]), "--expect-site-packages" in arguments[1:])
    elif command == "compare":
        compare(Path(arguments[0]), Path(arguments[1]))
    else:
        raise SystemExit(f"command must be compute or compare, got {command!r}")
