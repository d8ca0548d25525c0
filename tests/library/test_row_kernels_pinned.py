"""The direct path's C++ row kernels give the same bits as when its cached results were computed.

The in-context and retrieval results (over a thousand cached runs) come from the direct path,
whose element-wise steps are the row kernels of ``ssa/kernels/csrc/ssa_cpu.cpp``. A change to
the kernels' source, compiler flags or build must leave their machine code, hence their bits,
as they were: the digests below are of their outputs on seeded inputs, computed by the code
those results were computed with. The kernels are called directly (no matrix products), so
the digests depend only on the kernels and on the C library's ``exp`` and ``log``: they are
checked where they were recorded, x86-64 with glibc 2.36.
"""

import hashlib
import platform

import pytest
import torch

from ssa.kernels.native import cpu_kernels

RECORDED_ON = ("x86_64", ("glibc", "2.36"))

pytestmark = pytest.mark.skipif(
    (platform.machine(), platform.libc_ver()) != RECORDED_ON,
    reason=f"digests recorded on {RECORDED_ON[0]} with {' '.join(RECORDED_ON[1])}: other exp/log implementations round differently",
)

SHAPE = (2, 3, 7, 37)  # (B, H, Q, K): K not a multiple of any vector width


def masks():
    generator = torch.Generator().manual_seed(11)
    lengths = torch.tensor([37, 9])
    return {
        "none": None,
        "padding": (torch.arange(SHAPE[-1])[None, :] < lengths[:, None])[:, None, None, :].expand(SHAPE),  # strides 0
        "full": torch.rand(SHAPE, generator=generator) > 0.3,
    }


def row_kernel_outputs(dtype):
    """``{case: (weights, dL/dy, dL/dn per row)}`` of the row kernels on seeded inputs."""
    kernels = cpu_kernels()
    generator = torch.Generator().manual_seed(7)
    y = (4 * torch.randn(SHAPE, generator=generator, dtype=torch.float64)).to(dtype)
    n = torch.tensor([1.8, 0.6, 3.1], dtype=dtype)
    grad_weights = torch.randn(SHAPE, generator=generator, dtype=torch.float64).to(dtype)
    outputs = {}
    for mask_name, mask in masks().items():
        for causal, causal_offset in ((False, 0), (True, 30), (True, -2)):
            weights = kernels.forward(y, n, causal, causal_offset, mask)
            grad_y = grad_weights.clone()
            grad_n_rows = kernels.backward(grad_y, weights, y, n, causal, causal_offset, mask)
            outputs[f"{mask_name}, causal {causal} {causal_offset}"] = (weights, grad_y, grad_n_rows)
    return outputs


def digest(tensors) -> str:
    hasher = hashlib.sha256()
    for tensor in tensors:
        hasher.update(tensor.contiguous().numpy().tobytes())
    return hasher.hexdigest()[:16]


PINNED = {
    torch.float32: {
        "none, causal False 0": "99c7f0e058410621",
        "none, causal True 30": "3307cd6c287f39da",
        "none, causal True -2": "4ca28061177a79c3",
        "padding, causal False 0": "daefbc979dc70b0c",
        "padding, causal True 30": "b177f818d076b30b",
        "padding, causal True -2": "4ca28061177a79c3",
        "full, causal False 0": "3c6612b0e4cc831e",
        "full, causal True 30": "c3a68906dfde2f04",
        "full, causal True -2": "d8dc85760c0bd9ee",
    },
    torch.float64: {
        "none, causal False 0": "d9893f460c973135",
        "none, causal True 30": "8a5b038849867bba",
        "none, causal True -2": "fb542b53e6511554",
        "padding, causal False 0": "ac7851faad47d71d",
        "padding, causal True 30": "aff9b0bef30913a1",
        "padding, causal True -2": "fb542b53e6511554",
        "full, causal False 0": "0920591233e961e4",
        "full, causal True 30": "7ed6ccb0da40176e",
        "full, causal True -2": "020ae70a35b83ac5",
    },
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_row_kernels_give_the_recorded_bits(dtype):
    if cpu_kernels() is None:
        pytest.skip("the C++ kernels are not available (no compiler, or SSA_NATIVE=0)")
    got = {case: digest(tensors) for case, tensors in row_kernel_outputs(dtype).items()}
    assert got == PINNED[dtype]
